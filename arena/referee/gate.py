"""Gates: the only doors from a bot to the referee.

The referee's gRPC server listens on a private Unix socket, in a folder no sandbox mounts
(gRPC cannot be handed a connection it did not accept itself).  What bots reach are gates,
small asyncio relays in front of it:

- a :class:`SeatGate` per seat, at the seat's socket path: it accepts the first connection,
  then closes and unlinks its listener at once (anything else in the backlog is dropped, and
  later connections find no socket), and relays that one connection's bytes to the private
  socket.  A bot that opens thousands of connections to its socket costs the referee nothing.
- a :class:`TcpGate` for remote seats (``--listen``): a cap of concurrent connections per
  peer address and in total; when a cap is reached, the oldest connection that has not yet
  sent a byte makes room (an idle flood cannot lock honest clients out), else the newcomer
  is refused.

Every relayed connection that sends nothing within ``handshake_s`` is closed, and so is one
silent for ``idle_s`` (the referee's keepalive pings make an honest bot answer every 20 s).
The private side is opened only once the client has spoken, so silent connections never
reach gRPC.  Either side's end closes both.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import socket
import struct
import time
from pathlib import Path

log = logging.getLogger("arena.referee.gate")

HANDSHAKE_S = 10.0
"""A connection that sends nothing for this long after it is accepted is closed."""
IDLE_S = 120.0
"""A relayed connection whose client sends nothing for this long is closed."""
LINGER_S = 2.0
"""After one side ends, how long the other has to take its last bytes before it is cut."""
PER_PEER = 4
"""Concurrent TCP connections one peer address may hold."""
TCP_TOTAL = 64
"""Concurrent TCP connections in all."""
RESERVE_FDS = 16
"""Descriptors held back so that clean-up can run even when the table is full."""

_OUT_OF_DESCRIPTORS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


class DescriptorReserve:
    """A few descriptors held open and given back when they are needed most: to stop bots
    and remove their folders after something has filled the descriptor table."""

    def __init__(self, n: int = RESERVE_FDS) -> None:
        self.fds: list[int] = []
        for _ in range(n):
            try:
                self.fds.append(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))
            except OSError:
                break

    def release(self) -> None:
        fds, self.fds = self.fds, []
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    __del__ = release


class Link:
    """One relayed connection: the client's side (``down``) and the private side (``up``)."""

    __slots__ = (
        "_connecting",
        "_loop",
        "_starting",
        "_timer",
        "closed",
        "down",
        "gate",
        "heard",
        "last_heard",
        "peer",
        "pending",
        "quiet_since",
        "spoke",
        "up",
        "upstream",
    )

    def __init__(self, gate: _Gate, upstream: str, peer: str = "") -> None:
        self.gate = gate
        self.upstream = upstream
        self.peer = peer
        self.down: asyncio.Transport | None = None
        self.up: asyncio.Transport | None = None
        self.pending = bytearray()  # from the client, before the private side is open
        self.spoke = False
        self.closed = False
        self.heard = 0  # chunks from the client (the idle sweep compares counts)
        self.last_heard = 0
        self.quiet_since = time.monotonic()
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = self._loop.call_later(
            gate.handshake_s, self._silent
        )
        self._connecting: asyncio.Task[None] | None = None
        self._starting: asyncio.Task[None] | None = None

    def accept(self, conn: socket.socket) -> None:
        """Take over an accepted connection."""
        self._starting = asyncio.ensure_future(self._adopt(conn))

    async def _adopt(self, conn: socket.socket) -> None:
        try:
            await self._loop.connect_accepted_socket(lambda: _Down(self), conn)
        except OSError:
            conn.close()
            self.close(abort=True)

    def _silent(self) -> None:
        if not self.spoke:
            self.gate.silent += 1
            self.close(abort=True)

    def first_bytes(self, data: bytes) -> None:
        self.spoke = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.pending += data
        assert self.down is not None
        self.down.pause_reading()  # until the private side is open
        self._connecting = asyncio.ensure_future(self._open_up())

    async def _open_up(self) -> None:
        try:
            await self._loop.create_unix_connection(lambda: _Up(self), self.upstream)
        except OSError as exc:
            log.warning("gate: cannot reach the referee at %s: %s", self.upstream, exc)
            self.close(abort=True)

    def up_made(self, transport: asyncio.Transport) -> None:
        if self.closed:
            transport.abort()
            return
        self.up = transport
        if self.pending:
            transport.write(bytes(self.pending))
            self.pending.clear()
        if self.down is not None:
            self.down.resume_reading()

    def close(self, abort: bool = False) -> None:
        """End both sides (at once with ``abort``; else after their last bytes, within
        LINGER_S)."""
        if self.closed:
            return
        self.closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for t in (self.down, self.up):
            if t is not None and abort:
                t.abort()
            elif t is not None:
                t.close()
        if not abort:
            self._loop.call_later(LINGER_S, self._cut)
        self.gate.forget(self)

    def _cut(self) -> None:
        for t in (self.down, self.up):
            if t is not None:
                t.abort()  # a no-op on a transport that closed by itself


