"""The referee's sockets cannot be used to knock it over (issue 8, class 5).

gRPC listens only on a private socket; bots reach it through gates (arena.referee.gate):
one connection per seat socket, ever, one stream per connection, a Hello within a deadline,
and capped TCP for remote seats (the idle-connection flood against a real ``arena match
--listen`` is in test_remote_seats).  The probes are real: a hostile bot floods its own socket
from forked helpers while the arena runs under ``ulimit -n 1024``, on both backends; a bot
that speaks HTTP/2 by hand opens call after call over its seat's one connection, on both
backends (and, with the limits lifted, shows what it would cost); 64 TCP connections that
speak HTTP/2 but never say Hello are opened to a referee listening on loopback while an
honest remote seat joins; the gates themselves are hammered
by several processes at once."""

import asyncio
import contextlib
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
import pytest

from arena.record import replay
from arena.referee import gate as gates
from arena.referee import service
from arena.referee.gate import SeatGate, TcpGate, peer_key
from arena.referee.service import RefereeServer
from arena.referee.session import MatchSession, SeatSpec
from arena.referee.time_control import TimeControl
from bigtwo import RuleSet
from bigtwo.client import play_match
from bigtwo.loader import load_bot_class

from .bots.stream_opener import (
    END_HEADERS,
    HEADER_BLOCK,
    HEADERS,
    PREFACE,
    SETTINGS,
    WINDOW_UPDATE,
    frame,
)
from .conftest import leftovers
from testkit import arena_command

BOTS = Path(__file__).parent / "bots"
GOOD = BOTS / "good.py"


# `python -m arena ARGS`, with the referee's temporary folders (the match's) in argv[1]
ARENA = (
    "import sys, tempfile; tempfile.tempdir = sys.argv[1]; sys.argv[:2] = ['arena']; "
    "from arena.cli import main; main()"
)


def arena_match(tmp: Path, *args: str) -> list[str]:
    """The arena command, with 1024 descriptors, soft and hard (the common default)."""
    return [
        *("bash", "-c", 'ulimit -n 1024 && exec "$@"', "arena", sys.executable, "-c", ARENA),
        *(str(tmp), "match", "--hands", "1", "--seed", "3", "--json", *args),
    ]


@pytest.fixture
def short_tmp():
    """A folder for the match's own folder (other tests' come and go in /tmp), with a short
    path (Unix socket paths are bounded); removed afterwards, whatever happened."""
    tmp = Path(tempfile.mkdtemp(prefix="t-"))
    yield tmp
    shutil.rmtree(tmp, ignore_errors=True)


