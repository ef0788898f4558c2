"""The web server's connections, held to account as the referee's gate holds its own
(``arena.referee.gate``): a visitor's connection is a descriptor, and descriptors are few.

Rules (every connection, every visitor, anonymous or not):

- **Header deadline**: a connection that is not being answered — just accepted, or idle
  after its last response — must deliver a complete request's headers within
  ``HEADER_S``, else it is closed.  Silent connections, and ones that dribble a request a
  byte at a time, cost a descriptor for ``HEADER_S`` at most (uvicorn itself has no such
  deadline: a connection that never completes its first request is held for ever).
- **Body deadlines**: a request's body must keep coming (no gap over ``BODY_GAP_S``) and
  be complete within ``BODY_S`` (:func:`_body_deadlines`); a response must be read (each
  part taken within ``SEND_S``, :func:`_send_deadline`).
- **Per-address cap**: one address (an IPv4 address; an IPv6 /64, which one host commonly
  holds) holds at most ``per_address`` connections, WebSockets included (one a table is
  normal; hundreds are not).
- **Total cap below the descriptor limit**: at most ``total`` connections, derived from the
  process's open-files limit with a reserve kept for the database, log files, the Play
  tables' sandboxes and the player (:meth:`Limits.for_this_process`).
- **Room for a newcomer**: when a cap is full, the oldest connection that is not being
  answered (it has not delivered its headers, or sits idle between requests) is closed to
  make room — of the same address for the per-address cap, of anyone for the total — so an
  idle flood cannot lock an honest visitor out; only when every connection is being
  answered is the newcomer refused (a one-line 503).

Whether a connection is "being answered" is known from the app's side: :class:`Tracked`
wraps the ASGI app and marks the connection busy from the moment the app is called (its
headers are complete) until it returns (its response is sent, or its WebSocket ended).
The connection is found by its peer's address and port, which uvicorn puts in the scope
(``client``) and which name one TCP connection at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import socket
import struct
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..addresses import peer_key

log = logging.getLogger("arena.web.connections")

HEADER_S = 10.0
"""A connection not being answered must deliver a complete request's headers this soon."""
BODY_GAP_S = 20.0
BODY_S = 120.0
"""A request's body must keep coming — no gap longer than BODY_GAP_S — and be complete
within BODY_S of its headers (5 MiB, the default upload cap, at 44 KB/s), else the
connection is closed: a body sent a byte at a time holds a descriptor no longer."""
SEND_S = 60.0
"""A client must make room for each part of a response this soon (while the app waits)."""
PER_ADDRESS = 64
"""Concurrent connections one address (IPv6: one /64) may hold: a browser keeps about six
per site and one WebSocket per open table; a classroom behind one NAT address needs more
(``arena serve --connections-per-address``)."""
RESERVE_MIN = 256
RESERVE_MAX = 4096
"""Descriptors kept out of the connections' reach: half the open-files limit, within these
bounds (at the common 1,024: 512 for connections, 512 for the rest)."""
TOTAL_MIN = 16

FULL = "the server is at its connection limit: try again in a moment"
ADDRESS_FULL = "your address holds as many connections as it may: close some, then retry"


def busy_reply(reason: str) -> bytes:
    """A 503 saying ``reason`` in one line, sent before the request is read."""
    body = (reason + "\n").encode()
    return (
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    )