class _Down(asyncio.Protocol):
    """The client's side of a link."""

    __slots__ = ("link",)

    def __init__(self, link: Link) -> None:
        self.link = link

    def connection_made(self, transport) -> None:  # type: ignore[no-untyped-def]
        self.link.down = transport
        if self.link.closed:
            transport.abort()

    def data_received(self, data: bytes) -> None:
        link = self.link
        link.heard += 1
        up = link.up
        if up is not None:
            up.write(data)
        elif not link.spoke:
            link.first_bytes(data)
        else:
            link.pending += data

    def eof_received(self) -> bool:
        self.link.close()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.link.close()

    def pause_writing(self) -> None:  # the client does not read: stop reading the referee
        if self.link.up is not None:
            self.link.up.pause_reading()

    def resume_writing(self) -> None:
        if self.link.up is not None:
            self.link.up.resume_reading()


class _Up(asyncio.Protocol):
    """The private (gRPC) side of a link."""

    __slots__ = ("link",)

    def __init__(self, link: Link) -> None:
        self.link = link

    def connection_made(self, transport) -> None:  # type: ignore[no-untyped-def]
        self.link.up_made(transport)

    def data_received(self, data: bytes) -> None:
        down = self.link.down
        if down is not None:
            down.write(data)

    def eof_received(self) -> bool:
        self.link.close()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.link.close()

    def pause_writing(self) -> None:
        if self.link.down is not None:
            self.link.down.pause_reading()

    def resume_writing(self) -> None:
        if self.link.down is not None:
            self.link.down.resume_reading()


class _Gate:
    """A listening socket whose connections are relayed to ``upstream`` (a Unix path)."""

    def __init__(self, sock: socket.socket, upstream: str, handshake_s: float) -> None:
        self.sock: socket.socket | None = sock
        self.upstream = upstream
        self.handshake_s = handshake_s
        self.idle_s = IDLE_S
        self.links: dict[Link, None] = {}  # oldest first
        self.accepted = 0
        self.refused = 0  # accepted and closed at once (over a cap)
        self.evicted = 0  # closed to make room for a newcomer
        self.silent = 0  # closed by the handshake timeout
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sweeper: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        if self.sock is not None:
            self._loop.add_reader(self.sock.fileno(), self._readable)
        self._sweeper = self._loop.call_later(self.idle_s / 4, self._sweep)

    def _readable(self) -> None:
        raise NotImplementedError

    def _pause(self) -> None:
        """Out of descriptors: stop accepting for a moment (the listener stays readable)."""
        if self.sock is None or self._loop is None:
            return
        self._loop.remove_reader(self.sock.fileno())

        def resume() -> None:
            if self.sock is not None and self._loop is not None:
                self._loop.add_reader(self.sock.fileno(), self._readable)

        self._loop.call_later(0.2, resume)

    def _relay(self, conn: socket.socket, peer: str = "") -> Link:
        self.accepted += 1
        link = Link(self, self.upstream, peer)
        self.links[link] = None
        link.accept(conn)
        return link

    def forget(self, link: Link) -> None:
        self.links.pop(link, None)

    def _sweep(self) -> None:
        """Close relayed connections whose client has been silent for ``idle_s``."""
        now = time.monotonic()
        for link in list(self.links):
            if link.heard != link.last_heard:
                link.last_heard = link.heard
                link.quiet_since = now
            elif now - link.quiet_since > self.idle_s:
                link.close(abort=True)
        if self._loop is not None:
            self._sweeper = self._loop.call_later(self.idle_s / 4, self._sweep)

    def close_listener(self) -> None:
        if self.sock is None:
            return
        sock, self.sock = self.sock, None
        if self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_reader(sock.fileno())
        sock.close()  # the kernel drops whatever waits in the backlog

    def close(self) -> None:
        self.close_listener()
        if self._sweeper is not None:
            self._sweeper.cancel()
        for link in list(self.links):
            link.close(abort=True)


