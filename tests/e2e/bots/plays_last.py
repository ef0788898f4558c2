"""A plain working bot: always its last legal move (the sixth bot of a docker ladder)."""

from bigtwo import Bot


class PlaysLast(Bot):
    def act(self, observation):
        return observation.legal_moves[-1]