def hostile_match(bot: Path, backend: str, tmp_path: Path, tmp: Path) -> dict:
    """``arena match`` of ``bot`` against three good bots (a subprocess with its own
    temporary folder ``tmp``); the result, after checking that the match ended, the good
    seats saw nothing and the record replays."""
    record = tmp_path / "m.jsonl"
    args = ["--sandbox", backend, "--move-ms", "8000", "--record", str(record)]
    proc = subprocess.run(
        arena_match(tmp, *args, str(bot), str(GOOD), str(GOOD), str(GOOD)),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert result["match_over"] and result["sandbox"] == backend
    for seat in result["seats"][1:]:
        assert seat["faults"] == [] and not seat["forfeit"], seat
    assert replay(record).complete
    return result


def test_a_socket_flood_under_1024_descriptors(backend, tmp_path, short_tmp):
    bot = BOTS / "socket_flood.py"
    tmp = short_tmp
    result = hostile_match(bot, backend, tmp_path, tmp)
    # the probe ran, tried thousands of connections, and every one was refused
    faults = result["seats"][0]["faults"]
    assert len(faults) == 1, faults
    detail = faults[0]["detail"]
    assert "BREACH" not in detail and "SOCKET PROBE" in detail, detail
    report = re.search(r"helpers=(\d+) attempts=(\d+) connected=(\d+) refused=(\{.*?\})", detail)
    assert report, detail
    helpers, attempts, connected = (int(report.group(i)) for i in (1, 2, 3))
    refused = json.loads(report.group(4))
    assert helpers >= 16 and attempts >= 1600 and connected == 0, detail
    assert sum(refused.values()) == attempts and "EMFILE" not in refused, detail
    time.sleep(0.3)
    assert leftovers(result["match_id"], bot.name) == []
    assert list(tmp.iterdir()) == []  # sockets and folders removed


STREAM_REPORT = re.compile(
    r"STREAM PROBE: attached=1 attempts=(\d+) served=(\d+) refused=(\d+) stalled=(\d+) cut=(\d)"
)


def _stream_report(text: str) -> dict[str, int]:
    assert "STREAM PROBE FAILED" not in text, text
    m = STREAM_REPORT.search(text)
    assert m, text  # the probe ran: it held its seat and reported
    keys = ("attempts", "served", "refused", "stalled", "cut")
    return dict(zip(keys, (int(g) for g in m.groups()), strict=True))


def test_a_bot_opening_calls_over_its_connection_is_cut(backend, tmp_path, short_tmp):
    """Once its seat is attached, the bot opens Play after Play over its one connection:
    the gate cuts the connection at the first extra stream, before it reaches gRPC; the
    match finishes and the other seats see nothing."""
    bot = BOTS / "stream_opener.py"
    result = hostile_match(bot, backend, tmp_path, short_tmp)
    bad = result["seats"][0]
    assert bad["forfeit"]
    got = _stream_report(" | ".join(f["detail"] for f in bad["faults"]))
    # one extra call written, none answered by the referee, and the connection is gone
    assert got["attempts"] >= 1 and got["served"] == 0 and got["cut"] == 1, got
    assert got["attempts"] + got["refused"] <= 3, got
    time.sleep(0.3)
    assert leftovers(result["match_id"], bot.name) == []
    assert list(short_tmp.iterdir()) == []


async def _probe_in_process(tmp: Path) -> tuple[dict[str, int], int, gates.SeatGate]:
    """A match whose seat 0 is the stream probe (a separate process, unsandboxed) and
    whose other seats are honest; returns the probe's report, the calls of seat 0's
    connection that reached the servicer, and seat 0's gate."""
    good = load_bot_class(str(GOOD))
    rules = RuleSet.preset("hk").replace(match_end="hands", match_end_value=1)
    calls = 0

    tmp.mkdir()
    server = RefereeServer()
    server.listen_private(tmp / "referee")
    seats = [server.listen_seat(tmp / f"sock{i}") for i in range(4)]
    tc = TimeControl(move_ms=8000, startup_ms=60_000)
    session = MatchSession(rules, [SeatSpec(f"b{i}") for i in range(4)], 3, tc)
    server.add(session)
    hello = server.service._hello

    async def counted(context):  # the calls that came through seat 0's gate
        nonlocal calls
        link = gates.link_of(context.peer())
        calls += link is not None and link.gate is server.gates[0]
        return await hello(context)

    server.service._hello = counted
    await server.start()
    runner = asyncio.create_task(session.run())
    env = {
        **os.environ,
        "ARENA_ADDRESS": seats[0],
        "ARENA_MATCH_ID": session.match_id,
        "ARENA_SEAT": "0",
        "ARENA_TOKEN": session.seats[0].spec.token,
    }
    bot = BOTS / "stream_opener.py"
    probe = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "bigtwo.run", str(bot)), env=env, stderr=subprocess.PIPE
    )
    _, err = await asyncio.wait_for(probe.communicate(), 120)
    honest = [
        asyncio.create_task(play_match(good(), seats[i], session.match_id, i, s.spec.token))
        for i, s in enumerate(session.seats)
        if i
    ]
    summary = await asyncio.wait_for(runner, 120)
    await asyncio.gather(*honest)
    await server.stop(0)
    for seat in summary.seats[1:]:
        assert seat.faults == () and not seat.forfeit, seat
    return _stream_report(err.decode()), calls, server.gates[0]


