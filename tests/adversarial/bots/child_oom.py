"""A child hogs memory until the kernel kills it; the bot's own process then exits 0, so
only the container's state can tell that the memory limit struck.

The child is a fresh interpreter started with posix_spawn, not a fork of this process: a
forked copy of a process that runs gRPC's threads may abort in gRPC's fork handlers before
it allocates anything (seen here as "Check failure stack trace"), and then no memory limit
is ever reached."""

import os
import sys

from bigtwo import Bot

HOG = "hoard = []\nwhile True:\n    hoard.append(bytearray(32 << 20))\n"


class ChildOom(Bot):
    def act(self, observation):
        pid = os.posix_spawn(sys.executable, [sys.executable, "-c", HOG], os.environ)
        os.waitpid(pid, 0)
        os._exit(0)
