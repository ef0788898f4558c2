"""Forks until it cannot; reports a breach if nothing stopped it early."""

import os
import time

from bigtwo import Bot


class ForkBomb(Bot):
    forked = None

    def act(self, observation):
        if self.forked is None:
            self.forked = 0
            try:
                while self.forked < 400:
                    if os.fork() == 0:
                        try:
                            os.fork()  # children try too
                        except OSError:
                            pass
                        time.sleep(3600)
                        os._exit(0)
                    self.forked += 1
            except OSError:
                pass
            if self.forked >= 200:
                raise RuntimeError(f"BREACH: forked {self.forked} processes")
        return observation.legal_moves[0]
