"""Makes ``old_ladder.db.gz``: ladders planned and played by the planner before rounds
(commit 56f274d), for ``test_rounds``' check that an existing ladder goes on under the new
one.  Run it with THAT code first on the path, from a copy extracted to OLD_ROOT:

    mkdir -p /tmp/oldcode-rounds && git archive 56f274d | tar -x -C /tmp/oldcode-rounds
    PYTHONPATH=/tmp/oldcode-rounds:/tmp/oldcode-rounds/sdk \\
        python tests/arena/data/make_old_ladder.py tests/arena/data/old_ladder.db.gz

- ladder ``small``: random, greedy and heuristic, 1 deal a match, ``--rounds 2`` played,
  then planned to 3 rounds (round 2's match left pending).
- ladder ``big``: ten bots (the random sample bot entered under ten names), 1 deal a match,
  planned for 1 round (the old fixed sample of 70 groups), 64 of them played, 6 pending.

The moves and kept records are dropped (planning and ratings never read them) to keep the
file small; bot specs point into OLD_ROOT (the test points them at the checkout)."""

import asyncio
import gzip
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.ladder import queries
from arena.ladder.running import run_pending
from arena.ladder.store import Match

OLD_ROOT = "/tmp/oldcode-rounds"
SETTINGS = {
    "deals": 1,
    "rotations": 4,
    "sandbox": "inproc",
    "time_control": {"move_ms": 1000, "bank_ms": 10000, "startup_ms": 30000, "max_strikes": 3},
}


def main(out: str) -> None:
    assert queries.__file__.startswith(OLD_ROOT), queries.__file__
    from arena.cli.common import rules_or_fail

    rules = rules_or_fail("hk", None, "inproc").to_dict()  # as `ladder run --rules hk`
    with tempfile.TemporaryDirectory() as tmp, asyncio.Runner() as loop:  # this script's loop
        db = str(Path(tmp) / "old.db")
        engine = queries.connect(db)
        sample = f"{OLD_ROOT}/sample_bots"
        queries.ensure_ladder(engine, "small", rules, SETTINGS, db)
        queries.enter_bots(
            engine,
            "small",
            [(n, f"{sample}/{n}/bot.py", f"{n}-hash") for n in ("random", "greedy", "heuristic")],
        )
        queries.plan_ladder(engine, "small", 2)
        loop.run(run_pending(engine, "small", 2))
        queries.plan_ladder(engine, "small", 3)

        queries.ensure_ladder(engine, "big", rules, SETTINGS, db)
        queries.enter_bots(
            engine, "big", [(f"r{i}", f"{sample}/random/bot.py", f"r{i}-hash") for i in range(10)]
        )
        queries.plan_ladder(engine, "big", 1)
        with Session(engine) as session, session.begin():
            big = queries.ladder_id(engine, "big", db)
            held = list(
                session.scalars(
                    select(Match).where(Match.ladder_id == big).order_by(Match.id.desc()).limit(6)
                )
            )
            for m in held:
                m.status = "withdrawn"  # kept back from this run
        loop.run(run_pending(engine, "big", 2))
        with Session(engine) as session, session.begin():
            for m in session.scalars(select(Match).where(Match.status == "withdrawn")):
                m.status = "pending"
        engine.dispose()
        con = sqlite3.connect(db)
        con.execute("PRAGMA journal_mode=DELETE")
        con.execute("DELETE FROM moves")
        con.execute("DELETE FROM match_records")
        con.commit()
        con.execute("VACUUM")
        con.close()
        with open(db, "rb") as src, gzip.open(out, "wb") as dst:
            shutil.copyfileobj(src, dst)


if __name__ == "__main__":
    main(sys.argv[1])
