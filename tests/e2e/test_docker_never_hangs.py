"""Docker ladders and matches never hang, and leave no container behind (issue 9, "Never
hang"): a ladder of six bots with ``--jobs 3`` finishes, one bot crashing at its start
(refused at entry) and one right after it (at its first move, in every match); a bot that
cannot start ends the ladder promptly; a stalled engine (a real one behind
a proxy that holds its create or start requests) is cut off at the startup allowance with
an error; SIGINT or SIGTERM to a running ladder stops it at once, leaves no container and
keeps the finished matches.

Each run gets a TMPDIR of its own (the test's ``own_tmp``, short enough for Unix socket
paths): its matches' folders, bind-mounted into their containers, say which containers are
the run's (other docker tests may run at the same time)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest

from arena.sandbox.containers import SOCKET_IN_CONTAINER, docker_client
from arena.sandbox.images import LABEL

from .engine_proxy import StallingProxy
from testkit import arena, arena_command, need_docker

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = [str(ROOT / "sample_bots" / n) for n in ("random", "greedy", "heuristic")]
HOSTILE = ROOT / "tests" / "adversarial" / "bots"
MINE = Path(__file__).with_name("bots")
CRASHER = str(MINE / "exits_in_ladder_matches.py")  # exits at its first act in a ladder

pytestmark = pytest.mark.docker


@pytest.fixture
def engine():
    """The Docker client, or a skip (a failure under ARENA_REQUIRE_DOCKER=1)."""
    need_docker()
    return docker_client(timeout=60)


def containers_of(client, tmp: Path) -> list[str]:
    """The arena's containers whose match folder is under ``tmp`` (with the engine's one
    listing call: the SDK's list() inspects each after it, and fails on one removed
    meanwhile)."""
    found = []
    for c in client.api.containers(all=True, filters={"label": f"{LABEL}.managed=1"}):
        for m in c.get("Mounts") or []:
            if m.get("Destination") == SOCKET_IN_CONTAINER and m.get("Source", "").startswith(
                str(tmp)
            ):
                found.append(f"{c['Id'][:12]} {c.get('State')}")
    return found


def gone_within(client, tmp: Path, seconds: float) -> tuple[list[str], float]:
    """Wait until no container of ``tmp`` is left: what is left then, and how long it took."""
    t0 = time.monotonic()
    while (left := containers_of(client, tmp)) and time.monotonic() - t0 < seconds:
        time.sleep(0.2)
    return left, time.monotonic() - t0


def env_for(tmp: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(tmp), **extra}


def statuses(db: Path) -> dict[str, int]:
    try:
        with sqlite3.connect(db) as conn:
            rows = conn.execute("SELECT status, count(*) FROM matches GROUP BY status")
            return dict(rows.fetchall())
    except sqlite3.Error:  # not made yet, or being written
        return {}


@pytest.mark.slow
def test_a_docker_ladder_of_six_with_jobs_3_finishes_and_leaves_nothing(engine, tmp_path, own_tmp):
    """The issue's ladder: six bots, ``--jobs 3``, one of which crashes at start.  That one
    is refused at entry with its error (the entry check), and the five others play their
    five matches, 3 at once, each starting 4 containers per rotation while the other
    matches' containers are waited on; it stopped at its first match when each wait held a
    worker of the loop's default pool.  A second bot exits at its first move in every
    ladder match: it forfeits, the ladder goes on and finishes, and no container is left.
    (Six bots that all play make 15 matches, the same three at once, in about three times
    the time.)"""
    db = tmp_path / "l.db"
    bots = [*SAMPLES, str(MINE / "plays_last.py"), CRASHER, str(HOSTILE / "crash_at_start.py")]
    t0 = time.monotonic()
    proc = arena(
        "ladder", "run", "--db", str(db), "--sandbox", "docker", "--jobs", "3", "--deals", "1",
        "--json", "--bots", *bots, timeout=600, env=env_for(own_tmp),
    )  # fmt: skip
    took = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "refused crash_at_start" in proc.stderr and "broken on purpose" in proc.stderr
    assert statuses(db) == {"done": 5}, (statuses(db), took)  # every four of the five
    import json

    rows = {r["bot"]: r for r in json.loads(proc.stdout)}
    assert "crash_at_start" not in rows and len(rows) == 5  # never entered nor rated
    crasher = rows["exits_in_ladder_matches"]
    assert crasher["forfeits"] == crasher["matches"] == 4  # every four of five with it
    assert "Traceback" not in proc.stderr
    left, _ = gone_within(engine, own_tmp, 5)
    assert left == []
    print(f"six bots (one refused), --jobs 3: {took:.1f} s")


def test_a_docker_ladder_with_a_bot_that_cannot_start_ends_promptly(engine, tmp_path, own_tmp):
    """A bot that fails while being imported: whatever the ladder does with it (refused at
    entry, or the ladder stopped with its error), it says why, does not hang, and leaves no
    container."""
    db = tmp_path / "l.db"
    t0 = time.monotonic()
    proc = arena(
        "ladder", "run", "--db", str(db), "--sandbox", "docker", "--jobs", "3", "--deals", "1",
        "--bots", *SAMPLES, str(HOSTILE / "crash_at_start.py"), env=env_for(own_tmp),
    )  # fmt: skip
    took = time.monotonic() - t0
    assert "broken on purpose" in proc.stderr, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert took < 120, took
    left, _ = gone_within(engine, own_tmp, 5)
    assert left == []


@pytest.mark.serial
@pytest.mark.parametrize("stall", ["create", "start"])
def test_a_stalled_engine_is_cut_off_at_the_startup_allowance(engine, tmp_path, own_tmp, stall):
    """The engine never answers a container's create (or start: the seat stays "Created",
    as in the issue): the match ends with each seat's error within the startup allowance
    (3 s, plus the arena's own start-up), never waiting in silence; once the engine answers
    (the proxy lets the held requests through), what they made is removed."""
    proxy = StallingProxy(tmp_path / "engine.sock", stall)
    try:
        t0 = time.monotonic()
        proc = subprocess.Popen(
            arena_command("match", "--sandbox", "docker", "--startup-ms", "3000", "--hands", "1",
                          *SAMPLES, SAMPLES[0]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env_for(own_tmp, DOCKER_HOST=proxy.url),
        )  # fmt: skip
        lines: list[tuple[float, str]] = []
        said = threading.Event()

        def read() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                lines.append((time.monotonic() - t0, line))
                if "could not start it: timed out" in line:
                    said.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        said.wait(30)
        aborted = time.monotonic() - t0
        assert said.is_set(), "".join(line for _, line in lines)[-3000:]
        assert proxy.stalled >= 1
        proxy.release()  # the engine answers at last: the late containers are made
        proc.wait(timeout=30)
        ended = time.monotonic() - t0
        reader.join(5)
    finally:
        proxy.close()
        if proc.poll() is None:
            proc.kill()
    text = "".join(line for _, line in lines)
    assert proc.returncode not in (0, None), text
    assert text.count("could not start it: timed out") == 4, text
    assert "Traceback" not in text
    # 3 s allowance + ~1-2 s of imports and engine set-up; never the client's 30 s timeout
    assert aborted < 3 + 6, (aborted, text)
    left, _ = gone_within(engine, own_tmp, 10)
    assert left == []
    print(f"stalled {stall}: error after {aborted:.1f} s, exit after {ended:.1f} s")


@pytest.mark.serial
@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_one_signal_stops_a_docker_ladder_and_leaves_no_container(engine, tmp_path, own_tmp, sig):
    """SIGINT or SIGTERM while matches play: one signal is enough, the exit code says which
    (130, 143), no container is left, no traceback ("Event loop is closed") is printed, and
    the finished matches stay saved — running it again plays only the rest."""
    db = tmp_path / "l.db"
    bots = [*SAMPLES, str(HOSTILE / "good.py")]
    args = ("ladder", "run", "--db", str(db), "--sandbox", "docker", "--jobs", "2",
            "--deals", "2", "--rounds", "12", "--bots", *bots)  # fmt: skip
    proc = subprocess.Popen(
        arena_command(*args),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_for(own_tmp),
    )  # fmt: skip
    try:
        t0 = time.monotonic()
        # mid-match: a match finished, and another's four containers up
        while time.monotonic() - t0 < 240 and proc.poll() is None:
            if statuses(db).get("done", 0) >= 1 and len(containers_of(engine, own_tmp)) >= 4:
                break
            time.sleep(0.3)
        assert proc.poll() is None, "the ladder ended before it could be interrupted"
        before = statuses(db)
        sent = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        exited = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == (130 if sig == signal.SIGINT else 143), err[-3000:]
    left, cleaned = gone_within(engine, own_tmp, 5)
    assert left == [], left
    assert "Traceback" not in err and "Event loop is closed" not in err, err[-3000:]
    assert "interrupted" in err
    assert exited < 20, exited
    after = statuses(db)
    # the batches cut short stay "running" until the next run plays them again
    assert after.get("done", 0) >= before.get("done", 0) >= 1, after
    print(f"{sig.name}: exit after {exited:.1f} s, containers gone {cleaned:.1f} s later")
    if sig == signal.SIGINT:  # resumes: only what was not finished is played
        proc = arena(*args, env=env_for(own_tmp))
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert statuses(db) == {"done": sum(after.values())}
