"""Passes the check at entry (one whole match against copies of itself), then, in a ladder
match — a rotation of a batch, whose match id ends in ``.N`` — its process exits at its
first act(): a bot that crashes right after its start where its author did not test it.
It started (said Hello), so it forfeits; it is not a bot that cannot start."""

import os

from bigtwo import Bot


class ExitsInLadderMatches(Bot):
    def act(self, observation):
        if "." in os.environ.get("ARENA_MATCH_ID", ""):
            os._exit(3)
        return observation.legal_moves[0]
