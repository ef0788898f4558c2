"""A bot's output (its stdout and stderr): kept for its author, at a bounded cost to the arena.

A bot may print whatever it likes, as fast as it likes, for ever.  What the arena keeps of
it is capped (:data:`LOG_CAP` per seat per match: the first bytes, then a ``[log truncated
at N bytes …]`` line and the last :data:`TAIL_KEEP` bytes, where a crash's traceback is),
so a bot printing without end neither fills the disk nor holds memory.  The process
sandbox reads the bot's pipes in a thread of its own (:class:`PipeCapture`), never in the
referee's event loop, and always reads them to the end, so a bot never blocks on a full
pipe however much it writes.  The docker sandbox leaves the output to the engine's capped
log (``json-file``) and reads it once, when the seat stops (:func:`from_engine`).

:func:`last_words` is the one-line reason a sandbox gives when a bot dies: its last line
on stderr and, when that ends a traceback, where in the bot's own files (``/bot/...``,
mapped to the author's paths later by :func:`arena.bots.as_authored`) it was raised.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import select
import threading
import time

LOG_CAP = 1 << 20
"""Bytes of a seat's output kept per match (then only the last :data:`TAIL_KEEP`)."""
TAIL_KEEP = 64 << 10
"""Bytes kept from the end of an output longer than :data:`LOG_CAP`."""
STDERR_TAIL = 4000
"""Bytes of stderr kept apart for :func:`last_words` (the reason shown in a fault)."""
PIPE_SIZE = 1 << 20  # fewer wake-ups of the reader for a bot that prints a lot
CHUNK = 1 << 20
FLOOD_PAUSE_S = 0.005
F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)

_FRAME = re.compile(r'File "(/bot/[^"\n]{1,300})", line (\d{1,9}), in ([^\s]{1,100})')


class CappedLog:
    """Bytes written in pieces, of which the first ``cap`` are kept and then only the
    last ``tail``; :meth:`getvalue` joins them with a line saying what was cut."""

    def __init__(self, cap: int = LOG_CAP, tail: int = TAIL_KEEP) -> None:
        self.cap = cap
        self.tail_keep = tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def write(self, data: bytes | memoryview) -> None:
        self.total += len(data)
        room = self.cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if len(data) >= self.tail_keep:  # a flood: only its end matters
            self.tail[:] = data[-self.tail_keep :]
        elif data:
            self.tail += data
            if len(self.tail) > self.tail_keep:
                del self.tail[: len(self.tail) - self.tail_keep]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + len(self.tail)

    def getvalue(self) -> bytes:
        if not self.truncated:
            return bytes(self.head + self.tail)
        skipped = self.total - len(self.head) - len(self.tail)
        marker = (
            f"\n[log truncated at {self.cap} bytes: {skipped} bytes not kept; "
            f"the last {len(self.tail)} bytes follow]\n"
        ).encode()
        return bytes(self.head) + marker + bytes(self.tail)


class PipeCapture:
    """A thread that reads a bot's stdout and stderr pipes to their end into one
    :class:`CappedLog` (in the order the pieces arrive) and keeps stderr's last bytes apart.

    A thread rather than the event loop: a bot printing as fast as it can would otherwise
    take the referee's loop from every other seat.  It owns the read ends and closes them."""

    def __init__(self, stdout_fd: int, stderr_fd: int, cap: int = LOG_CAP) -> None:
        self.log = CappedLog(cap)
        self.stderr = bytearray()
        self.fds = {stdout_fd: False, stderr_fd: True}  # fd -> is stderr
        for fd in self.fds:
            with contextlib.suppress(OSError):
                fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._stop_by = 0.0
        self.done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bot-output", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        poller = select.poll()
        for fd in self.fds:
            poller.register(fd, select.POLLIN)
        open_fds = set(self.fds)
        buf = bytearray(CHUNK)
        try:
            while open_fds:
                # after stop(): only what is already in the pipes, then out
                stopping = self._stop.is_set()
                events = poller.poll(0 if stopping else 200)
                if stopping and (not events or time.monotonic() > self._stop_by):
                    break  # (something the bot started may still hold its pipes open)
                for fd, _ in events:
                    try:
                        n = os.readv(fd, [buf])
                    except OSError:
                        n = 0
                    if not n:
                        poller.unregister(fd)
                        open_fds.discard(fd)
                        continue
                    data = memoryview(buf)[:n]
                    with self._lock:
                        self.log.write(data)
                        if self.fds[fd]:
                            self.stderr += data[-STDERR_TAIL:]
                            del self.stderr[: max(0, len(self.stderr) - STDERR_TAIL)]
                    data.release()
                if self.log.truncated and not self._stop.is_set():
                    # past the cap, a flood: woken at most every FLOOD_PAUSE_S (the bot
                    # waits that long at most on a full pipe), so its reading never takes
                    # the interpreter from the referee for long
                    time.sleep(FLOOD_PAUSE_S)
        finally:
            for fd in self.fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            self.done.set()

    async def drained(self, timeout: float) -> None:
        """Wait (without blocking the loop) until the pipes are read to their end: the bot
        and everything holding its pipes ended.  At most ``timeout`` seconds."""
        import asyncio

        deadline = time.monotonic() + timeout
        while not self.done.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    def stderr_bytes(self) -> bytes:
        with self._lock:
            return bytes(self.stderr)

    async def close(self) -> bytes:
        """Stop reading (once what is in the pipes is read) and return the log."""
        if not self._stop.is_set():
            self._stop_by = time.monotonic() + 1.0
            self._stop.set()
        await self.drained(2.0)
        with self._lock:
            return self.log.getvalue()


def last_words(stderr: bytes) -> str:
    """The bot's last non-empty line on stderr (at most 300 characters) and, when it ends
    a traceback through the bot's own files, where: ``… at /bot/bot.py:5 in act`` (the
    last three such frames, outermost first)."""
    lines = [ln for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    if not lines:
        return ""
    said = lines[-1].strip()[:300]
    start = max((i for i, ln in enumerate(lines) if ln.startswith("Traceback (")), default=None)
    if start is None:
        return said
    frames = _FRAME.findall("\n".join(lines[start:]))  # the last traceback's frames only
    if not frames:
        return said
    steps = " → ".join(f"{f}:{n} in {name}" for f, n, name in frames[-3:])
    return f"{said} at {steps}"


def from_engine(data: bytes, rotated: bool, kept: int) -> bytes:
    """A container's output as the engine kept it: ``rotated`` when the engine's capped log
    already dropped the oldest part (then a line says so first); at most ``kept`` bytes."""
    if len(data) > kept:
        data, rotated = data[-kept:], True
    if not rotated:
        return data
    return (
        f"[log truncated at {kept} bytes: the engine kept only the latest output]\n".encode() + data
    )