class SeatGate(_Gate):
    """One seat's socket: exactly one connection is ever accepted."""

    def __init__(self, path: Path, upstream: str, handshake_s: float = HANDSHAKE_S) -> None:
        self.path = path
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.setblocking(False)
            sock.bind(str(path))
            path.chmod(0o666)  # the bot's user (65534 in a container) must connect
            sock.listen(8)
        except BaseException:
            sock.close()
            raise
        super().__init__(sock, upstream, handshake_s)

    def _readable(self) -> None:
        if self.sock is None:
            return
        try:
            conn, _ = self.sock.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            if exc.errno in _OUT_OF_DESCRIPTORS:
                self._pause()
            return
        self.close_listener()  # before anything else: no second connection, ever
        conn.setblocking(False)
        self._relay(conn)

    def close_listener(self) -> None:
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()
        super().close_listener()


class TcpGate(_Gate):
    """The TCP door for remote seats, with per-peer and total caps."""

    def __init__(
        self,
        host: str,
        port: int,
        upstream: str,
        per_peer: int = PER_PEER,
        total: int = TCP_TOTAL,
        handshake_s: float = HANDSHAKE_S,
    ) -> None:
        family, kind, proto, _, addr = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setblocking(False)
            sock.bind(addr)
            sock.listen(512)
        except BaseException:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        self.per_peer = per_peer
        self.total = total
        self.by_peer: dict[str, int] = {}
        self._reserve = DescriptorReserve(1)
        super().__init__(sock, upstream, handshake_s)

    def _readable(self) -> None:
        for _ in range(64):  # a bounded batch, then let the match loop run
            if self.sock is None:
                return
            try:
                conn, addr = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in _OUT_OF_DESCRIPTORS:
                    self._shed()
                return
            self._admit(conn, str(addr[0]))

    def _shed(self) -> None:
        """No descriptor to accept with: spend the reserved one to take the waiting
        connection off the queue and refuse it, then wait a moment."""
        self._reserve.release()
        if self.sock is not None:
            with contextlib.suppress(OSError):
                conn, _ = self.sock.accept()
                _refuse(conn)
                self.refused += 1
        self._reserve = DescriptorReserve(1)
        self._pause()

    def _admit(self, conn: socket.socket, peer: str) -> None:
        if self.by_peer.get(peer, 0) >= self.per_peer and not self._evict(peer):
            self.refused += 1
            _refuse(conn)
            return
        if len(self.links) >= self.total and not self._evict(None):
            self.refused += 1
            _refuse(conn)
            return
        conn.setblocking(False)
        with contextlib.suppress(OSError):
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.by_peer[peer] = self.by_peer.get(peer, 0) + 1
        self._relay(conn, peer)

    def _evict(self, peer: str | None) -> bool:
        """Close the oldest connection (of ``peer``, or of anyone) that has not spoken."""
        for link in self.links:
            if not link.spoke and (peer is None or link.peer == peer):
                self.evicted += 1
                link.close(abort=True)
                return True
        return False

    def forget(self, link: Link) -> None:
        if link in self.links:
            n = self.by_peer.get(link.peer, 0) - 1
            if n > 0:
                self.by_peer[link.peer] = n
            else:
                self.by_peer.pop(link.peer, None)
        super().forget(link)

    def close(self) -> None:
        super().close()
        self._reserve.release()


def _refuse(conn: socket.socket) -> None:
    """Close at once with a reset: no lingering state for a connection we will not serve."""
    with contextlib.suppress(OSError):
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()
