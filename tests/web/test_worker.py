"""The worker (``arena worker``, ``arena serve --play``'s child) against hostile accounts, on
a real served contest: entry checks beside the matches and round-robin by account, a
wall-clock cap and a daily budget per account; the standings fitted outside the web process.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_api import BOT, sign_up, upload

from arena.web.app import create_app
from arena.web.contest import WebConfig, update_settings

from testkit import wait_for

SLOW_BOT = b'''"""Legal, but slow: most of its move time, every move (a hand takes it most of a
minute at four seats)."""
import time

from bigtwo import Bot


class Slow(Bot):
    def act(self, observation):
        time.sleep(0.75)
        return observation.legal_moves[0]
'''


def status(client: httpx.Client, upload_id: int) -> dict[str, Any]:
    return client.get(f"/api/uploads/{upload_id}").json()


def done(url: str) -> int:
    return int(httpx.get(f"{url}/api/matches", timeout=10).json()["total"])


@pytest.mark.slow
def test_a_slow_check_holds_neither_another_accounts_upload_nor_the_matches(
    tmp_path: Path, live_server
):
    """Alice's bot is legal but uses most of its move time every move: its one-hand entry
    check takes most of a minute.  Bob uploads an honest bot a second later: his is checked
    and entered while Alice's check still runs, and ladder matches keep finishing meanwhile
    (before: the player checked uploads one after another between rounds, so Bob waited
    for Alice's check and a whole round, and no match finished during a check)."""
    app = create_app(WebConfig(db=str(tmp_path / "c.db"), play=True, sandbox="process", jobs=1))
    update_settings(app.state.engine, "contest", deals=1)  # matches of seconds
    url = live_server(app)
    alice, bob = sign_up(url, app, "alice"), sign_up(url, app, "bob")
    wait_for(lambda: done(url) >= 1, 180, "the house bots' first match")

    assert upload(alice, "slowbot", "bot.py", SLOW_BOT).status_code == 303
    wait_for(lambda: status(alice, 1)["status"] == "checking", 10, "alice's upload stored")
    time.sleep(1.0)
    before = done(url)
    assert upload(bob, "honest", "bot.py", BOT).status_code == 303
    wait_for(lambda: status(bob, 2)["status"] != "checking", 120, "bob's check")
    assert status(bob, 2)["status"] == "accepted", status(bob, 2)
    assert status(alice, 1)["status"] == "checking", "the slow check already ended"
    # ladder matches finish while the slow check runs (it holds no match slot)
    wait_for(
        lambda: done(url) > before and status(alice, 1)["status"] == "checking",
        120,
        "a match finished during alice's check",
    )
    wait_for(
        lambda: (
            "honest"
            in {r["bot"] for r in httpx.get(f"{url}/api/leaderboard", timeout=10).json()["rows"]}
        ),
        60,
        "bob's bot on the leaderboard",
    )
    # the slow bot is legal: its check ends in time, and it is entered too
    wait_for(lambda: status(alice, 1)["status"] != "checking", 300, "alice's check")
    assert status(alice, 1)["status"] == "accepted", status(alice, 1)


@pytest.mark.slow
def test_an_account_spends_its_check_budget_and_is_told_when_it_renews(tmp_path: Path, live_server):
    """A budget of 6 check-seconds a day: the slow bot's check is stopped at 6 s and
    refused with the reason; the account's next upload is refused at once, the time the
    budget renews named; another account's upload is checked as usual."""
    app = create_app(
        WebConfig(
            db=str(tmp_path / "c.db"), play=True, sandbox="process", check_budget=6.0, matches=False
        )
    )
    url = live_server(app)
    alice, bob = sign_up(url, app, "alice"), sign_up(url, app, "bob")
    assert upload(alice, "slowbot", "bot.py", SLOW_BOT).status_code == 303
    first = wait_for(
        lambda: (s := status(alice, 1))["status"] != "checking" and s, 120, "alice's check"
    )
    assert first["status"] == "refused"
    assert "entry checks for today" in first["reason"] and "ran out" in first["reason"], first
    assert upload(alice, "otherbot", "bot.py", BOT).status_code == 303
    second = wait_for(
        lambda: (s := status(alice, 2))["status"] != "checking" and s, 60, "alice's second"
    )
    assert second["status"] == "refused" and "renew in" in second["reason"], second
    assert upload(bob, "honest", "bot.py", BOT).status_code == 303
    third = wait_for(lambda: (s := status(bob, 3))["status"] != "checking" and s, 120, "bob's")
    assert third["status"] == "accepted", third


@pytest.mark.slow
def test_a_check_over_its_wall_clock_cap_is_refused(db: str, tmp_path: Path, live_server):
    """On both stores: the worker's status, nudges and stored fits work on PostgreSQL too."""
    app = create_app(
        WebConfig(
            db=db,
            data=tmp_path / "bots",
            play=True,
            sandbox="process",
            check_cap=5.0,
            matches=False,
        )
    )
    url = live_server(app)
    alice = sign_up(url, app, "alice")
    assert upload(alice, "slowbot", "bot.py", SLOW_BOT).status_code == 303
    found = wait_for(
        lambda: (s := status(alice, 1))["status"] != "checking" and s, 120, "alice's check"
    )
    assert found["status"] == "refused" and "took longer than 5 s" in found["reason"], found
    board = wait_for(
        lambda: (r := httpx.get(f"{url}/api/leaderboard", timeout=10).json())["rows"] and r,
        60,
        "the stored standings",
    )
    assert {r["bot"] for r in board["rows"]} == {"random", "greedy", "heuristic"}


# ----- arena serve --play: the worker as a child process ---------------------------------------
def _worker_row(db: str) -> tuple[int, bool]:
    """The worker's pid and whether its heartbeat is set, from the store."""
    import sqlite3

    with sqlite3.connect(db) as con:
        row = con.execute("SELECT pid, heartbeat FROM worker_status").fetchone()
    return (int(row[0]), row[1] is not None) if row else (0, False)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _started_by(server_pids: set[int]) -> list[int]:
    """Running processes started under these servers (a worker, its fit pool's process):
    each has ``ARENA_WORKER_PARENT`` naming its server in its environment."""
    marks = {f"ARENA_WORKER_PARENT={pid}".encode() for pid in server_pids}
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = set((entry / "environ").read_bytes().split(b"\0"))
        except OSError:
            continue
        if env & marks and _alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


@pytest.mark.slow
def test_serve_play_runs_restarts_and_stops_its_worker_as_a_child(tmp_path: Path):
    """``arena serve --play``: the worker is a child process (not a thread of the server);
    killed, it is restarted with the reason logged; SIGTERM to the server stops it with
    no match left half-played; a server killed outright leaves no orphan worker playing on."""
    import os
    import signal
    import sqlite3
    import subprocess

    from testkit import arena, arena_command, free_port

    db = str(tmp_path / "c.db")
    assert arena("serve", "--db", db, "--create-organizer", "org", timeout=60).returncode == 0
    with sqlite3.connect(db) as con:
        (settings,) = con.execute("SELECT settings FROM ladders").fetchone()
        one_deal = settings.replace('"deals": 4', '"deals": 1')  # matches of seconds
        con.execute("UPDATE ladders SET settings = ?", (one_deal,))
    log = tmp_path / "serve.log"
    port = free_port()
    url = f"http://127.0.0.1:{port}"

    def serve() -> subprocess.Popen:
        return subprocess.Popen(
            arena_command(
                "serve", "--db", db, "--port", str(port), "--play", "--sandbox", "process"
            ),
            stdout=log.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    server = serve()
    servers = {server.pid}
    try:
        first = wait_for(
            lambda: (p := _worker_row(db)[0]) and _alive(p) and p, 120, "the worker's heartbeat"
        )
        assert first != server.pid and _parent(first) == server.pid  # a child, not a thread
        wait_for(lambda: done(url) >= 1, 180, "a match played by the worker")

        os.kill(first, signal.SIGKILL)  # the worker dies: the server starts another
        second = wait_for(
            lambda: (p := _worker_row(db)[0]) != first and _alive(p) and p, 120, "a new worker"
        )
        assert _parent(second) == server.pid
        assert httpx.get(f"{url}/api/leaderboard", timeout=10).status_code == 200
        assert "the worker was killed by signal 9; restarting it" in log.read_text()
        played = done(url)
        wait_for(lambda: done(url) > played, 180, "the new worker playing on")

        server.send_signal(signal.SIGTERM)  # the server stops, its worker with it
        assert server.wait(90) in (0, -signal.SIGTERM)  # uvicorn re-raises it once stopped
        assert not _alive(second)
        with sqlite3.connect(db) as con:
            statuses = dict(con.execute("SELECT status, count(*) FROM matches GROUP BY status"))
        assert statuses.get("running", 0) == 0, statuses  # none left half-played
        assert _worker_row(db) == (second, False)  # said so: not running

        server = serve()  # killed outright: the worker notices and stops by itself
        servers.add(server.pid)
        third = wait_for(
            lambda: (p := _worker_row(db)[0]) != second and _alive(p) and p, 120, "a worker"
        )
        os.kill(server.pid, signal.SIGKILL)
        server.wait(30)
        wait_for(lambda: not _alive(third), 30, "the orphaned worker stopping")
        # nor its helpers (the fit pool's process), nor those of the worker killed above
        wait_for(lambda: not _started_by(servers), 30, "no process left behind")
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(30)
    assert "Traceback" not in log.read_text(errors="replace")


def test_a_second_worker_for_the_same_ladder_refuses_to_start(tmp_path: Path):
    """Two workers would check and play everything twice: the second one says who runs."""
    from arena.ladder.store import open_engine
    from arena.web.contest import ensure_contest
    from arena.web.worker_state import worker_started

    from testkit import arena

    db = str(tmp_path / "c.db")
    engine = open_engine(db)
    ensure_contest(engine, WebConfig(db=db, sandbox="process"))
    worker_started(engine, "contest")  # this test's process is the running worker
    engine.dispose()
    second = arena("worker", "--db", db, "--sandbox", "process", timeout=120)
    assert second.returncode == 2, second.stderr
    assert "a worker for ladder 'contest' already runs" in second.stderr
    assert "Traceback" not in second.stderr
