"""Plays its first rotation, then cannot start in the second: its fresh instance fails
while being imported (it reads which segment it was started for from ARENA_MATCH_ID, so
the failure comes late in a ladder batch, after hands were played)."""

import os

from bigtwo import Bot

if os.environ.get("ARENA_MATCH_ID", "").endswith(".1"):
    raise SystemExit("the second rotation's instance is broken on purpose")


class SecondRotationCrash(Bot):
    def act(self, observation):
        return observation.legal_moves[0]
