"""Plays a uniformly random legal move (passing included when it is legal)."""

import random

from bigtwo import Bot


class RandomBot(Bot):
    name = "random"

    def __init__(self, seed=None):
        self.rng = random.Random(seed)

    def act(self, observation):
        return self.rng.choice(observation.legal_moves)
