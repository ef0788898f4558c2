"""Sleeps past the deadline on every move."""

import time

from bigtwo import Bot


class Sleeper(Bot):
    def act(self, observation):
        time.sleep(0.6)
        return observation.legal_moves[0]