async def test_the_stream_probe_reaches_no_servicer_and_would_without_the_limits(monkeypatch):
    """In process, where the referee's side can be counted: with the limits, one call (the
    seat's own) reaches the servicer and the gate cuts the connection at the next; with
    the limits lifted (gate and gRPC both), the same probe has call after call answered —
    it is a real probe, and each of those calls costs the referee's Python."""
    tmp = Path(tempfile.mkdtemp(prefix="t-"))
    try:
        got, calls, gate = await _probe_in_process(tmp / "a")
        assert got["served"] == 0 and got["cut"] == 1 and got["attempts"] >= 1, got
        assert calls == 1 and gate.overrun == 1 and gate.accepted == 1
        monkeypatch.setattr(gates, "STREAMS_PER_LINK", 10**6)
        monkeypatch.setattr(service, "STREAMS_PER_LINK", 10**6)
        monkeypatch.setattr(gates, "SPENT_S", 120.0)  # a refused Hello keeps the link
        got, calls, gate = await _probe_in_process(tmp / "b")
        assert got["served"] >= 100 and calls >= 1 + got["served"], (got, calls)
        assert gate.overrun == 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _raise_own_limit(n: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(n, hard), hard))


def _closed_by_peer(s: socket.socket) -> bool:
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:  # reset
        return True


async def _hello_less(port: int, src: str, repeat_s: float | None, until: float) -> tuple:
    """A TCP client that sends the HTTP/2 preface and a Play without a Hello, then keeps
    its connection busy: a window update every 0.25 s, or (``repeat_s``) a new Hello-less
    Play that often.  Returns how long the connection lasted, whether the other end closed
    it, whether gRPC spoke (its SETTINGS came back), and the calls opened."""
    loop = asyncio.get_running_loop()
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    s.bind((src, 0))
    await loop.sock_connect(s, ("127.0.0.1", port))
    start = time.monotonic()
    heard = bytearray()
    calls, sid = 1, 1
    opening = frame(SETTINGS, 0, 0) + frame(HEADERS, END_HEADERS, sid, HEADER_BLOCK)
    await loop.sock_sendall(s, PREFACE + opening)

    async def read() -> None:
        with contextlib.suppress(OSError):
            while chunk := await loop.sock_recv(s, 65536):
                heard.extend(chunk)

    reader = asyncio.create_task(read())
    try:
        while time.monotonic() - start < until:
            await asyncio.wait({reader}, timeout=repeat_s or 0.25)
            if reader.done():
                break
            with contextlib.suppress(OSError):
                if repeat_s:
                    sid += 2
                    calls += 1
                    await loop.sock_sendall(s, frame(HEADERS, END_HEADERS, sid, HEADER_BLOCK))
                else:
                    await loop.sock_sendall(s, frame(WINDOW_UPDATE, 0, 0, b"\0\0\0\1"))
    finally:
        reader.cancel()
        s.close()
    return time.monotonic() - start, reader.done(), heard[3:4] == b"\4", calls


