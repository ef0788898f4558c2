"""Sends garbage bytes to the referee's socket on a side connection, then plays."""

import os
import socket

from bigtwo import Bot


class Garbage(Bot):
    done = False

    def act(self, observation):
        if not self.done:
            self.done = True
            path = os.environ["ARENA_ADDRESS"].removeprefix("unix://")
            for _ in range(3):
                try:
                    with socket.socket(socket.AF_UNIX) as s:
                        s.settimeout(1)
                        s.connect(path)
                        s.sendall(os.urandom(64 << 10))
                except OSError:
                    pass
        return observation.legal_moves[0]
