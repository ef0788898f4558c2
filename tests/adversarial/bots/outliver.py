"""Starts a daemon that tries to outlive the match (new session, double fork)."""

import os
import time

from bigtwo import Bot


class Outliver(Bot):
    done = False

    def act(self, observation):
        if not self.done:
            self.done = True
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    time.sleep(3600)
                os._exit(0)
        return observation.legal_moves[0]
