"""``arena serve`` as an organizer runs it: the organizer's account from the command line or
the environment, and a served contest that is killed mid-play and started again — no
finished match lost, none left half-played, the ladder playing on."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from arena.web.app import create_app
from arena.web.contest import WebConfig

from testkit import arena, arena_command, arena_main, free_port


def test_create_organizer_prints_a_one_time_password_once(tmp_path: Path):
    db = str(tmp_path / "c.db")
    made = arena("serve", "--db", db, "--create-organizer", "alice", timeout=60)
    assert made.returncode == 0, made.stderr
    assert "organizer alice created" in made.stdout
    assert "one-time password: " in made.stdout
    # refusals: what they say needs no process of its own (arena.cli.main, in this one)
    again = arena_main("serve", "--db", db, "--create-organizer", "alice")
    assert again.returncode != 0 and "taken" in again.stderr
    bad = arena_main("serve", "--db", db, "--create-organizer", "<x>")
    assert bad.returncode != 0 and "letters, digits" in bad.stderr
    env = {**os.environ, "ARENA_ORGANIZER_PASSWORD": "chosen-password"}
    quiet = arena("serve", "--db", db, "--create-organizer", "bob", env=env, timeout=60)
    assert quiet.returncode == 0 and "one-time password" not in quiet.stdout
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT name, role, must_change_password FROM users").fetchall()
    assert sorted(rows) == [("alice", "organizer", 1), ("bob", "organizer", 0)]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--sandbox", "jail"], "--sandbox 'jail'"),
        (["--executor", "spark"], "--executor 'spark'"),
        (["--db", "postgresql://nobody@127.0.0.1:1/x"], "--data DIR"),
        (["--port", "0"], "port"),
    ],
)
def test_bad_options_are_one_line_errors(tmp_path: Path, args: list[str], words: str):
    """Refused before anything is served: ``arena.cli.main`` in the test process
    (``testkit.arena_main``), not a process of its own."""
    proc = arena_main("serve", "--db", str(tmp_path / "c.db"), *args)
    assert proc.returncode != 0 and words in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def _serve(db: str, port: int, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        arena_command(
            "serve",
            "--db",
            db,
            "--port",
            str(port),
            "--play",
            "--sandbox",
            "process",
            "--jobs",
            "2",
        ),
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _done(url: str) -> int | None:
    try:
        return int(httpx.get(f"{url}/api/leaderboard", timeout=5).json()["matches_done"])
    except (httpx.HTTPError, ValueError, KeyError):
        return None


def _wait(url: str, at_least: int, seconds: float) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done = _done(url)
        if done is not None and done >= at_least:
            return done
        time.sleep(0.5)
    raise AssertionError(f"fewer than {at_least} matches after {seconds} s")


@pytest.mark.slow
def test_a_killed_server_loses_no_finished_match_and_plays_on(tmp_path: Path, live_server):
    db = str(tmp_path / "c.db")
    made = arena("serve", "--db", db, "--create-organizer", "org", timeout=60)
    assert made.returncode == 0, made.stderr
    with sqlite3.connect(db) as con:
        (settings,) = con.execute("SELECT settings FROM ladders").fetchone()
        one_deal = settings.replace('"deals": 4', '"deals": 1')  # matches of seconds
        con.execute("UPDATE ladders SET settings = ?", (one_deal,))
    log = tmp_path / "serve.log"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = _serve(db, port, log)
    try:
        _wait(url, 2, 180)
        os.killpg(server.pid, signal.SIGKILL)  # no goodbye: the server and its bots die now
        server.wait(30)
        with sqlite3.connect(db) as con:
            kept = con.execute("SELECT id, result FROM matches WHERE status = 'done'").fetchall()
            records = con.execute("SELECT count(*) FROM match_records").fetchone()[0]
        assert len(kept) >= 2 and records == len(kept)
        server = _serve(db, port, log)
        after = _wait(url, len(kept) + 1, 180)
        assert after > len(kept)
        with sqlite3.connect(db) as con:
            again = dict(con.execute("SELECT id, result FROM matches WHERE status = 'done'"))
        assert all(again[mid] == result for mid, result in kept)  # untouched
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        server.wait(60)
    assert "Traceback" not in log.read_text(errors="replace")
    # the page's numbers are `arena ladder show`'s, to the last digit
    shown = arena("ladder", "show", "--db", db, "--name", "contest", "--json", timeout=120)
    assert shown.returncode == 0, shown.stderr
    url = live_server(create_app(WebConfig(db=db)))
    page = httpx.get(f"{url}/api/leaderboard").json()["rows"]
    cli = json.loads(shown.stdout)
    assert [r["bot"] for r in page] == [r["bot"] for r in cli]
    keys = ("rank", "elo", "elo_low", "elo_high", "openskill", "matches", "points_per_hand")
    for mine, theirs in zip(page, cli, strict=True):
        assert {k: mine.get(k) for k in keys} == {k: theirs.get(k) for k in keys}
