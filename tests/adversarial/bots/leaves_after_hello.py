"""Says Hello, reads who it plays (MatchStart), and leaves before the first turn: it
started, so leaving is its forfeit — it must not be able to void the match."""

import os

from bigtwo import Bot


class LeavesAfterHello(Bot):
    def on_match_start(self, observation):
        os._exit(0)

    def act(self, observation):
        return observation.legal_moves[0]
