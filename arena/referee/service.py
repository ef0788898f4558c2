"""The gRPC face of the referee: authenticates each seat's stream and shuttles messages
between it and its match session.

Hardening: bounded message size, bounded concurrent streams, keepalive enforcement, a
startup deadline on the Hello, bounded inboxes (flooding cuts the seat), and no handler
ever lets a client's error reach the match loop.

Sockets (see :mod:`.gate`): in a match, gRPC listens only on a private Unix socket that no
sandbox can see (:meth:`RefereeServer.listen_private`); bots reach it through gates — one
connection per seat socket (:meth:`RefereeServer.listen_seat`), capped TCP for remote
seats — so no bot can spend the referee's descriptors.  gRPC's own handshake timeout,
idle-connection limit and connection quota stand behind them.

Behind gates, a connection carries one call: a gate cuts a connection that opens a second
stream, and gRPC allows one at a time (``grpc.max_concurrent_streams``).  Each call tells
the gate's link that carries it (:func:`.gate.link_of`, by the call's peer) whether its
Hello was accepted — a link without one is closed after ``HELLO_S`` — and when it is done:
a refused Hello, or the end of the seat's stream, closes the link.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import ssl
from pathlib import Path

import grpc

from bigtwo.v1 import referee_pb2_grpc as pb_grpc

from .gate import HELLO_S, STREAMS_PER_LINK, DescriptorReserve, SeatGate, TcpGate, _Gate, link_of
from .match_folder import socket_path
from .seat import Seat
from .session import MatchSession

log = logging.getLogger("arena.referee")

MAX_MESSAGE_BYTES = 64 * 1024
"""Largest message accepted from a bot: an action is a few dozen bytes."""
MAX_CONNECTIONS = 256
"""gRPC's own cap on open connections (behind the gates, which hold far fewer)."""


def server_options(max_streams: int) -> list[tuple[str, int]]:
    return [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", 1 << 20),
        ("grpc.max_concurrent_streams", max_streams),
        # keepalive: we ping idle clients, and refuse clients that ping too often
        ("grpc.keepalive_time_ms", 20_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
        ("grpc.http2.max_ping_strikes", 3),
        # our pings never stop, data or not: a waiting bot's acks are what tell the gates'
        # idle timeout (IDLE_S) that it is alive
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.max_connection_age_ms", 6 * 3600 * 1000),
        ("grpc.so_reuseport", 0),
        # a connection must finish the HTTP/2 handshake within 10 s (default 120 s), and
        # one with no call in flight for 60 s is closed; never more than MAX_CONNECTIONS
        ("grpc.server_handshake_timeout_ms", 10_000),
        ("grpc.max_connection_idle_ms", 60_000),
        ("grpc.max_allowed_incoming_connections", MAX_CONNECTIONS),
    ]


class RefereeService(pb_grpc.RefereeServicer):
    """Routes each stream to the session named in its Hello."""

    def __init__(self) -> None:
        self.sessions: dict[str, MatchSession] = {}

    async def Play(self, request_iterator, context):
        link = link_of(context.peer())  # None unless the call came through a gate
        try:
            session, seat = await self._hello(context)
        except BaseException:  # refused (context.abort raises), or cancelled
            if link is not None:
                link.spent()
            raise
        if session is None or seat is None:
            if link is not None:
                link.spent()
            return
        if link is not None:
            link.greeted()
        reader = asyncio.create_task(self._read(session, seat, context))
        try:
            # the session writes to this stream itself; the handler only keeps it open
            closed = asyncio.create_task(seat.closed.wait())
            await asyncio.wait({closed, reader}, return_when=asyncio.FIRST_COMPLETED)
            closed.cancel()
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
            session.detach(seat, "the stream closed")
            if link is not None:
                link.spent()  # no second stream on this connection, ever

    async def _hello(self, context) -> tuple[MatchSession | None, Seat | None]:
        try:
            first = await asyncio.wait_for(context.read(), HELLO_S)
        except TimeoutError:
            await context.abort(
                grpc.StatusCode.DEADLINE_EXCEEDED, f"no Hello within {HELLO_S:.0f} s"
            )
            return None, None
        if first is grpc.aio.EOF:
            return None, None
        if first.WhichOneof("msg") != "hello":
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "first message must be Hello")
        hello = first.hello
        session = self.sessions.get(hello.match_id)
        if session is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {hello.match_id!r}")
        assert session is not None
        if hello.seat >= len(session.seats):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, f"no seat {hello.seat}")
        seat = session.seats[hello.seat]
        if not hmac.compare_digest(seat.spec.token.encode(), hello.token.encode()):
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED, f"wrong token for seat {hello.seat}"
            )
        if session.finished:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the match is over")
        if seat.live or seat.gone or seat.connected.is_set():
            await context.abort(
                grpc.StatusCode.ALREADY_EXISTS, f"seat {hello.seat} already has (or had) a stream"
            )
        session.attach(seat, hello.bot_name, context)
        return session, seat

    async def _read(self, session: MatchSession, seat: Seat, context) -> None:
        try:
            while True:
                msg = await context.read()
                if msg is grpc.aio.EOF:
                    session.detach(seat, "the bot closed its stream")
                    return
                if not session.deliver(seat, msg):
                    session.detach(seat, "flooding: too many unanswered messages")
                    return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # oversize message, reset stream, ...
            session.detach(seat, f"stream error: {type(exc).__name__}: {exc}"[:300])


