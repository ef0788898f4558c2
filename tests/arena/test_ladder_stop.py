"""Stopping a ladder puts back what it started, and only that: on Ctrl-C or SIGTERM every
batch still waiting for a slot is cancelled too, and each used to put all its matches
back "pending" one transaction apiece — a ladder of 100,000 planned matches took 137 s to
stop.  The count of statements on matches after the stop is what this checks (a time
would be noise on a shared machine)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from sqlalchemy import event, select
from sqlalchemy.orm import Session

from arena.cli.common import rules_or_fail
from arena.ladder import queries
from arena.ladder.running import run_pending
from arena.ladder.store import Match

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots"
SETTINGS = {
    "deals": 1,
    "rotations": 4,
    "sandbox": "inproc",
    "time_control": {"move_ms": 1000, "bank_ms": 10000, "startup_ms": 30000, "max_strikes": 3},
}


async def test_a_stopped_ladder_puts_back_only_the_matches_it_started(tmp_path: Path):
    db = str(tmp_path / "l.db")
    engine = queries.connect(db)
    rules = rules_or_fail("hk", None, "inproc").to_dict()
    queries.ensure_ladder(engine, "l", rules, dict(SETTINGS), db)
    queries.enter_bots(
        engine,
        "l",
        [(n, str(SAMPLES / n / "bot.py"), n) for n in ("random", "greedy", "heuristic")],
    )
    pending, _ = queries.plan_ladder(engine, "l", 120)
    assert pending == 120
    put_back: list[str] = []

    @event.listens_for(engine, "before_cursor_execute")
    def count(conn, cursor, statement, parameters, context, executemany):
        if "matches" in statement.lower():  # a match read or written back
            put_back.append(statement)

    task = asyncio.ensure_future(run_pending(engine, "l", 1))
    while True:  # until the first batch has marked its matches running
        await asyncio.sleep(0.05)
        with Session(engine) as session:
            if session.scalar(select(Match.id).where(Match.status == "running")):
                break
    put_back.clear()  # what happens from the stop on
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    with Session(engine) as session:
        statuses = [m.status for m in session.scalars(select(Match))]
    assert statuses.count("running") == 0  # nothing left marked as being played
    assert statuses.count("pending") + statuses.count("done") == 120
    # the batch in flight (up to 4 matches, a read and a write each, and a last look),
    # not each of the 120 planned
    assert len(put_back) <= 20, len(put_back)
    engine.dispose()
