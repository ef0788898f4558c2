"""The ladder's database operations called directly, as a front end other than the CLI
(the web layer) calls them: a real SQLite file, no command in between.  What the ladder
commands do through them is covered end to end in test_ladder.py and test_ladder_admin.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.ladder import queries
from arena.ladder.queries import StoreError

RULES = {"preset": "hk"}
SETTINGS = {"deals": 2, "rotations": 4, "sandbox": "inproc", "time_control": {}}
BOTS = [(f"bot{i}", f"bot{i}.py", f"hash{i}") for i in range(5)]


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "ladder.db")


def test_a_new_database_holds_no_ladder_until_one_is_made(db: str) -> None:
    assert not queries.database_exists(db) and not queries.holds_ladders(db)
    engine = queries.connect(db)
    assert queries.database_exists(db) and queries.holds_ladders(db)
    assert queries.ladder_overview(engine) == []
    with pytest.raises(StoreError, match="holds no ladder yet"):
        queries.ensure_ladder(engine, "main", None, None, db)


def test_ensure_ladder_creates_once_and_refuses_other_rules(db: str) -> None:
    engine = queries.connect(db)
    assert queries.ensure_ladder(engine, "main", RULES, SETTINGS, db) == (RULES, SETTINGS)
    # found again: its own settings, whatever is given now
    assert queries.ensure_ladder(engine, "main", RULES, {"deals": 9}, db)[1] == SETTINGS
    assert queries.ensure_ladder(engine, "main", None, None, db)[0] == RULES
    with pytest.raises(StoreError, match="plays other rules"):
        queries.ensure_ladder(engine, "main", {"preset": "pusoy"}, SETTINGS, db)
    with pytest.raises(StoreError, match="ladders here: main"):
        queries.ladder_id(engine, "mian", db)


def test_entering_planning_exporting_and_retiring(db: str) -> None:
    engine = queries.connect(db)
    queries.ensure_ladder(engine, "main", RULES, SETTINGS, db)
    queries.enter_bots(engine, "main", BOTS)
    queries.enter_bots(engine, "main", BOTS[:1])  # the same version again: no new entry
    changed = [("bot0", "bot0.py", "hash0-changed")]
    assert queries.entered(engine, "main", [(n, d) for n, _, d in BOTS + changed]) == [
        *[True] * len(BOTS),
        False,
    ]
    pending, sandbox = queries.plan_ladder(engine, "main", 1)
    assert pending >= 2 and sandbox == "inproc"
    assert queries.plan_ladder(engine, "main", 1)[0] == pending  # planned once
    assert queries.export_blocks(engine, "main") == []  # nothing played yet
    [row] = queries.ladder_overview(engine)
    assert (row["name"], row["bots"], row["pending"], row["played"]) == ("main", 5, pending, 0)

    lid = queries.ladder_id(engine, "main", db)
    out = queries.retire(engine, lid, "bot4")
    assert out.labels == ["bot4"] and out.withdrawn > 0 and out.played == 0
    assert queries.retired_labels(engine, lid) == {"bot4"}
    back = queries.retire(engine, lid, "bot4", undo=True)
    assert back.restored == out.withdrawn and queries.retired_labels(engine, lid) == set()
    with pytest.raises(StoreError, match="its bots: bot0, bot1"):
        queries.retire(engine, lid, "nobody")
    with pytest.raises(StoreError, match="has no version 2"):
        queries.bot_faults(engine, lid, "bot0@v2", 10, 100)
    assert queries.bot_faults(engine, lid, "bot0", 10, 100) == (0, {}, [])
    assert queries.rating_history(engine, lid, "auto", 4) == ([], "matches")
    with pytest.raises(StoreError, match="has no record: it has not been played yet"):
        queries.match_record(engine, 1, "main", db)
    with pytest.raises(StoreError, match="no match 999"):
        queries.match_record(engine, 999, None, db)
