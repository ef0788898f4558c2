"""Hostile bots, against both sandbox backends.  For each: the match finishes in bounded
time, the right fault is recorded against the right seat, the honest seats' results are
valid, nothing is left behind (container, process, control group, socket, folder), and the
next match is normal.  Hostile bots that probe a boundary report a breach by raising
"BREACH: ..." (recorded as a fault), so a breach fails the test with its evidence."""

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from arena.bots import resolve
from arena.match import run_match
from arena.record import replay
from arena.referee.time_control import TimeControl
from bigtwo import RuleSet

from .conftest import leftovers
from testkit import arena

BOTS = Path(__file__).parent / "bots"
RULES = RuleSet.preset("hk").replace(match_end="hands", match_end_value=1)


async def play(backend, bad, tmp_path, **tc):
    bad_path = bad if isinstance(bad, Path) else BOTS / f"{bad}.py"
    specs = [resolve(str(bad_path))] + [resolve(str(BOTS / "good.py"))] * 3
    control = TimeControl(**{"move_ms": 1500, "bank_ms": 1000, "startup_ms": 30000, **tc})
    record = tmp_path / "match.jsonl"
    folders = set(Path(tempfile.gettempdir()).glob("arena-*"))
    start = time.monotonic()
    result = await run_match(specs, RULES, 3, control, backend, record)
    elapsed = time.monotonic() - start
    assert result.match_over and result.sandbox == backend
    for seat in result.seats[1:]:
        assert seat.faults == () and not seat.forfeit, seat
    assert replay(record).complete  # every move, the referee's included, is legal
    time.sleep(0.3)
    assert leftovers(result.match_id, bad_path.name) == []
    assert set(Path(tempfile.gettempdir()).glob("arena-*")) <= folders  # sockets, folders
    bad_seat = result.seats[0]
    for fault in bad_seat.faults:
        assert "BREACH" not in fault.detail, fault.detail
    return bad_seat, elapsed


def kinds(seat):
    return [f.kind for f in seat.faults]


async def test_loops_forever(backend, tmp_path):
    seat, elapsed = await play(backend, "spin", tmp_path, move_ms=300, bank_ms=0, max_strikes=2)
    assert kinds(seat) == ["timeout", "timeout"] and seat.forfeit
    assert elapsed < 60


async def test_sleeps_past_the_deadline(backend, tmp_path):
    seat, _ = await play(backend, "sleeper", tmp_path, move_ms=200, bank_ms=0, max_strikes=2)
    assert kinds(seat) == ["timeout", "timeout"] and seat.forfeit


async def test_allocates_memory_until_stopped(backend, tmp_path):
    seat, _ = await play(backend, "memory_hog", tmp_path)
    assert seat.faults and seat.faults[0].kind == "crash"
    detail = seat.faults[0].detail
    assert ("OOMKilled" in detail) if backend == "docker" else ("MemoryError" in detail)


async def test_fork_bomb_is_capped_and_cleaned_up(backend, tmp_path):
    seat, _ = await play(backend, "fork_bomb", tmp_path)
    # capped (no BREACH) and cleaned up (no leftovers); forking that long may cost it time
    assert set(kinds(seat)) <= {"timeout"}


async def test_fills_tmp_and_cannot_write_elsewhere(backend, tmp_path):
    seat, _ = await play(backend, "disk_filler", tmp_path)
    assert seat.faults == ()


async def test_cannot_see_other_seats_or_processes(backend, tmp_path):
    seat, _ = await play(backend, "snooper", tmp_path)
    assert seat.faults == ()


async def test_child_cannot_outlive_the_match(backend, tmp_path):
    seat, _ = await play(backend, "outliver", tmp_path)
    assert seat.faults == ()  # and leftovers() found no process


async def test_garbage_on_the_socket_does_not_disturb_the_match(backend, tmp_path):
    seat, _ = await play(backend, "garbage", tmp_path)
    assert seat.faults == ()


async def test_flooding_actions(backend, tmp_path):
    seat, _ = await play(backend, "flooder", tmp_path)
    assert seat.forfeit and set(kinds(seat)) <= {"protocol", "disconnect", "crash"}


async def test_huge_message(backend, tmp_path):
    seat, _ = await play(backend, "huge_message", tmp_path)
    assert seat.forfeit and kinds(seat)[0] in ("disconnect", "crash")


async def test_no_network_even_to_the_hosts_loopback(backend, tmp_path):
    hits = []
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    port = server.getsockname()[1]
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                conn, addr = server.accept()
                hits.append(addr)
                conn.close()
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    bot = tmp_path / "net_probe.py"
    bot.write_text((BOTS / "net_probe.py.in").read_text().replace("@PORT@", str(port)))
    try:
        seat, _ = await play(backend, bot, tmp_path)
    finally:
        stop.set()
        thread.join(2)
        server.close()
    assert seat.faults == () and hits == []


@pytest.mark.parametrize(
    "name, kind, words",
    [
        ("illegal", "illegal", ""),  # passes when leading, plays what does not beat
        ("not_held", "illegal", "you do not hold"),
        ("raiser", "crash", "RuntimeError: boom"),
        ("junk_return", "illegal", "returned no play"),
    ],
)
async def test_bad_actions_cost_strikes_then_forfeit(backend, tmp_path, name, kind, words):
    seat, _ = await play(backend, name, tmp_path, max_strikes=3)
    assert seat.faults[0].kind == kind and words in seat.faults[0].detail
    assert seat.strikes == 3 and seat.forfeit


