"""A child hogs memory until the kernel kills it; the bot's own process then exits 0, so
only the container's state can tell that the memory limit struck."""

import os

from bigtwo import Bot


class ChildOom(Bot):
    def act(self, observation):
        pid = os.fork()
        if pid == 0:
            hoard = []
            try:
                while True:
                    hoard.append(bytearray(32 << 20))
            finally:
                os._exit(1)
        os.waitpid(pid, 0)
        os._exit(0)
