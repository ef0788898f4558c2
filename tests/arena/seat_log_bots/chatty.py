"""Plays well and says so, on stdout and on stderr."""

import sys

from bigtwo import Bot


class Chatty(Bot):
    def act(self, observation):
        print(f"STDOUT-LINE choosing among {len(observation.legal_moves)} moves")
        print("STDERR-LINE thinking hard", file=sys.stderr)
        return observation.legal_moves[0]
