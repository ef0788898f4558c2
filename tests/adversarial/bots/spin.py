"""Loops for ever in its move."""

from bigtwo import Bot


class Spin(Bot):
    def act(self, observation):
        while True:
            pass
