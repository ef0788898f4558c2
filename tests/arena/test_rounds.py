"""Ladders planned round by round (``planning.plan`` through ``schedule``): every active
entrant seated in every round at any size, newcomers placed at once, nothing planned twice,
and a ladder the older planner made going on under the new one."""

import collections
import gzip
import itertools
import json
import random
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.ladder import queries
from arena.ladder.running import block_totals
from arena.ladder.store import Ladder, Match, save_match
from arena.referee.results import HandScore, MatchResult, SeatResult

from testkit import arena, arena_command

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = [str(ROOT / "sample_bots" / n) for n in ("random", "greedy", "heuristic")]
OLD_DB = Path(__file__).with_name("data") / "old_ladder.db.gz"
OLD_ROOT = "/tmp/oldcode-rounds"  # where data/make_old_ladder.py's bots lived
SETTINGS = {
    "deals": 1,
    "rotations": 4,
    "sandbox": "inproc",
    "time_control": {"move_ms": 1000, "bank_ms": 10000, "startup_ms": 30000, "max_strikes": 3},
}


def enter(engine, count, start=0):
    queries.enter_bots(
        engine, "big", [(f"b{i:03d}", "nowhere.py", f"h{i}") for i in range(start, start + count)]
    )


def open_matches(engine):
    """The ladder's unfinished matches: id → seats."""
    with Session(engine) as s:
        return dict(s.execute(select(Match.id, Match.seats).where(Match.status == "pending")).all())


def fake_finish(engine, skill, rng):
    """Finish every pending match as the ladder writes a played one (``save_match`` with
    the deal blocks ``block_totals`` makes), each hand's points drawn around the seats'
    hidden ``skill``."""
    with Session(engine) as s, s.begin():
        ladder = s.scalar(select(Ladder).where(Ladder.name == "big"))
        rotations = ladder.settings["rotations"]
        for m in s.scalars(select(Match).where(Match.status == "pending")):
            hands = []
            for h in range(len(m.deal_seeds) * rotations):
                perf = [skill[v] + rng.gauss(0, 1) for v in m.seats]
                order = sorted(range(4), key=lambda i: -perf[i])
                scores = [0] * 4
                scores[order[0]] = 30
                for i in order[1:]:
                    scores[i] = -10
                hands.append(HandScore(h, order[0], tuple(scores), tuple(scores)))
            seats = [
                SeatResult(i, str(v), score=0, place=1, forfeit=False, strikes=0)
                for i, v in enumerate(m.seats)
            ]
            summary = MatchResult(str(m.id), True, tuple(hands), tuple(seats))
            save_match(s, m, summary, block_totals(m, summary, rotations), [])


def connected(ids, groups):
    parent = {i: i for i in ids}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for g in groups:
        for a, b in itertools.pairwise(g):
            parent[find(a)] = find(b)
    return len({find(i) for i in ids}) == 1


@pytest.mark.slow
def test_a_field_of_120_is_seated_whole_every_round_and_newcomers_at_once(db):
    """Beyond 8 entrants the old planner replayed one fixed sample of 70 groups: with 120
    entrants some were never seated and the comparison graph fell apart.  Round by round,
    every active entrant is seated in every round, a bot entered mid-round gets placement
    matches at once, one entered between rounds is in the next, a retired one in none —
    and the leaderboard rates every entrant."""
    engine = queries.connect(db)
    queries.ensure_ladder(engine, "big", {"preset": "hk"}, SETTINGS, db)
    enter(engine, 120)
    rng = random.Random(5)
    skill = {}
    groups = []
    for r in range(6):
        with Session(engine) as s:
            active = {
                e.version_id
                for e in queries.entrants(s, queries.ladder_id(engine, "big", db))
                if not e.retired
            }
        for v in active:
            skill.setdefault(v, rng.gauss(0, 1))
        pending, _ = queries.plan_ladder(engine, "big", r + 1)
        planned = open_matches(engine)
        assert pending == len(planned)
        seated = {v for seats in planned.values() for v in seats}
        assert seated == active, f"round {r}: {len(active - seated)} entrant(s) left out"
        seats = collections.Counter(v for g in planned.values() for v in set(g))
        assert max(seats.values()) - min(seats.values()) <= 1  # about equally often
        assert queries.plan_ladder(engine, "big", r + 1)[0] == pending  # planned once
        groups += planned.values()
        if r == 2:  # a newcomer mid-round: its placement at once, no new round
            enter(engine, 1, start=500)
            (newcomer,) = active_ids(engine) - active
            skill[newcomer] = 0.0
            queries.plan_ladder(engine, "big", r + 1)
            placed = {m: seats for m, seats in open_matches(engine).items() if m not in planned}
            assert placed and all(newcomer in seats for seats in placed.values())
            groups += placed.values()
        if r == 3:  # one retired: in no later round
            lid = queries.ladder_id(engine, "big", db)
            queries.retire(engine, lid, "b007")
        fake_finish(engine, skill, rng)
    assert connected(sorted(skill), groups)
    rows = queries.leaderboard_rows(engine, "big")
    assert len(rows) == 120 and all(r["rated"] for r in rows)  # 121 entered, one retired


