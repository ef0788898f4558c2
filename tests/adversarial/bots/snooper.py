"""Looks for other seats' sockets and files and for other processes' secrets."""

import glob
import os

from bigtwo import Bot


class Snooper(Bot):
    done = False

    def act(self, observation):
        if not self.done:
            self.done = True
            found = []
            mine = os.environ.get("ARENA_TOKEN", "")
            for pattern in (
                "/tmp/arena-*",
                "/tmp/arena-*/*",
                "/run/arena/*",
                "/var/run/*.sock",
                "/run/*.sock",
                "/run/containerd/*",
            ):
                for path in glob.glob(pattern):
                    if path != "/run/arena/referee.sock":
                        found.append(path)
            pids = os.listdir("/proc") if os.path.isdir("/proc") else []  # none: no procfs
            for pid in (p for p in pids if p.isdigit()):
                try:
                    env = open(f"/proc/{pid}/environ", "rb").read()
                except OSError:
                    continue
                for item in env.split(b"\0"):
                    if item.startswith(b"ARENA_TOKEN=") and item[12:].decode() != mine:
                        found.append(f"another token in /proc/{pid}/environ")
                    if item.startswith(b"ARENA_") and b"TOKEN" not in item and pid == "1":
                        pass
            if os.getppid() > 1:
                try:
                    found.append("parent " + open(f"/proc/{os.getppid()}/cmdline").read()[:40])
                except OSError:
                    pass
            if found:
                raise RuntimeError("BREACH: " + "; ".join(found[:5]))
        return observation.legal_moves[0]
