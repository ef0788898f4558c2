"""An honest bot that thinks hard: burns 250 ms of CPU on every move, then plays its
weakest legal play (like good.py)."""

import time

from bigtwo import PASS, Bot

THINK_S = 0.25


class HonestCpu(Bot):
    def act(self, observation):
        start = time.thread_time()
        n = 0
        while time.thread_time() - start < THINK_S:
            n += 1
        for move in observation.legal_moves:
            if move is not PASS:
                return move
        return PASS
