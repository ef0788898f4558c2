"""A typo: a missing colon on line 7."""

from bigtwo import Bot


class Typo(Bot):
    def act(self, observation)
        return observation.legal_moves[0]