async def test_tcp_links_without_a_hello_are_closed_and_a_remote_seat_gets_in():
    """64 clients from 16 addresses fill the TCP gate's total cap: each sends the HTTP/2
    preface and a Play without a Hello, then keeps its connection busy (never idle).  An
    honest remote seat arriving while the cap is full takes the place of one of them and
    plays its match; the others are closed at the Hello deadline."""
    _raise_own_limit(1024)
    good = load_bot_class(str(GOOD))
    rules = RuleSet.preset("hk").replace(match_end="hands", match_end_value=1)
    hello_s = 6.0
    tmp = Path(tempfile.mkdtemp(prefix="t-"))

    try:
        server = RefereeServer()
        server.listen_private(tmp / "referee")
        seats = [server.listen_seat(tmp / f"sock{i}") for i in range(1, 4)]
        address = server.listen_tcp("127.0.0.1:0")
        gate = server.gates[-1]
        assert isinstance(gate, TcpGate) and gate.hello_s == gates.HELLO_S
        gate.hello_s = hello_s  # a shorter deadline, for the test
        tc = TimeControl(move_ms=8000, startup_ms=120_000)
        session = MatchSession(rules, [SeatSpec(f"b{i}") for i in range(4)], 3, tc)
        server.add(session)
        await server.start()
        runner = asyncio.create_task(session.run())
        honest = [
            asyncio.create_task(
                play_match(good(), seats[i - 1], session.match_id, i, session.seats[i].spec.token)
            )
            for i in range(1, 4)
        ]
        flood = [
            asyncio.create_task(_hello_less(gate.port, f"127.0.3.{1 + i // 4}", None, 3 * hello_s))
            for i in range(gates.TCP_TOTAL)
        ]
        await asyncio.sleep(0.5)
        assert len(gate.links) == gates.TCP_TOTAL  # the cap is full
        await asyncio.sleep(gates.EVICT_UNGREETED_S)
        remote = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "bigtwo.run", str(GOOD), "--address", address),
            *("--match-id", session.match_id, "--seat", "0"),
            f"--token={session.seats[0].spec.token}",  # a token may start with "-"
            stderr=subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(remote.communicate(), 300)
        summary = await asyncio.wait_for(runner, 120)
        await asyncio.gather(*honest)
        out = await asyncio.gather(*flood)
        await asyncio.sleep(0.1)
        left = len(gate.links)
        await server.stop(0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert remote.returncode == 0, err.decode()[-2000:]
    assert summary.match_over
    for seat in summary.seats:
        assert seat.faults == () and not seat.forfeit, seat
    assert all(cut and spoke and calls == 1 for _, cut, spoke, calls in out), out
    lasted = sorted(t for t, *_ in out)
    # one made room for the remote seat; the rest lasted until the Hello deadline
    assert gate.evicted == 1 and lasted[0] < hello_s - 0.5, lasted
    assert all(hello_s - 0.5 < t < hello_s + 3 for t in lasted[1:]), lasted
    assert gate.ungreeted == gates.TCP_TOTAL - 1 and gate.refused == 0 and left == 0


async def test_a_second_call_or_a_refused_hello_ends_a_tcp_link():
    """Over TCP: clients that open a Hello-less Play every 0.3 s are cut at the second,
    before it reaches gRPC; a client whose Hello is refused gets the referee's answer, and
    then its connection is closed."""

    folder = Path(tempfile.mkdtemp(prefix="t-"))
    server = RefereeServer()
    try:
        server.listen_private(folder / "referee")
        address = server.listen_tcp("127.0.0.1:0")
        gate = server.gates[-1]
        await server.start()
        repeaters = await asyncio.gather(
            *(_hello_less(gate.port, "127.0.4.1", 0.3, 10.0) for _ in range(4))
        )
        assert gate.overrun == 4 and not gate.links
        # a wrong Hello: refused, and the connection goes soon after
        from bigtwo.v1 import referee_pb2 as pb
        from bigtwo.v1 import referee_pb2_grpc as pb_grpc

        async with grpc.aio.insecure_channel(address) as ch:
            call = pb_grpc.RefereeStub(ch).Play()
            await call.write(pb.BotMessage(hello=pb.Hello(match_id="nope", token="x")))
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await call.read()
            assert refused.value.code() == grpc.StatusCode.NOT_FOUND
            assert len(gate.links) == 1
            await asyncio.sleep(gates.SPENT_S + gates.LINGER_S + 0.5)
            assert not gate.links and gate.overrun == 4
    finally:
        await server.stop(0)
        shutil.rmtree(folder, ignore_errors=True)
    for lasted, cut, spoke, calls in repeaters:
        assert cut and spoke and calls == 2 and lasted < 2.0


@pytest.mark.serial
async def test_a_flood_of_tiny_frames_is_cut_and_an_honest_pace_is_not(tmp_path):
    """Following frames costs the gate Python: past a burst, a client may send frames at
    FRAMES_PER_S.  Empty frames sent as fast as they go are cut; most of a burst at once,
    then frames at half the rate for two seconds (more than the burst in all), pass."""

    upstream = await _echo_server(tmp_path / "up.sock")
    gate = TcpGate("127.0.0.1", 0, str(tmp_path / "up.sock"))
    gate.start()
    loop = asyncio.get_running_loop()

    async def send(frames: int, paced: int = 0, per_s: float = 1.0) -> bool:
        """Whether the connection survives ``frames`` empty PINGs as fast as they go,
        then ``paced`` more at ``per_s``."""
        s = socket.socket()
        s.setblocking(False)
        await loop.sock_connect(s, ("127.0.0.1", gate.port))
        reader = asyncio.create_task(_drain(loop, s))
        try:
            await loop.sock_sendall(s, PREFACE)
            batch = 250
            for _ in range(0, frames, batch):
                await loop.sock_sendall(s, frame(6, 0, 0, bytes(8)) * batch)
            start = time.monotonic()
            for i in range(0, paced, batch):
                await asyncio.sleep(max(0.0, start + (i + batch) / per_s - time.monotonic()))
                await loop.sock_sendall(s, frame(6, 0, 0, bytes(8)) * batch)
            await asyncio.sleep(0.2)
            return not reader.done()
        except OSError:
            return False
        finally:  # the loop stops watching the socket before its descriptor is freed: the
            reader.cancel()  # next connection may get the same number (a stale watch on it
            await asyncio.wait({reader})  # failed the next sock_connect, seen under load)
            s.close()

    flood = await send(gates.FRAME_BURST + 4 * gates.FRAMES_PER_S)
    burst, rate = gates.FRAME_BURST, gates.FRAMES_PER_S
    paced = await send(burst - rate // 2, paced=rate, per_s=rate / 2)
    gate.close()
    upstream.close()
    assert not flood and paced and gate.flooded == 1


async def _drain(loop: asyncio.AbstractEventLoop, s: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while await loop.sock_recv(s, 65536):
            pass


def test_the_per_peer_cap_counts_ipv6_by_64():
    assert peer_key("127.0.0.5") == "127.0.0.5"
    assert peer_key("::ffff:127.0.0.5") == "127.0.0.5"
    a, b = peer_key("2001:db8:1:2::1"), peer_key("2001:db8:1:2:ffff:ffff:ffff:fffe")
    assert a == b == "2001:db8:1:2::/64"
    assert peer_key("2001:db8:1:3::1") != a
    assert peer_key("fe80::1%eth0") == "fe80::/64"


# ----- the gates themselves ----------------------------------------------------------------

HAMMER = r"""
import errno, json, socket, sys, time
path, n = sys.argv[1], int(sys.argv[2])
served = connected = 0
refused = {}
held = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(path)
        connected += 1
        s.sendall(b"ping")
        if s.recv(4) == b"ping":
            served += 1
            held.append(s)
            continue
        refused["dropped"] = refused.get("dropped", 0) + 1  # queued, then cut
    except OSError as exc:
        name = errno.errorcode.get(exc.errno or 0, type(exc).__name__)
        refused[name] = refused.get(name, 0) + 1
    s.close()
print(json.dumps({"served": served, "connected": connected, "refused": refused}))
"""


async def _echo_server(path: Path) -> asyncio.AbstractServer:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception, asyncio.CancelledError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    return await asyncio.start_unix_server(echo, path=str(path))


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def test_a_seat_gate_serves_one_connection_ever(tmp_path):
    """Four processes race for one seat socket, 500 connections each: exactly one is
    served, the rest are refused, and the referee holds no more descriptors than before."""

    upstream = await _echo_server(tmp_path / "up.sock")
    (tmp_path / "seat").mkdir()
    gate = SeatGate(tmp_path / "seat" / "referee.sock", str(tmp_path / "up.sock"))
    assert oct(gate.path.stat().st_mode & 0o777) == "0o666"
    before = _fds()
    gate.start()
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-c", HAMMER, str(gate.path), "500", stdout=subprocess.PIPE
        )
        for _ in range(4)
    ]
    reports = [json.loads((await p.communicate())[0]) for p in procs]
    during = _fds()
    assert not gate.path.exists() and gate.sock is None
    gate.close()
    upstream.close()
    assert sum(r["served"] for r in reports) == 1, reports
    assert gate.accepted == 1
    refused = sum(sum(r["refused"].values()) for r in reports)
    assert refused + 1 == 2000, reports  # every other attempt refused, never left hanging
    assert during <= before + 2  # the relay's two ends (and the echo's), minus the listener


async def test_tcp_gate_caps_per_peer_and_in_total_and_sheds_silent_connections(tmp_path):
    upstream = await _echo_server(tmp_path / "up.sock")
    gate = TcpGate("127.0.0.1", 0, str(tmp_path / "up.sock"), per_peer=4, total=8)
    gate.whole_preface = False  # the echo speaks no HTTP/2
    gate.handshake_s = 0.5
    gate.start()
    loop = asyncio.get_running_loop()

    async def connect(src: str) -> socket.socket:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.bind((src, 0))
        with contextlib.suppress(ConnectionResetError):  # refused before we looked
            await loop.sock_connect(s, ("127.0.0.1", gate.port))
        return s

    async def talks(s: socket.socket) -> bool:
        try:
            await loop.sock_sendall(s, b"hi")
            return await asyncio.wait_for(loop.sock_recv(s, 2), 2) == b"hi"
        except (OSError, TimeoutError):
            return False

    # four talkers from one address fill its cap; a fifth from it is refused
    talkers = [await connect("127.0.0.5") for _ in range(4)]
    assert all([await talks(s) for s in talkers])
    fifth = await connect("127.0.0.5")
    assert not await talks(fifth)
    # silent connections from another address: once its cap is full, a newcomer that
    # has not spoken either is refused while the ones it would displace are younger
    # than SILENT_GRACE_S, and displaces the oldest after
    silent = [await connect("127.0.0.6") for _ in range(10)]
    await asyncio.sleep(0.1)
    assert gate.by_peer["127.0.0.6"] == 4 and gate.evicted == 0 and gate.refused == 7
    await asyncio.sleep(gates.SILENT_GRACE_S)
    silent.append(await connect("127.0.0.6"))
    await asyncio.sleep(0.05)
    assert gate.by_peer["127.0.0.6"] == 4 and gate.evicted == 1 and gate.refused == 7
    # the total cap (8) is full of talkers and silent ones: a newcomer from a third
    # address that has sent its first message whole (the HTTP/2 preface, waiting
    # unread as the gate accepts) evicts a silent one at once and is served
    newcomer = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    newcomer.bind(("127.0.0.7", 0))
    newcomer.connect(("127.0.0.1", gate.port))  # blocking: the gate has not run yet
    newcomer.sendall(PREFACE)
    newcomer.setblocking(False)
    echoed = await asyncio.wait_for(loop.sock_recv(newcomer, len(PREFACE)), 2)
    assert echoed == PREFACE and await talks(newcomer)
    assert gate.evicted == 2
    # the handshake timeout closes the silent ones that are left
    await asyncio.sleep(0.8)
    assert "127.0.0.6" not in gate.by_peer and gate.silent == 3
    assert all([await talks(s) for s in talkers])
    for s in [*talkers, fifth, *silent, newcomer]:
        s.close()
    gate.close()
    upstream.close()
    assert gate.refused == 7


async def test_a_relayed_connection_silent_past_the_idle_timeout_is_closed(tmp_path):
    upstream = await _echo_server(tmp_path / "up.sock")
    gate = TcpGate("127.0.0.1", 0, str(tmp_path / "up.sock"))
    gate.whole_preface = False  # the echo speaks no HTTP/2
    gate.idle_s = 0.4
    gate.start()
    loop = asyncio.get_running_loop()
    chatty, quiet = (socket.socket() for _ in range(2))
    for s in (chatty, quiet):
        s.setblocking(False)
        await loop.sock_connect(s, ("127.0.0.1", gate.port))
        await loop.sock_sendall(s, b"hi")
        assert await asyncio.wait_for(loop.sock_recv(s, 2), 2) == b"hi"
    for _ in range(12):  # 1.2 s: the chatty one speaks every 0.1 s
        await loop.sock_sendall(chatty, b"hi")
        assert await asyncio.wait_for(loop.sock_recv(chatty, 2), 2) == b"hi"
        await asyncio.sleep(0.1)
    with contextlib.suppress(ConnectionResetError):  # closed by the gate
        assert await asyncio.wait_for(loop.sock_recv(quiet, 2), 2) == b""
    assert len(gate.links) == 1
    for s in (chatty, quiet):
        s.close()
    gate.close()
    upstream.close()


async def test_sandbox_gc_spares_a_running_match_without_touching_its_seats():
    """gc asks a match's private socket whether its referee runs: probing a seat socket
    would take the seat's one connection before its bot."""
    from arena.referee.service import RefereeServer

    folder = Path(tempfile.mkdtemp(prefix="arena-"))
    server = RefereeServer()
    try:
        server.listen_private(folder / "referee")
        seats = [server.listen_seat(folder / f"sock{i}") for i in range(2)]
        await server.start()
        gc = await asyncio.create_subprocess_exec(
            *arena_command("sandbox", "gc"), stderr=subprocess.PIPE
        )
        _, err = await asyncio.wait_for(gc.communicate(), 120)
        assert gc.returncode == 0, err
        assert folder.is_dir()
        for address in seats:
            assert Path(address.removeprefix("unix://")).exists()
        assert all(gate.accepted == 0 for gate in server.gates)
    finally:
        await server.stop(0)
        shutil.rmtree(folder, ignore_errors=True)


FILL = r"""
import asyncio, json, os, sys, tempfile
from arena.bots import resolve
from arena.match import run_match
from arena.referee.time_control import TimeControl
from bigtwo import RuleSet

backend, tmp, bot = sys.argv[1:4]
tempfile.tempdir = tmp
held = []


def fill(session, result):  # whatever leaked, the table is full when the match ends
    while True:
        try:
            held.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            return


rules = RuleSet.preset("hk").replace(match_end="hands", match_end_value=1)
with asyncio.Runner() as runner:  # this child process's own event loop
    result = runner.run(
        run_match([resolve(bot)] * 4, rules, 3, TimeControl(), backend, on_hand_end=fill)
    )
print(json.dumps({"held": len(held), "match_id": result.match_id, "over": result.match_over}))
"""


def test_clean_up_works_with_no_descriptor_free(backend, tmp_path, short_tmp):
    """The descriptor table is filled at the end of the last hand (under ulimit -n 1024):
    every bot is still stopped and the match folder removed (the referee keeps a reserve)."""
    bot = tmp_path / "cleanup_probe.py"
    bot.write_text(GOOD.read_text())
    tmp = short_tmp
    limited = ["bash", "-c", 'ulimit -n 1024 && exec "$@"', "arena"]
    proc = subprocess.run(
        [*limited, sys.executable, "-c", FILL, backend, str(tmp), str(bot)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["over"] and out["held"] > 900
    time.sleep(0.3)
    assert leftovers(out["match_id"], bot.name) == []
    assert list(tmp.iterdir()) == []
