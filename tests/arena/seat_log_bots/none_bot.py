"""Forgets to return its move."""

from bigtwo import Bot


class Forgetful(Bot):
    def act(self, observation):
        observation.legal_moves[0]
