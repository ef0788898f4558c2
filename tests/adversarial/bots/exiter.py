"""Plays two moves, then its process exits mid-match."""

import os

from bigtwo import Bot


class Exiter(Bot):
    moves = 0

    def act(self, observation):
        self.moves += 1
        if self.moves > 2:
            os._exit(3)
        return observation.legal_moves[0]