class RefereeServer:
    """A grpc.aio server on a Unix socket (and/or TCP) hosting match sessions.

    With :meth:`listen_private` first, seats get gates (:meth:`listen_seat`, and
    :meth:`listen_tcp` becomes a capped gate) and each connection carries one stream;
    without, the server listens directly, with up to ``max_streams`` concurrent streams
    per connection (in-process clients of one address share a connection)."""

    def __init__(self, max_streams: int = 64) -> None:
        self.service = RefereeService()
        self.max_streams = max_streams
        self._server: grpc.aio.Server | None = None
        self.addresses: list[str] = []
        self.private: Path | None = None
        self.gates: list[_Gate] = []
        self.started = False
        self.reserve = DescriptorReserve()

    @property
    def server(self) -> grpc.aio.Server:
        """The gRPC server, made at the first listen: its streams per connection depend on
        whether gates stand in front (:meth:`listen_private` first)."""
        if self._server is None:
            gated = self.private is not None
            streams = STREAMS_PER_LINK if gated else self.max_streams
            self._server = grpc.aio.server(options=server_options(streams))
            pb_grpc.add_RefereeServicer_to_server(self.service, self._server)
        return self._server

    def listen_private(self, folder: Path) -> str:
        """Listen on ``folder``/referee.sock, creating ``folder`` (mode 0700) — a folder no
        sandbox mounts: the gates relay to it."""
        if self._server is not None:
            raise RuntimeError("listen_private must come before any other listen")
        folder.mkdir(mode=0o700)
        path = socket_path(folder)
        self.private = path
        try:
            return self.listen_unix(path)
        except BaseException:
            self.private = None
            raise

    def listen_seat(self, folder: Path) -> str:
        """A seat's socket, ``folder``/referee.sock (``folder`` created mode 0755, the socket
        0666, for the sandbox to bind-mount): accepts one connection, ever."""
        if self.private is None:
            raise RuntimeError("listen_private first: seat gates relay to it")
        folder.mkdir(mode=0o755, exist_ok=True)
        gate = SeatGate(socket_path(folder), str(self.private), hello_s=HELLO_S)
        self._add_gate(gate)
        return f"unix://{gate.path}"

    def _add_gate(self, gate: _Gate) -> None:
        self.gates.append(gate)
        if self.started:
            gate.start()

    def listen_unix(self, path: Path) -> str:
        """Listen on a Unix socket at ``path`` (its folder must exist, owned by us)."""
        address = f"unix://{path}"
        if self.server.add_insecure_port(address) == 0:
            raise OSError(f"cannot listen on {address}")
        self.addresses.append(address)
        return address

    def listen_tcp(self, host_port: str, tls: ssl.SSLContext | None = None) -> str:
        """Listen on TCP ``HOST:PORT`` (port 0 picks a free one); returns the address.
        ``tls``: the gate speaks TLS with this context (see :mod:`.tls`); it needs
        :meth:`listen_private` first (the gate terminates TLS)."""
        host, sep, port_text = host_port.rpartition(":")
        if not sep or not host or not port_text.isdigit() or int(port_text) > 65535:
            raise OSError(f"--listen {host_port!r}: expected HOST:PORT, e.g. 127.0.0.1:50051")
        if tls is not None and self.private is None:
            raise RuntimeError("listen_private first: the TCP gate terminates TLS")
        if self.private is not None:
            try:
                gate = TcpGate(host, int(port_text), str(self.private), hello_s=HELLO_S, tls=tls)
            except OSError as exc:
                raise OSError(f"cannot listen on {host_port}: {exc}") from None
            self._add_gate(gate)
            address = f"{host}:{gate.port}"
            self.addresses.append(address)
            return address
        try:
            port = self.server.add_insecure_port(host_port)
        except RuntimeError as exc:
            raise OSError(f"cannot listen on {host_port}: {exc}") from None
        if port == 0:
            raise OSError(f"cannot listen on {host_port}")
        host = host_port.rsplit(":", 1)[0]
        address = f"{host}:{port}"
        self.addresses.append(address)
        return address

    def add(self, session: MatchSession) -> None:
        self.service.sessions[session.match_id] = session

    def remove(self, session: MatchSession) -> None:
        self.service.sessions.pop(session.match_id, None)

    async def start(self) -> None:
        await self.server.start()
        if self.private is not None:
            self.private.chmod(0o600)
        self.started = True
        for gate in self.gates:
            gate.start()

    def release_reserve(self) -> None:
        """Give back the descriptors held for clean-up (call first thing when cleaning up)."""
        self.reserve.release()

    async def stop(self, grace: float = 0.5) -> None:
        self.reserve.release()
        for gate in self.gates:
            gate.close_listener()
        await self.server.stop(grace)  # streams end with their status, through the gates
        for gate in self.gates:
            gate.close()
