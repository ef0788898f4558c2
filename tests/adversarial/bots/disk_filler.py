"""Fills /tmp, then tries to write everywhere else; reports any write that worked."""

import os

from bigtwo import Bot

PLACES = [
    "/",
    "/etc",
    "/usr",
    "/var/tmp",
    "/dev/shm",
    "/bot",
    "/run/bot",
    "/run/arena",
    "/opt",
    "/root",
    os.path.expanduser("~"),
    os.getcwd(),
]


class DiskFiller(Bot):
    done = False

    def act(self, observation):
        if not self.done:
            self.done = True
            written = 0
            try:
                with open("/tmp/fill", "wb") as f:
                    while written < 512:
                        f.write(b"x" * (1 << 20))
                        f.flush()
                        written += 1
            except OSError:
                pass
            breaches = [f"/tmp took {written} MiB"] if written >= 64 else []
            for place in PLACES:
                path = os.path.join(place, "arena-breach-probe")
                if place == "/tmp" or place.startswith("/tmp/"):
                    continue
                try:
                    with open(path, "wb") as f:
                        f.write(b"x")
                    os.remove(path)
                    breaches.append(path)
                except OSError:
                    pass
            if breaches:
                raise RuntimeError("BREACH: wrote " + ", ".join(breaches))
        return observation.legal_moves[0]