async def test_exits_mid_match(backend, tmp_path):
    seat, _ = await play(backend, "exiter", tmp_path)
    assert kinds(seat) == ["crash"] and "code 3" in seat.faults[0].detail
    assert seat.forfeit


async def test_crashes_at_start(backend, tmp_path):
    seat, _ = await play(backend, "crash_at_start", tmp_path)
    assert kinds(seat) == ["crash"] and "broken on purpose" in seat.faults[0].detail


async def test_never_connects(backend, tmp_path):
    # the honest seats must start within the allowance too, on a loaded machine
    seat, elapsed = await play(backend, "never_connects", tmp_path, startup_ms=8000)
    assert kinds(seat) == ["disconnect"] and "never connected" in seat.faults[0].detail
    assert elapsed < 60


async def test_the_next_match_is_normal(backend, tmp_path):
    await play(backend, "raiser", tmp_path, max_strikes=1)
    seat, _ = await play(backend, "good", tmp_path)
    assert seat.faults == ()


async def test_io_uring_is_denied(backend, tmp_path):
    seat, _ = await play(backend, "io_uring", tmp_path)
    assert seat.faults == ()


async def test_a_child_killed_by_the_memory_limit_is_seen(backend, tmp_path):
    # not a timing test: a move allowance no loaded machine comes near, so only the memory
    # limit can end the seat (at 8 s, a busy CI machine once timed the move out first)
    seat, _ = await play(backend, "child_oom", tmp_path, move_ms=60_000)
    assert seat.forfeit and len(seat.faults) == 1
    if backend == "docker":  # the bot exits 0: only the container state says OOM
        assert seat.faults[0].kind == "crash", seat.faults[0]
        assert "OOMKilled" in seat.faults[0].detail


def test_sandbox_gc_removes_leftovers_and_spares_running_matches(tmp_path):
    """What a SIGKILLed arena leaves: a labelled container and a match folder whose
    referee is gone.  gc removes them; a folder whose referee answers is kept."""

    from arena.sandbox.containers import docker_client
    from arena.sandbox.images import DEFAULT_BASE, LABEL

    client = docker_client(timeout=60)
    container = None
    if client is not None:
        try:
            container = client.containers.create(
                DEFAULT_BASE, ["true"], labels={f"{LABEL}.managed": "1"}, network_mode="none"
            )
        except Exception:
            container = None
    dead = Path(tempfile.mkdtemp(prefix="arena-"))
    (dead / "sock0").mkdir()
    alive = Path(tempfile.mkdtemp(prefix="arena-"))
    (alive / "sock0").mkdir()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(alive / "sock0" / "referee.sock"))
    listener.listen()
    try:
        proc = arena("sandbox", "gc", timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert not dead.exists() and alive.exists()
        if container is not None:
            assert not client.containers.list(all=True, filters={"id": container.id})
    finally:
        listener.close()
        import shutil

        shutil.rmtree(alive, ignore_errors=True)
        shutil.rmtree(dead, ignore_errors=True)


async def test_a_start_cut_off_by_the_startup_allowance_leaves_nothing_behind(backend):
    """A 1 ms allowance cuts off every start in the middle (the sandbox's calls cannot be
    taken back): the match ends before its first hand, and a bot or container that came
    into being after the arena gave up is stopped and removed all the same."""
    specs = [resolve(str(BOTS / "good.py"))] * 4
    control = TimeControl(move_ms=1500, bank_ms=1000, startup_ms=1)
    result = await run_match(specs, RULES, 3, control, backend, all_must_start=True)
    assert result.aborted and result.hands == ()
    assert all(not s.connected for s in result.seats)
    for seat in result.seats:  # cut off while starting, or started but too late to say Hello
        (fault,) = seat.faults
        assert "could not start it: timed out" in fault.detail or (
            "never connected within the startup allowance (1 ms)" in fault.detail
        ), fault
    # the engine removes what it made in the background; on a loaded machine (the suite's
    # parallel pass) four removals took over 30 s
    deadline = time.monotonic() + 120
    while leftovers(result.match_id, "good.py") and time.monotonic() < deadline:
        time.sleep(0.5)
    assert leftovers(result.match_id, "good.py") == []


def test_leftovers_counts_this_matchs_processes_only():
    """The leftover check is hermetic: a process that looks like a bot (``bigtwo.run
    …/NAME``) is this match's only if its environment names the match — another arena's
    bots on the machine, under another match id, are not this test's leftovers."""
    name = f"lookalike_{os.getpid()}.py"
    command = [sys.executable, "-c", "import time; time.sleep(60)", "bigtwo.run", f"/bot/{name}"]
    ours = subprocess.Popen(command, env={**os.environ, "ARENA_MATCH_ID": "m-ours"})
    theirs = subprocess.Popen(command, env={**os.environ, "ARENA_MATCH_ID": "m-theirs"})
    try:
        deadline = time.monotonic() + 30
        while len(leftovers("m-ours", name)) < 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        found = leftovers("m-ours", name)
        assert len(found) == 1 and found[0].startswith(f"{ours.pid} "), found
        assert len(leftovers("m-theirs", name)) == 1
        assert leftovers("m-nobody", name) == []
    finally:
        for proc in (ours, theirs):
            proc.kill()
            proc.wait()
