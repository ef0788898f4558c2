"""A CPU hog: 24 threads hashing a large buffer for ever from the moment it starts (hashlib
releases the GIL on big buffers, so the threads really run at once), while it plays
instantly.  On its third move it reports on purpose, as a fault, how many CPUs it held on
average ("HOG: ... CPUs"), so the test knows the neighbour really was busy."""

import hashlib
import threading
import time

from bigtwo import Bot

THREADS = 24
BUFFER = bytes(1 << 20)


def burn() -> None:
    while True:
        hashlib.sha256(BUFFER).digest()


class CpuHog(Bot):
    def __init__(self) -> None:
        super().__init__()
        self.moves = 0
        self.wall, self.cpu = time.monotonic(), time.process_time()
        for _ in range(THREADS):
            threading.Thread(target=burn, daemon=True).start()

    def act(self, observation):
        self.moves += 1
        if self.moves == 3:
            cpus = (time.process_time() - self.cpu) / (time.monotonic() - self.wall)
            raise RuntimeError(f"HOG: {THREADS} threads held {cpus:.2f} CPUs on average")
        return observation.legal_moves[0]
