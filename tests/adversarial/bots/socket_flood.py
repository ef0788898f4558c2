"""Floods its own referee socket: a helper process forks children, and each opens as many
connections to the seat's socket as it can (holding every one it gets), as fast as it can.

Before the gates, every connection cost the referee a descriptor until gRPC's handshake
timeout: a few thousand of them crashed the arena at the common 1024 limit.  The probe
reports what it did, as the message of an exception from act() (recorded as a fault):
``SOCKET PROBE: helpers=H attempts=A connected=C refused={errno: count}``; a connection
the referee accepted beside the bot's own is a breach.

The helper is a fresh interpreter (posix_spawn), and forks only itself: a fork of this
process, which runs gRPC's threads, may abort in gRPC's fork handlers."""

import json
import os
import sys

from bigtwo import Bot

HELPERS = 32  # the sandbox's pids limit (64) also counts this process's threads
ATTEMPTS = 100  # per helper; more than the 64 descriptors each may hold
HOLD_S = 1.0  # keep what was connected open for a while, as an attacker would

HELPER = r"""
import errno, json, os, socket, sys, time
path, helpers, attempts, hold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
r, w = os.pipe()
kids = 0
forks_failed = 0
for _ in range(helpers):
    try:
        pid = os.fork()
    except OSError:
        forks_failed += 1
        continue
    if pid == 0:
        os.close(r)
        held, connected, refused = [], 0, {}
        for _ in range(attempts):
            s = None
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(0.5)  # a full backlog would block a connect
                s.connect(path)
                held.append(s)
                connected += 1
            except OSError as exc:
                name = errno.errorcode.get(exc.errno or 0, type(exc).__name__)
                refused[name] = refused.get(name, 0) + 1
                if s is not None:
                    s.close()
        os.write(w, (json.dumps([connected, refused]) + "\n").encode())
        time.sleep(hold)
        os._exit(0)
    kids += 1
os.close(w)
data = b""
while chunk := os.read(r, 65536):
    data += chunk
for _ in range(kids):
    os.wait()
total = {"helpers": kids, "forks_failed": forks_failed, "connected": 0, "refused": {}}
for line in data.decode().splitlines():
    connected, refused = json.loads(line)
    total["connected"] += connected
    for k, v in refused.items():
        total["refused"][k] = total["refused"].get(k, 0) + v
print(json.dumps(total))
"""


def probe(path: str) -> dict:
    r, w = os.pipe()
    args = [sys.executable, "-S", "-c", HELPER, path, str(HELPERS), str(ATTEMPTS), str(HOLD_S)]
    pid = os.posix_spawn(
        sys.executable, args, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, w, 1)]
    )
    os.close(w)
    out = b""
    while chunk := os.read(r, 65536):
        out += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(out)


class SocketFlood(Bot):
    reported = False

    def act(self, observation):
        if not self.reported:
            self.reported = True
            path = os.environ["ARENA_ADDRESS"].removeprefix("unix://")
            got = probe(path)
            refused = sum(got["refused"].values())
            attempts = got["connected"] + refused
            report = (
                f"helpers={got['helpers']} attempts={attempts} connected={got['connected']} "
                f"refused={json.dumps(got['refused'], sort_keys=True)}"
            )
            if got["connected"]:
                raise RuntimeError(f"BREACH: the referee accepted more connections: {report}")
            raise RuntimeError(f"SOCKET PROBE: {report}")
        return observation.legal_moves[0]