@dataclass(frozen=True)
class Limits:
    """How many connections, from whom, for how long."""

    total: int
    per_address: int = PER_ADDRESS
    header_s: float = HEADER_S
    body_gap_s: float = BODY_GAP_S
    body_s: float = BODY_S
    send_s: float = SEND_S

    @classmethod
    def for_this_process(cls, per_address: int = PER_ADDRESS, header_s: float = HEADER_S) -> Limits:
        """The total cap from this process's open-files limit (read now: call it after any
        change to the limit), less a reserve of half of it (RESERVE_MIN to RESERVE_MAX)."""
        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY or soft > 1 << 20:
            soft = 1 << 20
        reserve = min(max(soft // 2, RESERVE_MIN), RESERVE_MAX)
        return cls(max(soft - reserve, TOTAL_MIN), per_address, header_s)


_RESET = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends a reset


class Conn:
    """One accepted connection, as the rules see it."""

    __slots__ = ("address", "busy", "closed", "peer", "registry", "timer", "transport")

    def __init__(self, registry: Connections, peer: tuple[str, int], address: str) -> None:
        self.registry = registry
        self.peer = peer  # (host, port): the key the app's scope gives back
        self.address = address  # what the per-address cap counts
        self.transport: asyncio.BaseTransport | None = None
        self.busy = 0  # app calls in progress on it
        self.closed = False
        self.timer: asyncio.TimerHandle | None = None

    def close(self) -> None:
        """Drop it now (a reset: nothing lingers for a connection we will not serve)."""
        if self.closed:
            return
        self.registry.forget(self)
        if self.transport is not None:
            sock = self.transport.get_extra_info("socket")
            if sock is not None:  # a reset: no orphan left holding the unsent answer
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
            self.transport.abort()  # type: ignore[attr-defined]


class Connections:
    """Every connection of one server, and the rules above."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.by_peer: dict[tuple[str, int], Conn] = {}
        self.idle: dict[Conn, None] = {}  # not being answered, oldest first
        self.idle_of: dict[str, dict[Conn, None]] = {}  # the same, by address
        self.count_of: dict[str, int] = {}
        self.accepted = 0
        self.refused = 0  # over a cap with nothing to evict
        self.evicted = 0  # closed to make room for a newcomer
        self.expired = 0  # closed by the header deadline
        self.slow_bodies = 0  # closed by a body deadline
        self.slow_readers = 0  # closed by the send deadline
        self.why = FULL  # the last refusal's reason

    def __len__(self) -> int:
        return len(self.by_peer)

    def admit(self, peer: tuple[str, int]) -> Conn | None:
        """A newly accepted connection's record, room made for it; None: refuse it
        (:meth:`refuse`, saying ``why``)."""
        address = peer_key(peer[0])
        if self.count_of.get(address, 0) >= self.limits.per_address and not self._evict(
            self.idle_of.get(address)
        ):
            self.refused += 1
            self.why = ADDRESS_FULL
            return None
        if len(self.by_peer) >= self.limits.total and not self._evict(self.idle):
            self.refused += 1
            self.why = FULL
            return None
        stale = self.by_peer.get(peer)
        if stale is not None:  # the same peer again: the old one is gone whatever we think
            stale.close()
        conn = Conn(self, peer, address)
        self.accepted += 1
        self.by_peer[peer] = conn
        self.count_of[address] = self.count_of.get(address, 0) + 1
        self._idle(conn)
        return conn

    def _evict(self, candidates: dict[Conn, None] | None) -> bool:
        victim = next(iter(candidates), None) if candidates else None
        if victim is None:
            return False
        self.evicted += 1
        victim.close()
        return True

    def _idle(self, conn: Conn) -> None:
        """Not being answered from now: on the eviction lists, its deadline running."""
        self.idle[conn] = None
        self.idle_of.setdefault(conn.address, {})[conn] = None
        with contextlib.suppress(RuntimeError):  # no loop: a unit test of the counts
            conn.timer = asyncio.get_running_loop().call_later(
                self.limits.header_s, self._deadline, conn
            )

    def _not_idle(self, conn: Conn) -> None:
        self.idle.pop(conn, None)
        mine = self.idle_of.get(conn.address)
        if mine is not None:
            mine.pop(conn, None)
            if not mine:
                del self.idle_of[conn.address]
        if conn.timer is not None:
            conn.timer.cancel()
            conn.timer = None

    def _deadline(self, conn: Conn) -> None:
        conn.timer = None
        if not conn.closed and not conn.busy:
            self.expired += 1
            conn.close()

    def begin(self, client: Any) -> Conn | None:
        """The app is answering a request of the connection from ``client`` (a scope's)."""
        conn = self.by_peer.get(tuple(client)) if client else None  # type: ignore[arg-type]
        if conn is None or conn.closed:
            return None
        conn.busy += 1
        if conn.busy == 1:
            self._not_idle(conn)
        return conn

    def end(self, conn: Conn) -> None:
        conn.busy -= 1
        if conn.busy == 0 and not conn.closed:
            self._idle(conn)

    def forget(self, conn: Conn) -> None:
        """The connection is closed (or about to be): off every list."""
        if conn.closed:
            return
        conn.closed = True
        self._not_idle(conn)
        if self.by_peer.get(conn.peer) is conn:
            del self.by_peer[conn.peer]
        n = self.count_of.get(conn.address, 0) - 1
        if n > 0:
            self.count_of[conn.address] = n
        else:
            self.count_of.pop(conn.address, None)

    def refuse(self, sock: socket.socket) -> None:
        """Turn a connection away at once, saying why if its buffer takes it."""
        with contextlib.suppress(OSError):
            sock.setblocking(False)
            sock.send(busy_reply(self.why))
        sock.close()

    def stats(self) -> dict[str, int]:
        return {
            "open": len(self.by_peer),
            "accepted": self.accepted,
            "refused": self.refused,
            "evicted": self.evicted,
            "expired": self.expired,
            "slow_bodies": self.slow_bodies,
            "slow_readers": self.slow_readers,
        }


class Watched(asyncio.Protocol):
    """The protocol uvicorn made for a connection, behind one that tells :class:`Connections`
    when it is gone.  A WebSocket upgrade swaps the transport's protocol for a new one
    (inside ``data_received``); the new one is taken in behind this one at once."""

    def __init__(self, inner: asyncio.Protocol, conn: Conn) -> None:
        self.inner = inner
        self.conn = conn
        self.transport: asyncio.Transport | None = None
        self.started = False  # the inner protocol has the connection

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.conn.transport = transport
        if self.conn.closed:  # evicted before its transport was up
            transport.abort()  # type: ignore[attr-defined]
            return
        self.started = True
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)
        transport = self.transport
        if transport is not None:
            now = transport.get_protocol()
            if now is not self:  # upgraded: follow the new protocol
                self.inner = now  # type: ignore[assignment]
                transport.set_protocol(self)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self.conn.registry.forget(self.conn)
        if self.started:
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


class Tracked:
    """ASGI middleware: a connection is busy while the app answers one of its requests
    (or serves its WebSocket); see :meth:`Connections.begin`."""

    def __init__(self, app: ASGIApp, connections: Connections) -> None:
        self.app = app
        self.connections = connections

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        conn = self.connections.begin(scope.get("client"))
        if conn is not None and scope["type"] == "http":
            receive = _body_deadlines(receive, conn, self.connections.limits)
            send = _send_deadline(send, conn, self.connections.limits)
        try:
            await self.app(scope, receive, send)
        finally:
            if conn is not None:
                self.connections.end(conn)


def _body_deadlines(receive: Receive, conn: Conn, limits: Limits) -> Receive:
    """``receive``, the connection closed when the request's body stalls (BODY_GAP_S) or
    takes too long in all (BODY_S).  Once the body is complete, waits are the app's
    business (a streaming response waits for the client to leave)."""
    loop = asyncio.get_running_loop()
    until = loop.time() + limits.body_s
    complete = False

    async def timed() -> Message:
        nonlocal complete
        if complete:
            return await receive()
        try:
            async with asyncio.timeout(min(limits.body_gap_s, until - loop.time())):
                message = await receive()
        except TimeoutError:
            conn.registry.slow_bodies += 1
            conn.close()
            complete = True
            return {"type": "http.disconnect"}
        if message["type"] != "http.request" or not message.get("more_body", False):
            complete = True
        return message

    return timed


def _send_deadline(send: Send, conn: Conn, limits: Limits) -> Send:
    """``send``, the connection closed when the client takes more than SEND_S to make
    room for a part of its response (uvicorn waits for a client that does not read
    until it does: a page requested and never read would hold its descriptor for ever).
    Later parts are dropped (uvicorn's, once the connection is gone)."""

    async def timed(message: Message) -> None:
        try:
            async with asyncio.timeout(limits.send_s):
                await send(message)
        except TimeoutError:
            conn.registry.slow_readers += 1
            conn.close()

    return timed
