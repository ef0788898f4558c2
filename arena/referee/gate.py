"""Gates: the only doors from a bot to the referee.

The referee's gRPC server listens on a private Unix socket, in a folder no sandbox mounts
(gRPC cannot be handed a connection it did not accept itself).  What bots reach are gates,
small asyncio relays in front of it:

- a :class:`SeatGate` per seat, at the seat's socket path: it accepts the first connection,
  then closes and unlinks its listener at once (anything else in the backlog is dropped, and
  later connections find no socket), and relays that one connection's bytes to the private
  socket.  A bot that opens thousands of connections to its socket costs the referee nothing.
- a :class:`TcpGate` for remote seats (``--listen``): a cap of concurrent connections per
  peer address and in total, counting only connections whose seat's token has not yet been
  accepted; when a cap is reached, a waiting connection that has had its chance makes room
  (:meth:`TcpGate._evict`: one whose Hello was refused, then the oldest that has not sent
  a byte, then one stuck in its TLS handshake, then one that has spoken but shown no
  token), else the newcomer is refused.  An idle or slow flood therefore cannot lock an
  honest client out: the token decides, and a connection that has shown one is never
  evicted nor counted.  It terminates TLS itself (``tls``, an :class:`ssl.SSLContext`, see
  :mod:`.tls`) so the caps apply before any handshake and the handshake has its own
  deadline (``TLS_HANDSHAKE_S``); a client speaking plain HTTP/2 to it is closed at once
  (and counted: ``plaintext``).

Every relayed connection that sends nothing within ``handshake_s`` is closed, and so is one
silent for ``idle_s`` (the referee's keepalive pings make an honest bot answer every 20 s).
The private side is opened only once the client has spoken, so silent connections never
reach gRPC.  Either side's end closes both.

Streams: a gate follows the HTTP/2 frame headers its client sends (nothing else: a 9-byte
header, then a payload skipped unread) and counts the streams the client opens (a HEADERS
frame with a new stream id).  A bot plays over one ``Play`` stream; the connection that
opens a second (``STREAMS_PER_LINK``) is cut before that frame reaches gRPC, so extra calls
cost the referee no Python at all.  gRPC's own ``max_concurrent_streams`` (1) stands behind.

Hello: each link's private side is bound to a unique abstract Unix address, which gRPC
reports as the call's peer; the servicer finds the link with :func:`link_of` and tells it
when a Hello was accepted (:meth:`Link.greeted`) and when the link is done — its seat's
stream ended, or its Hello was refused (:meth:`Link.spent`: closed a moment later, once the
status is through).  Under a :class:`RefereeServer`, a link with no accepted Hello
``hello_s`` after it was accepted is closed: a client that speaks HTTP/2 but never says
who it is cannot hold a place; when a TCP cap is full, such a link (after
``EVICT_UNGREETED_S``) makes room for a newcomer as a silent one does.  The per-peer cap
counts IPv6 peers by /64 (one host commonly holds a whole /64).  A client sending frames
faster than ``FRAMES_PER_S`` (beyond a burst) is cut: following frames costs Python.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import secrets
import socket
import ssl
import struct
import sys
import time
from pathlib import Path

from ..addresses import peer_key  # (re-exported: the gate's tests name it here)

log = logging.getLogger("arena.referee.gate")

HANDSHAKE_S = 10.0
"""A connection that sends nothing for this long after it is accepted is closed."""
TLS_HANDSHAKE_S = 5.0
"""A TLS connection whose handshake is not done this long after it is accepted is closed
(an honest one takes a round trip or two)."""
SILENT_GRACE_S = 0.25
"""When a cap is full, a newcomer that has not yet sent its first message may displace
only a link that has been as silent for this long: the next client's first bytes are
usually a moment behind its connection, and a flood reconnecting whatever is closed must
not churn it out before they come."""
FIRST_FLIGHT = 5 + 16384
"""The most a client's first message can take: one TLS record."""
TLS_STALL_S = 0.25
"""When a cap is full, a link still in its TLS handshake this long after it was accepted
may make room (an honest client's handshake is one round trip)."""
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
STREAMS_PER_LINK = 1
"""Streams (calls) a connection may open in its life: a bot plays over one."""
FRAMES_PER_S = 5000
FRAME_BURST = 50_000
"""HTTP/2 frames a client may send: a budget refilled at FRAMES_PER_S up to FRAME_BURST
(an honest bot sends a few per move).  Following a frame costs the gate a microsecond of
Python; a flood of empty frames would make that the referee's whole CPU."""
HELLO_S = 30.0
"""A link (under a referee) with no accepted Hello this long after it was accepted is closed
(the servicer's own wait for a stream's Hello is as long)."""
EVICT_UNGREETED_S = 1.0
"""When a TCP cap is full, a link that spoke but has no accepted Hello after this long may
be closed to make room (an honest client's Hello follows its connection at once)."""
SPENT_S = 1.0
"""How long a spent link stays open for the status of its last call to pass."""
BACKLOG = 4096
"""The TCP listener's accept queue (the kernel caps it at net.core.somaxconn)."""
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
HEADERS = 0x1  # HTTP/2 frame type
TLS_HANDSHAKE_RECORD = 0x16
"""The first byte of every TLS ClientHello (a handshake record)."""