def active_ids(engine):
    with Session(engine) as s:
        return {e.version_id for e in queries.entrants(s, 1) if not (e.retired or e.paused)}


def test_small_fields_keep_every_group_each_round(tmp_path):
    """Up to 8 entrants a round is every group of four once, planned as before (all the
    rounds asked for at once, so one table's rounds are played as one batch)."""
    db = str(tmp_path / "l.db")
    engine = queries.connect(db)
    queries.ensure_ladder(engine, "big", {"preset": "hk"}, SETTINGS, db)
    enter(engine, 6)
    pending, _ = queries.plan_ladder(engine, "big", 3)
    assert pending == 15 * 3
    with Session(engine) as s:
        rounds = s.execute(select(Match.round, Match.seats)).all()
    for r in range(3):
        groups = sorted(tuple(sorted(seats)) for rr, seats in rounds if rr == r)
        assert groups == list(itertools.combinations(range(1, 7), 4))


def test_a_small_field_plans_a_bounded_number_of_rounds_ahead(tmp_path, monkeypatch):
    """A small field's rounds are planned some hundreds of matches at a time (here 10), the
    next ones once those are played, to the total asked — the same matches, keys and deals
    as planning them all at once.  (`ladder run --rounds 100000` on four bots stored all
    100,000 matches before the first played: minutes of silence.)"""
    from arena.ladder import planning

    def planned(folder, ahead):
        monkeypatch.setattr(planning, "SMALL_FIELD_AHEAD", ahead)
        db = str(tmp_path / folder / "l.db")
        (tmp_path / folder).mkdir()
        engine = queries.connect(db)
        queries.ensure_ladder(engine, "big", {"preset": "hk"}, SETTINGS, db)
        enter(engine, 5)  # five groups of four a round
        steps = []
        while True:
            pending, _ = queries.plan_ladder(engine, "big", 7)
            if not pending:
                break
            steps.append(pending)
            fake_finish(engine, collections.defaultdict(float), random.Random(1))
        with Session(engine) as s:
            got = sorted(s.execute(select(Match.key, Match.round, Match.deal_seeds)).all())
        engine.dispose()
        return steps, got

    steps, chunked = planned("chunked", 10)
    assert steps == [10, 10, 10, 5]  # whole rounds of 5, about 10 matches at a time
    everything, at_once = planned("at-once", 10_000)
    assert everything == [35] and chunked == at_once


def old_ladder(tmp_path):
    """A copy of the database the older planner made (data/make_old_ladder.py), its bots
    pointed at this checkout's sample bots."""
    db = tmp_path / "old.db"
    with gzip.open(OLD_DB) as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    con = sqlite3.connect(db)
    con.execute("UPDATE bot_versions SET spec = replace(spec, ?, ?)", (OLD_ROOT, str(ROOT)))
    con.commit()
    con.close()
    return db


def rows_of(db, sql):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.mark.slow
def test_a_ladder_the_old_planner_made_goes_on_round_by_round(tmp_path):
    """Its finished matches stay, its pending ones are played, their rounds are recovered
    (migration 0007), and new rounds follow under the new plan with keys of their own."""
    db = str(old_ladder(tmp_path))
    before = rows_of(db, "SELECT id, key, status, seats FROM matches ORDER BY id")
    small = arena(
        "ladder", "run", "--db", db, "--name", "small", "--rounds", "4", "--json", timeout=600
    )
    assert small.returncode == 0, small.stderr
    assert [r["matches"] for r in json.loads(small.stdout)] == [4, 4, 4]
    got = rows_of(db, "SELECT ladder_id, round, status FROM matches WHERE ladder_id = 1")
    assert sorted(r for _, r, _ in got) == [0, 1, 2, 3] and {s for *_, s in got} == {"done"}
    big = arena(
        "ladder", "run", "--db", db, "--name", "big", "--rounds", "2", "--json", timeout=600
    )
    assert big.returncode == 0, big.stderr
    after = rows_of(db, "SELECT id, key, status, seats FROM matches ORDER BY id")
    old = {mid: (key, seats) for mid, key, _, seats in before}
    assert all(old[mid] == (key, seats) for mid, key, _, seats in after if mid in old)
    assert {s for _, _, s, _ in after} == {"done"}
    assert len({key for _, key, _, _ in after}) == len(after)
    rounds = dict(rows_of(db, "SELECT round, count(*) FROM matches WHERE ladder_id = 2 GROUP BY 1"))
    assert rounds[0] == 64 and rounds[1] >= 3  # the old sample, then a cover of ten
    new = rows_of(db, "SELECT seats FROM matches WHERE ladder_id = 2 AND round = 1")
    assert {v for (seats,) in new for v in json.loads(seats)} == set(range(4, 14))
    assert len(json.loads(big.stdout)) == 10


