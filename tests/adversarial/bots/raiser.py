"""Raises in act()."""

from bigtwo import Bot


class Raiser(Bot):
    def act(self, observation):
        raise RuntimeError("boom")