_ABSTRACT = sys.platform.startswith("linux")
_TAG = "arena-gate-"
_links: dict[str, Link] = {}  # by the name of their private side's address

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


def link_of(peer: str) -> Link | None:
    """The gate's link that carries a call, from the call's peer as gRPC reports it (the
    abstract address the link's private side is bound to); None for any other peer."""
    at = peer.find(_TAG)
    return _links.get(peer[at:]) if at >= 0 else None


class Link:
    """One relayed connection: the client's side (``down``) and the private side (``up``)."""

    __slots__ = (
        "_adopting",
        "_allowance",
        "_connecting",
        "_counted",
        "_first",
        "_first_need",
        "_head",
        "_hello_timer",
        "_last_sid",
        "_loop",
        "_preface",
        "_raw_in",
        "_skip",
        "_stamp",
        "_starting",
        "_timer",
        "_tls",
        "_tls_in",
        "_tls_out",
        "_tls_timer",
        "born",
        "closed",
        "conn",
        "counted",
        "down",
        "frames",
        "gate",
        "greeted_at",
        "heard",
        "last_heard",
        "name",
        "peer",
        "pending",
        "quiet_since",
        "shaken",
        "spent_at",
        "spoke",
        "streams",
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
        self.spoke = False  # the client sent a byte (raw, TLS or not)
        self.closed = False
        self.counted = False  # in its gate's caps (until its token is accepted)
        self.spent_at: float | None = None
        self.heard = 0  # chunks from the client (the idle sweep compares counts)
        self.last_heard = 0
        self.born = self.quiet_since = time.monotonic()
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = self._loop.call_later(
            gate.handshake_s, self._silent
        )
        self._connecting: asyncio.Task[None] | None = None
        self._starting: asyncio.Task[None] | None = None
        self.conn: socket.socket | None = None  # the client's socket (see first_flight)
        self._adopting = False  # a transport owns the socket from then on
        # TLS, terminated here (the gate's context): raw bytes in, plaintext relayed
        self._tls: ssl.SSLObject | None = None
        self._tls_in: ssl.MemoryBIO | None = None
        self._tls_out: ssl.MemoryBIO | None = None
        self._tls_timer: asyncio.TimerHandle | None = None
        self.shaken = gate.tls is None  # the TLS handshake is done (none: nothing to do)
        self._first = bytearray()  # the first TLS record's header (5 bytes) as it comes
        self._first_need = 0  # that record's whole length, once its header is in
        self._raw_in = 0  # raw bytes from the client
        if gate.tls is not None:  # the TLS object itself is made at the first byte
            self._tls_timer = self._loop.call_later(gate.tls_s, self._handshake_late)
        # the client's HTTP/2 framing, followed (see scan)
        self._preface = len(PREFACE)
        self._head = bytearray()  # a frame header split between reads
        self._skip = 0  # payload bytes of the current frame still to come
        self._last_sid = 0
        self.streams = 0  # opened by the client
        self.frames = 0  # sent by the client
        self._counted = 0  # of them, charged to the budget
        self._allowance = float(FRAME_BURST)
        self._stamp = self.born
        # the servicer's word (see link_of): the name gRPC knows this link by, and when
        # a Hello was accepted on it
        self.name: str | None = None
        self.greeted_at: float | None = None
        self._hello_timer: asyncio.TimerHandle | None = None
        if gate.hello_s is not None and _ABSTRACT:
            self._hello_timer = self._loop.call_later(gate.hello_s, self._no_hello)

    def accept(self, conn: socket.socket) -> None:
        """Take over an accepted connection."""
        self.conn = conn
        self._starting = asyncio.ensure_future(self._adopt(conn))

    async def _adopt(self, conn: socket.socket) -> None:
        if self.closed:  # evicted before its turn: already refused
            return
        self._adopting = True
        try:
            await self._loop.connect_accepted_socket(lambda: _Down(self), conn)
        except (OSError, ValueError):
            conn.close()
            self.close(abort=True)

    def sent_first_flight(self) -> bool:
        """Whether this client, not read yet, has sent its first message whole (see
        :func:`first_flight`)."""
        conn = self.conn
        if conn is None or self.closed:
            return False
        return first_flight(conn, self.gate.tls is not None)

    def _silent(self) -> None:
        if not self.spoke:
            self.gate.silent += 1
            self.close(abort=True)

    def _handshake_late(self) -> None:
        self._tls_timer = None
        if not self.shaken and not self.closed:
            self.gate.tls_late += 1
            self.close(abort=True)

    def raw_received(self, data: bytes) -> None:
        """Bytes from a TLS client: the handshake, then records whose plaintext is relayed
        (:meth:`received`)."""
        if not self.spoke:
            self._spoken()
            if data[0] != TLS_HANDSHAKE_RECORD:  # plain HTTP/2 (or anything else)
                self.gate.plaintext += 1
                self._tell_plain()
                return
            assert self.gate.tls is not None
            self._tls_in, self._tls_out = ssl.MemoryBIO(), ssl.MemoryBIO()
            self._tls = self.gate.tls.wrap_bio(self._tls_in, self._tls_out, server_side=True)
        tls, incoming = self._tls, self._tls_in
        assert tls is not None and incoming is not None
        self._raw_in += len(data)
        if not self._first_need:  # the ClientHello record's header: how long it is
            self._first += data[: 5 - len(self._first)]
            if len(self._first) == 5:
                self._first_need = 5 + int.from_bytes(self._first[3:5], "big")
        self.heard += 1
        incoming.write(data)
        if not self.shaken:
            try:
                tls.do_handshake()
            except ssl.SSLWantReadError:
                self._flush()
                return
            except (ssl.SSLError, ValueError) as exc:
                self.gate.tls_failed += 1
                log.info("gate: TLS handshake with %s failed: %s", self.peer or "?", exc)
                self._flush()
                self.close()
                return
            self.shaken = True
            if self._tls_timer is not None:
                self._tls_timer.cancel()
                self._tls_timer = None
        plain = bytearray()
        ended = False
        while True:
            try:
                chunk = tls.read(65536)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:  # the client's close_notify
                ended = True
                break
            except (ssl.SSLError, ValueError):
                self.close(abort=True)
                return
            if not chunk:
                break
            plain += chunk
        self._flush()
        if plain:
            self.received(bytes(plain), raw=False)
        if ended:
            self.close()

    def first_whole(self) -> bool:
        """Whether the client's first TLS record (its ClientHello) has come whole."""
        return bool(self._first_need) and self._raw_in >= self._first_need

    def _flush(self) -> None:
        out = self._tls_out
        if out is not None and out.pending and self.down is not None:
            self.down.write(out.read())

    def _tell_plain(self) -> None:
        """A plain client on a TLS port: closed at once.  (Telling it in HTTP/2 would not
        do: a gRPC client takes a GOAWAY before its call as a reason to reconnect, for
        ever; our SDK asks the port how it speaks and says so itself.)"""
        self.close(abort=True)

    def send(self, data: bytes) -> None:
        """Bytes from the referee to the client (encrypted when the link is TLS)."""
        down = self.down
        if down is None:
            return
        if self._tls is None:
            down.write(data)
            return
        try:
            self._tls.write(data)
        except (ssl.SSLError, ValueError):
            self.close(abort=True)
            return
        self._flush()

    def _spoken(self) -> None:
        self.spoke = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _no_hello(self) -> None:
        self._hello_timer = None
        if self.greeted_at is None:
            self.gate.ungreeted += 1
            self.close(abort=True)

    def greeted(self) -> None:
        """The servicer accepted a Hello on this link: its token decided, the link is out of
        its gate's caps and never evicted."""
        self.greeted_at = time.monotonic()
        if self._hello_timer is not None:
            self._hello_timer.cancel()
            self._hello_timer = None
        self.gate.uncount(self)

    def spent(self) -> None:
        """The servicer is done with this link (its seat's stream ended, or its Hello was
        refused): closed once its last status is through.  Until then a new stream would
        be over STREAMS_PER_LINK and cut at once."""
        if not self.closed:
            self.spent_at = time.monotonic()
            self._loop.call_later(SPENT_S, self.close)

    def received(self, data: bytes, raw: bool = True) -> None:
        """Bytes from the client (plaintext): relayed, up to a stream opened over the
        limit."""
        if raw:
            self.heard += 1
        cut = self.scan(data)
        if cut >= 0:
            data = data[:cut]
        elif self.frames != self._counted and self._over_budget():
            self.gate.flooded += 1
            self.close(abort=True)
            return
        if data:
            if self.up is not None:
                self.up.write(data)
            elif self._connecting is None and self._preface and self.gate.whole_preface:
                # the private side (gRPC) is opened for a whole preface only: a client
                # dribbling one costs the referee nothing behind the gate
                if not self.spoke:
                    self._spoken()
                self.pending += data
                if not PREFACE.startswith(self.pending):
                    self.close(abort=True)  # not HTTP/2
                    return
            elif self._connecting is None:
                self.first_bytes(data)
            else:
                self.pending += data
        if cut >= 0:
            self.gate.overrun += 1
            self.close(abort=True)

    def _over_budget(self) -> bool:
        now = time.monotonic()
        allowance = self._allowance + (now - self._stamp) * FRAMES_PER_S
        self._allowance = min(float(FRAME_BURST), allowance) - (self.frames - self._counted)
        self._stamp, self._counted = now, self.frames
        return self._allowance < 0

    def scan(self, data: bytes) -> int:
        """Follow the client's HTTP/2 frames through ``data``: the offset in it of the
        HEADERS frame that opens a stream over STREAMS_PER_LINK (0 if that frame began in
        an earlier read), or -1.  Only frame headers are read; payloads are skipped."""
        i, n = 0, len(data)
        if self._preface:
            i = min(self._preface, n)
            self._preface -= i
        head = self._head
        unpack = _U32.unpack_from
        while i < n:
            if self._skip:
                k = min(self._skip, n - i)
                self._skip -= k
                i += k
                continue
            if head or n - i < 9:
                start = i - len(head)
                k = min(9 - len(head), n - i)
                head += data[i : i + k]
                i += k
                if len(head) < 9:
                    break
                frame, at = bytes(head), 0
                head.clear()
            else:
                frame, at, start = data, i, i
                i += 9
            (word,) = unpack(frame, at)
            self.frames += 1
            self._skip = word >> 8
            if word & 0xFF == HEADERS:
                (sid,) = unpack(frame, at + 5)
                sid &= 0x7FFFFFFF
                if sid > self._last_sid:  # a new stream (a lower id: gRPC's error)
                    self._last_sid = sid
                    self.streams += 1
                    if self.streams > STREAMS_PER_LINK:
                        return max(start, 0)
        return -1

    def first_bytes(self, data: bytes) -> None:
        if not self.spoke:
            self._spoken()
        self.pending += data
        assert self.down is not None
        self.down.pause_reading()  # until the private side is open
        self._connecting = asyncio.ensure_future(self._open_up())

    async def _open_up(self) -> None:
        if self.closed:
            return
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        except OSError as exc:  # out of descriptors
            log.warning("gate: cannot reach the referee at %s: %s", self.upstream, exc)
            self.close(abort=True)
            return
        try:
            sock.setblocking(False)
            if _ABSTRACT:  # the name gRPC will report as the peer of this link's calls
                name = _TAG + secrets.token_hex(12)
                try:
                    sock.bind("\0" + name)
                    self.name = name
                    _links[name] = self
                except OSError as exc:  # unnamed: no Hello can be seen, none is awaited
                    log.warning("gate: cannot name a link (%s): no Hello deadline", exc)
                    if self._hello_timer is not None:
                        self._hello_timer.cancel()
                        self._hello_timer = None
            await self._loop.sock_connect(sock, self.upstream)
            if self.closed:
                sock.close()
                return
            await self._loop.create_unix_connection(lambda: _Up(self), sock=sock)
        except OSError as exc:
            sock.close()
            log.warning("gate: cannot reach the referee at %s: %s", self.upstream, exc)
            self.close(abort=True)
        except BaseException:
            sock.close()
            raise

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
        for timer in (self._timer, self._hello_timer, self._tls_timer):
            if timer is not None:
                timer.cancel()
        self._timer = self._hello_timer = self._tls_timer = None
        if self.name is not None:
            _links.pop(self.name, None)
        for t in (self.down, self.up):
            if t is not None and abort:
                t.abort()
            elif t is not None:
                t.close()
        if self.conn is not None and not self._adopting:  # no transport owns it yet
            if abort:
                _refuse(self.conn)
            else:
                self.conn.close()
        self.conn = None
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
        if self.link.gate.tls is not None:
            self.link.raw_received(data)
        else:
            self.link.received(data)

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
        self.link.send(data)

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

    def __init__(
        self,
        sock: socket.socket,
        upstream: str,
        handshake_s: float,
        hello_s: float | None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.sock: socket.socket | None = sock
        self.upstream = upstream
        self.tls = tls
        self.tls_s = TLS_HANDSHAKE_S
        self.whole_preface = False  # open the private side only once the preface is in
        self.handshake_s = handshake_s
        self.hello_s = hello_s  # None: no servicer tells us of Hellos (a bare gate)
        self.idle_s = IDLE_S
        self.links: dict[Link, None] = {}  # oldest first
        self.accepted = 0
        self.refused = 0  # accepted and closed at once (over a cap)
        self.evicted = 0  # closed to make room for a newcomer
        self.silent = 0  # closed by the handshake timeout
        self.ungreeted = 0  # closed for want of an accepted Hello within hello_s
        self.overrun = 0  # cut for opening a stream over STREAMS_PER_LINK
        self.flooded = 0  # cut for sending frames over the budget (FRAMES_PER_S)
        self.plaintext = 0  # plain bytes on a TLS port: told so, and closed
        self.tls_failed = 0  # a TLS handshake that failed (not TLS, no common cipher, ...)
        self.tls_late = 0  # closed by the TLS handshake deadline (tls_s)
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

    def uncount(self, link: Link) -> None:
        """``link`` showed its seat's token: out of the caps."""

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

    def __init__(
        self,
        path: Path,
        upstream: str,
        handshake_s: float = HANDSHAKE_S,
        hello_s: float | None = None,
    ) -> None:
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
        super().__init__(sock, upstream, handshake_s, hello_s)

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
    """The TCP door for remote seats, with per-peer and total caps on the connections that
    have not yet shown their seat's token, and TLS when given a context."""

    def __init__(
        self,
        host: str,
        port: int,
        upstream: str,
        per_peer: int = PER_PEER,
        total: int = TCP_TOTAL,
        handshake_s: float = HANDSHAKE_S,
        hello_s: float | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        family, kind, proto, _, addr = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setblocking(False)
            sock.bind(addr)
            # a deep queue: a burst of connections waits in the kernel (no descriptor of
            # ours) for the accept loop instead of having its SYNs dropped, retried a
            # second later — an honest client behind a burst would be that second late
            sock.listen(BACKLOG)
        except BaseException:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        self.per_peer = per_peer
        self.total = total
        self.by_peer: dict[str, int] = {}  # counted (token not yet shown) links per peer
        self.waiting = 0  # counted links in all
        self._reserve = DescriptorReserve(1)
        super().__init__(sock, upstream, handshake_s, hello_s, tls)
        self.whole_preface = True

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
            self._admit(conn, peer_key(str(addr[0])))

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
        """Take a connection in, within the caps.  When a cap is full, a newcomer that has
        sent its first message whole (an honest client, which has waited in the queue)
        may displace any link that has not; one that has not (a flood's, or a client whose
        bytes are a moment behind) only a link that has not either for SILENT_GRACE_S —
        so a flood that reconnects whatever is closed is refused at the cost of an accept,
        and cannot churn out a client that is about to speak."""
        full = self.by_peer.get(peer, 0) >= self.per_peer or self.waiting >= self.total
        ready = full and first_flight(conn, self.tls is not None)
        patient = 0.0 if ready else SILENT_GRACE_S
        if self.by_peer.get(peer, 0) >= self.per_peer and not self._evict(peer, patient):
            self.refused += 1
            _refuse(conn)
            return
        if self.waiting >= self.total and not self._evict(None, patient):
            self.refused += 1
            _refuse(conn)
            return
        conn.setblocking(False)
        with contextlib.suppress(OSError):
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        link = self._relay(conn, peer)
        link.counted = True
        self.by_peer[peer] = self.by_peer.get(peer, 0) + 1
        self.waiting += 1

    def _evict(self, peer: str | None, patient: float = 0.0) -> bool:
        """Make room among the counted links (of ``peer``, or of anyone) by closing the one
        that has had its chance, in this order: a link whose Hello was refused (closing
        anyway); the oldest whose client has not sent its first message whole (a TLS
        ClientHello or the HTTP/2 preface; one that has, waiting unread, is passed over);
        the oldest still in its handshake (TLS, or the preface) after TLS_STALL_S; when
        Hellos are awaited, the oldest that spoke but has no accepted Hello after
        EVICT_UNGREETED_S.  An honest client sends its first message at once, whole, and
        shows its token within a few round trips; a flood's connections send nothing, or
        a part: they go first.  ``patient``: a link of the second kind is passed over
        until it is this old."""
        now = time.monotonic()
        grace = now - EVICT_UNGREETED_S
        stalled = now - TLS_STALL_S
        silent_since = now - patient
        hellos = self.hello_s is not None and _ABSTRACT
        best: Link | None = None
        best_rank = 4
        for link in self.links:  # oldest first
            if not link.counted or (peer is not None and link.peer != peer):
                continue
            if link.spent_at is not None:
                rank = 0
            elif not link.spoke:  # not read yet: has it sent its first message whole?
                if link.born > silent_since or link.sent_first_flight():
                    continue
                rank = 1
            elif (not link.shaken and not link.first_whole()) or link._preface:
                if link.born > stalled:  # its first message came in part
                    continue
                rank = 2
            elif not link.shaken:  # the handshake goes on
                if link.born > grace:
                    continue
                rank = 2
            elif link.born > grace:
                continue
            elif hellos and link.greeted_at is None and link.name is not None:
                rank = 3
            else:
                continue
            if rank < best_rank:
                best, best_rank = link, rank
                if rank == 0:
                    break
        if best is None:
            return False
        self.evicted += 1
        best.close(abort=True)
        return True

    def uncount(self, link: Link) -> None:
        if link.counted:
            link.counted = False
            n = self.by_peer.get(link.peer, 0) - 1
            if n > 0:
                self.by_peer[link.peer] = n
            else:
                self.by_peer.pop(link.peer, None)
            self.waiting -= 1

    def forget(self, link: Link) -> None:
        if link in self.links:
            self.uncount(link)
        super().forget(link)

    def close(self) -> None:
        super().close()
        self._reserve.release()


_U32 = struct.Struct(">I")
_PEEK = bytearray(5 + 16384)


def first_flight(conn: socket.socket, tls: bool) -> bool:
    """Whether ``conn``'s client has sent its whole first message, waiting unread: a TLS
    ClientHello record (``tls``), or the HTTP/2 preface.  An honest client sends it at
    once, in one piece, so it waits there while the connection waits in the accept queue;
    a flood sends nothing, or a part."""
    try:
        n = conn.recv_into(_PEEK, len(_PEEK), socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except OSError:  # nothing yet (EAGAIN), or reset
        return False
    if not tls:
        return n >= len(PREFACE) and _PEEK[: len(PREFACE)] == PREFACE
    if n < 5 or _PEEK[0] != TLS_HANDSHAKE_RECORD:
        return False
    return n >= 5 + int.from_bytes(_PEEK[3:5], "big")


def _refuse(conn: socket.socket) -> None:
    """Close at once with a reset: no lingering state for a connection we will not serve."""
    with contextlib.suppress(OSError):
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()