@pytest.mark.slow
def test_a_large_ladder_killed_mid_round_resumes_exactly(tmp_path):
    """SIGKILLed while a round of a 10-bot ladder is played: the run after plays that
    round's stored matches (none lost, none doubled, none planned again) and then plans
    the next round from its results."""
    db = tmp_path / "l.db"
    bots = []
    for i in range(10):
        folder = tmp_path / f"bot{i}"
        shutil.copytree(ROOT / "sample_bots" / ("random", "greedy")[i % 2], folder)
        bots.append(str(folder))
    cmd = arena_command(
        "ladder", "run", "--db", str(db), "--sandbox", "inproc", "--rounds", "3", "--jobs", "1",
        "--deals", "2", "--no-check", "--bots", *bots,
    )  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        time.sleep(0.1)
        if done_in(db) >= 1:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    first = rows_of(db, "SELECT id, key, round, seats FROM matches ORDER BY id")
    assert 1 <= done_in(db) < len(first) and {r for _, _, r, _ in first} == {0}
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    first_line = again.stdout.splitlines()[0]  # the open round and two more of about 3
    assert first_line.startswith("about ") and "planned when the last one ends" in first_line
    after = rows_of(db, "SELECT id, key, round, seats, status FROM matches ORDER BY id")
    assert [row[:4] for row in after[: len(first)]] == first  # the round killed: as planned
    assert {row[4] for row in after} == {"done"}
    by_round = {}
    for _, _, r, seats, _ in after:
        by_round.setdefault(r, set()).update(json.loads(seats))
    assert sorted(by_round) == [0, 1, 2] and all(len(s) == 10 for s in by_round.values())
    deals = rows_of(db, "SELECT match_id, count(*) FROM deals GROUP BY match_id")
    assert len(deals) == len(after) and all(n == 2 for _, n in deals)


def done_in(db):
    try:
        return rows_of(db, "SELECT count(*) FROM matches WHERE status = 'done'")[0][0]
    except sqlite3.Error:
        return 0


def test_migration_0007_recovers_the_rounds_of_old_keys(tmp_path):
    db = str(old_ladder(tmp_path))
    queries.connect(db).dispose()
    rounds = rows_of(db, "SELECT ladder_id, round, count(*) FROM matches GROUP BY 1, 2")
    assert rounds == [(1, 0, 1), (1, 1, 1), (1, 2, 1), (2, 0, 64)]


def test_migration_0007_recovers_rounds_on_sqlite_and_postgresql(db):
    """Matches keyed as the older planner keyed them (``[group, round]``, the group sorted
    or repeated in rotation) get their round back on either store; an unknown key stays
    without one."""
    import hashlib
    from datetime import UTC, datetime

    import sqlalchemy as sa
    from alembic import command
    from alembic.config import Config

    from arena.ladder.planning import seating
    from arena.ladder.store import MIGRATIONS, database_url, upgrade

    engine = sa.create_engine(database_url(db))
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0006")
    ladders = sa.table(
        "ladders",
        sa.column("id"),
        sa.column("name"),
        sa.column("rules", sa.JSON),
        sa.column("settings", sa.JSON),
        sa.column("created", sa.DateTime(timezone=True)),
    )
    matches = sa.table(
        "matches",
        sa.column("ladder_id"),
        sa.column("key"),
        sa.column("status"),
        sa.column("seats", sa.JSON),
        sa.column("deal_seeds", sa.JSON),
    )
    planned = [([1, 2, 3, 1], r) for r in range(3)] + [([1, 2, 3, 4], r) for r in range(2)]
    planned += [([2, 5, 2, 5], 0), ([3, 6, 7, 9], 4)]
    with engine.begin() as conn:
        conn.execute(
            ladders.insert(),
            [{"id": 1, "name": "old", "rules": {}, "settings": {}, "created": datetime.now(UTC)}],
        )
        rows = [
            {
                "ladder_id": 1,
                "key": hashlib.sha256(json.dumps([g, r]).encode()).hexdigest()[:32],
                "status": "done",
                "seats": seating(g, r),
                "deal_seeds": [],
            }
            for g, r in planned
        ]
        rows.append({**rows[0], "key": "not-a-key-it-made", "seats": [1, 2, 3, 4]})
        conn.execute(matches.insert(), rows)
    upgrade(engine)
    with engine.connect() as conn:
        got = conn.execute(sa.text("SELECT key, round FROM matches ORDER BY id")).all()
    engine.dispose()
    assert [r for _, r in got] == [r for _, r in planned] + [None]
