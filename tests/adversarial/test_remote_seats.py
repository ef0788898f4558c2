"""Remote seats (``arena match --listen``) cannot be shut out (issue 21).

A real ``arena match --listen 127.0.0.1:0`` process, at 1,024 descriptors (soft and hard)
and its default 15 s startup allowance, is flooded with 1,100 connections that never say
who they are: idle ones and half-sent ones (a TLS ClientHello or an HTTP/2 preface sent a
byte at a time), some from the honest seat's own address.  The printed
``python -m bigtwo.run`` command, run as a real process, must have its seat within 1 s of
starting to connect (the SDK's own log says when the referee accepted its Hello) and play
the match to its end without a fault."""

from __future__ import annotations

import contextlib
import json
import re
import resource
import shlex
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

BOTS = Path(__file__).parent / "bots"
GOOD = BOTS / "good.py"

# `python -m arena ARGS`, with the referee's temporary folders (the match's) in argv[1]
ARENA = (
    "import sys, tempfile; tempfile.tempdir = sys.argv[1]; sys.argv[:2] = ['arena']; "
    "from arena.cli import main; main()"
)
TAKEN = re.compile(r"seat (\d+) taken ([0-9.]+) s after connecting")


def _nofile_1024() -> None:
    """The arena's descriptor limit, soft and hard (the common default)."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


def _raise_own_limit(n: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(n, hard), hard))


class Arena:
    """``arena match … --listen 127.0.0.1:0 remote:honest good good good`` running, and
    the join command it printed for the remote seat."""

    def __init__(self, tmp: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [
                *(sys.executable, "-c", ARENA, str(tmp), "match", "--hands", "1", "--json"),
                *("--sandbox", "inproc", "--listen", "127.0.0.1:0", *args),
                *("remote:honest", str(GOOD), str(GOOD), str(GOOD)),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_nofile_1024,
        )
        self.lines: list[str] = []
        self._command = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            if "python -m bigtwo.run" in line:
                self._command.set()
        self._command.set()

    def command(self) -> list[str]:
        """The join command's words after ``python -m bigtwo.run BOT``."""
        assert self._command.wait(120), "".join(self.lines)
        shown = next((line for line in self.lines if "python -m bigtwo.run" in line), None)
        assert shown, "".join(self.lines)
        words = shlex.split(shown[shown.index("python -m bigtwo.run") :])
        assert words[:4] == ["python", "-m", "bigtwo.run", "BOT"], shown
        return words[4:]

    def address(self) -> tuple[str, int]:
        words = self.command()
        host, _, port = words[words.index("--address") + 1].rpartition(":")
        return host, int(port)

    def result(self, timeout: float = 300) -> dict:
        out, _ = self.proc.communicate(timeout=timeout)
        assert self.proc.returncode == 0, "".join(self.lines)[-3000:]
        return json.loads(out)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def arena_tmp(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return tmp


# A TLS ClientHello's first bytes (a handshake record of 512 bytes announced), and the
# HTTP/2 client preface: what a half-sent connection dribbles, a byte at a time.
CLIENT_HELLO_START = bytes.fromhex("160301020001000200fe0303") + bytes(range(32))
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


class Flood:
    """1,100 connections to ``host:port``: idle ones, and half-sent ones that dribble a
    byte every 0.4 s (never finishing), from the honest seat's own address and from 100
    others."""

    def __init__(self, host: str, port: int) -> None:
        plan: list[tuple[str, bytes]] = []
        for i in range(1100):
            src = "127.0.0.1" if i % 2 == 0 else f"127.0.2.{1 + i % 100}"
            kind = i % 10
            data = CLIENT_HELLO_START if kind in (1, 2) else H2_PREFACE if kind == 3 else b""
            plan.append((src, data))
        self.socks: list[tuple[socket.socket, bytes]] = []
        for src, data in plan:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.bind((src, 0))
            s.connect_ex((host, port))
            self.socks.append((s, data))
        self.sent = 0
        self._stop = threading.Event()
        self._dribbler = threading.Thread(target=self._dribble, daemon=True)
        self._dribbler.start()

    def _dribble(self) -> None:
        at = 0
        while not self._stop.wait(0.4):
            for s, data in self.socks:
                if at < len(data):
                    with contextlib.suppress(OSError):
                        s.send(data[at : at + 1])
                        self.sent += 1
            at += 1

    def held(self) -> int:
        """How many of the connections the referee still holds open."""
        n = 0
        for s, _ in self.socks:
            try:
                n += s.recv(1, socket.MSG_PEEK) != b""
            except BlockingIOError:
                n += 1
            except OSError:  # reset, or never connected
                pass
        return n

    def close(self) -> None:
        self._stop.set()
        self._dribbler.join(5)
        for s, _ in self.socks:
            s.close()


def join(words: list[str], timeout: float = 300) -> subprocess.CompletedProcess:
    """The printed command, run as a student would (``-v``: the SDK logs when its seat
    was taken)."""
    return subprocess.run(
        [sys.executable, "-m", "bigtwo.run", str(GOOD), "-v", *words],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def taken_s(stderr: str) -> float:
    m = TAKEN.search(stderr)
    assert m, stderr[-2000:]
    return float(m.group(2))


@pytest.mark.slow
def test_1100_idle_and_half_sent_connections_do_not_lock_out_a_remote_seat(arena_tmp):
    """The flood, then the honest seat: in within 1 s, and the match plays to its end."""
    _raise_own_limit(4096)
    arena = Arena(arena_tmp)
    flood = None
    try:
        host, port = arena.address()
        assert host == "127.0.0.1"
        flood = Flood(host, port)
        time.sleep(2.0)  # the dribblers have begun, the idle ones wait
        held = flood.held()
        honest = join(arena.command())
        assert honest.returncode == 0, honest.stderr[-2000:]
        took = taken_s(honest.stderr)
        result = arena.result()
    finally:
        if flood is not None:
            flood.close()
        arena.kill()
    assert result["match_over"] and not result.get("aborted"), result.get("aborted")
    for seat in result["seats"]:
        assert seat["faults"] == [] and not seat["forfeit"], seat
    assert took < 1.0, f"the honest seat took {took:.3f} s to get its seat"
    assert flood.sent > 0
    assert held <= 64, f"the referee still holds {held} of the flood's connections"
