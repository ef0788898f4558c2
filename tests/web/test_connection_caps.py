"""One address cannot hold the web server's connections (issue 21): a real ``arena play``
(the same door as ``arena serve``: ``arena.web.server``), and the rules of
``arena.web.connections`` on their own."""

from __future__ import annotations

import base64
import contextlib
import os
import socket
import time
from pathlib import Path

import httpx
import pytest
from test_host_check import arena_play

PER_ADDRESS = 64  # arena.web.connections' (not imported: the test also ran unfixed)


def _connect(source: str, port: int) -> socket.socket:
    s = socket.socket()
    s.bind((source, 0))
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    return s


def _websocket(source: str, port: int, table: str) -> socket.socket:
    """A WebSocket to the table, held open; from ``source``."""
    s = _connect(source, port)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(
        f"GET /play/{table}/ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        .encode()
    )  # fmt: skip
    head = s.recv(4096)
    assert head.startswith(b"HTTP/1.1 101 "), head[:200]
    return s


def _get(source: str, port: int) -> bytes:
    """The first 400 bytes answered to a GET of /play from ``source``."""
    with _connect(source, port) as s:
        s.sendall(f"GET /play HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        try:
            return s.recv(400)
        except ConnectionResetError:
            return b"(reset)"


def test_one_address_holds_at_most_its_share(tmp_path: Path):
    held: list[socket.socket] = []
    with arena_play(tmp_path) as (port, table), contextlib.ExitStack() as stack:
        stack.callback(lambda: [s.close() for s in held])
        # idle connections of one address make room for that address's next request
        held += [_connect("127.0.0.7", port) for _ in range(PER_ADDRESS + 40)]
        assert _get("127.0.0.7", port).startswith(b"HTTP/1.1 200 ")
        # WebSockets (being answered: never evicted) fill the address's share ...
        held += [_websocket("127.0.0.5", port, table) for _ in range(PER_ADDRESS)]
        # ... after which that address is refused, in one line, and nobody else is
        refused = _get("127.0.0.5", port)
        assert refused.startswith(b"HTTP/1.1 503 ") or refused in (b"", b"(reset)"), refused
        assert not refused or refused == b"(reset)" or b"your address" in refused, refused
        assert _get("127.0.0.6", port).startswith(b"HTTP/1.1 200 ")
        assert httpx.get(f"http://127.0.0.1:{port}/play", timeout=10).status_code == 200


def test_the_rules_evict_the_oldest_unanswered_and_refuse_when_all_are_answered():
    from arena.web.connections import Connections, Limits

    rules = Connections(Limits(total=4, per_address=2))
    a1 = rules.admit(("10.0.0.1", 1))
    a2 = rules.admit(("10.0.0.1", 2))
    assert a1 is not None and a2 is not None
    a3 = rules.admit(("10.0.0.1", 3))  # over the address's share: its oldest idle goes
    assert a3 is not None and a1.closed and rules.evicted == 1
    assert rules.begin(("10.0.0.1", 2)) is a2 and rules.begin(("10.0.0.1", 3)) is a3
    assert rules.admit(("10.0.0.1", 4)) is None and rules.refused == 1  # all answered
    # IPv6: one /64 is one address
    b1 = rules.admit(("2001:db8::1", 1))
    b2 = rules.admit(("2001:db8::2", 1))
    assert b1 is not None and b2 is not None and len(rules) == 4
    assert rules.admit(("2001:db8::3", 1)) is not None and b1.closed  # same /64, its oldest
    # the total: the oldest idle of anyone makes room
    c1 = rules.admit(("10.0.0.9", 1))
    assert c1 is not None and b2.closed and len(rules) == 4
    rules.end(a2)
    assert not a2.closed and next(iter(rules.idle)) is not a2  # idle again, youngest
    assert rules.stats()["open"] == 4


SEND_S = 60.0  # arena.web.connections'


def _tcp_state(s: socket.socket) -> int:
    """The connection's TCP state as this side sees it (1: established, 7: closed)."""
    return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0]


@pytest.mark.slow
def test_a_client_that_never_reads_its_responses_is_let_go(tmp_path: Path):
    """200 pipelined requests for a 28 KB script, none of it read, through a 4 KiB
    receive window: the server's answer stops on a full buffer (the app waits for room).
    Without a deadline that connection is held for ever, as busy; with one, it is closed
    SEND_S later, while a connection that reads is served in full."""
    with arena_play(tmp_path) as (port, _table):
        hog = socket.socket()
        hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        hog.bind(("127.0.0.9", 0))
        hog.connect(("127.0.0.1", port))
        request = f"GET /static/play.js HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
        hog.sendall(request * 200)
        try:
            time.sleep(5)
            assert _tcp_state(hog) == 1  # held, its response stalled
            deadline = time.monotonic() + SEND_S + 30
            while _tcp_state(hog) == 1 and time.monotonic() < deadline:
                time.sleep(1)
            assert _tcp_state(hog) != 1, "the server still holds a connection that never reads"
            page = httpx.get(f"http://127.0.0.1:{port}/static/play.js", timeout=10)
            assert page.status_code == 200 and len(page.content) > 20_000
        finally:
            hog.close()
