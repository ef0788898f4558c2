"""The web arena's server: uvicorn behind a door of our own (``serve_app``), which both
``arena serve`` and ``arena play`` run.

uvicorn parses HTTP and WebSockets and runs the app, but it accepts every connection the
kernel hands it and never times out one that has not sent a request: 1,100 idle
connections at a 1,024-descriptor limit left no descriptor for anyone, and no page
answered.  Here the listening sockets are ours: :class:`Door` accepts in bounded batches
and lets each connection in only under :mod:`arena.web.connections`' rules (header
deadline, per-address and total caps below the descriptor limit, the oldest connection not
being answered evicted for a newcomer); uvicorn gets the connections we let in.  When
something else has used up the descriptors, a reserved one is spent to take a waiting
connection off the queue and turn it away, and accepting pauses a moment (as the referee's
gate does).  The Host each request names is checked too (:mod:`arena.web.hosts`).

Everything else — signals (Ctrl-C, SIGTERM), graceful shutdown, the app's start and end —
is uvicorn's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import logging
import socket
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import uvicorn
from uvicorn.config import STARTUP_FAILURE

from ..referee.gate import DescriptorReserve
from .connections import Connections, Limits, Tracked, Watched
from .hosts import HostCheck, allowed_hosts

log = logging.getLogger("arena.web.server")

ACCEPT_BATCH = 64
"""Connections taken off the listen queue at a time: how far the total cap can be overrun
for a moment (evicted connections' descriptors are released a loop turn later)."""
BACKLOG = 2048
PAUSE_S = 0.2
_OUT_OF_DESCRIPTORS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


class ListenError(Exception):
    """The address cannot be listened on (taken, not this machine's, ...)."""


def listen(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for ``host`` (every address it names) and ``port``."""
    try:
        infos = socket.getaddrinfo(
            host.strip("[]") or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise ListenError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    socks: list[socket.socket] = []
    seen: set[Any] = set()
    try:
        for family, kind, proto, _name, addr in infos:
            if addr in seen:
                continue
            seen.add(addr)
            sock = socket.socket(family, kind, proto)
            socks.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and len(infos) > 1:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.setblocking(False)
            sock.bind(addr)
            sock.listen(BACKLOG)
    except OSError as exc:
        for sock in socks:
            sock.close()
        raise ListenError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return socks


class Door:
    """A listening socket whose connections enter under :class:`Connections`' rules; it
    stands where uvicorn keeps its asyncio servers (``close``, ``wait_closed``)."""

    def __init__(self, sock: socket.socket, protocol: Any, connections: Connections) -> None:
        self.sock: socket.socket | None = sock
        self.protocol = protocol  # uvicorn's protocol factory
        self.connections = connections
        self.loop = asyncio.get_running_loop()
        self.reserve = DescriptorReserve(1)
        self.adopting: set[asyncio.Future[None]] = set()
        self.loop.add_reader(sock.fileno(), self._readable)

    def _readable(self) -> None:
        for _ in range(ACCEPT_BATCH):
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
            self._enter(conn, addr)

    def _enter(self, sock: socket.socket, addr: Any) -> None:
        peer = (str(addr[0]), int(addr[1])) if isinstance(addr, tuple) else ("", 0)
        conn = self.connections.admit(peer)
        if conn is None:
            self.connections.refuse(sock)
            return
        sock.setblocking(False)
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        task = asyncio.ensure_future(self._adopt(sock, conn))
        self.adopting.add(task)  # held until done (the loop keeps only a weak reference)
        task.add_done_callback(self.adopting.discard)

    async def _adopt(self, sock: socket.socket, conn: Any) -> None:
        try:
            await self.loop.connect_accepted_socket(lambda: Watched(self.protocol(), conn), sock)
        except OSError:
            sock.close()
            conn.close()

    def _shed(self) -> None:
        """No descriptor to accept with: spend the reserved one to take a waiting
        connection off the queue and turn it away, then stop accepting for a moment."""
        self.reserve.release()
        if self.sock is not None:
            with contextlib.suppress(OSError):
                conn, _ = self.sock.accept()
                self.connections.refused += 1
                self.connections.refuse(conn)
        self.reserve = DescriptorReserve(1)
        if self.sock is None:
            return
        self.loop.remove_reader(self.sock.fileno())

        def resume() -> None:
            if self.sock is not None:
                self.loop.add_reader(self.sock.fileno(), self._readable)

        self.loop.call_later(PAUSE_S, resume)

    def close(self) -> None:
        if self.sock is None:
            return
        sock, self.sock = self.sock, None
        with contextlib.suppress(Exception):
            self.loop.remove_reader(sock.fileno())
        sock.close()
        self.reserve.release()

    async def wait_closed(self) -> None:
        """uvicorn waits for its connections itself (``server_state``)."""


class GuardedServer(uvicorn.Server):
    """uvicorn's server on our doors instead of its own asyncio servers."""

    def __init__(
        self, config: uvicorn.Config, socks: Sequence[socket.socket], connections: Connections
    ) -> None:
        super().__init__(config)
        self.socks = list(socks)
        self.connections = connections

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await self.lifespan.startup()
        if self.lifespan.should_exit:
            sys.exit(STARTUP_FAILURE)
        config = self.config

        def protocol() -> asyncio.Protocol:
            return config.http_protocol_class(  # type: ignore[call-arg]
                config=config, server_state=self.server_state, app_state=self.lifespan.state
            )

        self.servers = [Door(sock, protocol, self.connections) for sock in self.socks]  # type: ignore[misc]
        self.started = True


def serve_app(
    app: Any,
    host: str,
    port: int,
    *,
    hosts: Iterable[str] = (),
    per_address: int | None = None,
    socks: Sequence[socket.socket] | None = None,
    hint: str = "",
) -> None:
    """Serve ``app`` on ``host:port`` until Ctrl-C or SIGTERM, behind the connection rules
    and the Host check (``hosts``: names allowed beside the bind's own; see
    :func:`arena.web.hosts.allowed_hosts`).  ``socks``: already listening (from
    :func:`listen`), else opened here (:class:`ListenError` when they cannot be); ``hint``:
    what a refused visitor is told to do about it."""
    if socks is None:
        socks = listen(host, port)
    port = socks[0].getsockname()[1]
    limits = Limits.for_this_process()
    if per_address is not None:
        limits = dataclasses.replace(limits, per_address=per_address)
    connections = Connections(limits)
    checked = HostCheck(app, allowed_hosts(host, port, hosts), hint)
    config = uvicorn.Config(
        Tracked(checked, connections),
        host=host,
        port=port,
        http="h11",  # its limit on a request's head (16 KiB); httptools has none
        log_level="warning",
        proxy_headers=False,
    )
    server = GuardedServer(config, socks, connections)
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn raises Ctrl-C again once it has shut down
        pass
    finally:
        for sock in socks:
            sock.close()
    if not server.started:
        sys.exit(STARTUP_FAILURE)
