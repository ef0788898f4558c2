"""The kept leaderboard (``arena.web.contest.StandingsCache``): fitted once per state of the
ladder, and a page never waits for a refit while there are standings to show (on a big
ladder the fit takes seconds; the player refits after every batch it saves)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.ladder.store import Entry, Ladder, add_version, open_engine
from arena.web.contest import StandingsCache, WebConfig, ensure_contest


def test_a_refit_under_way_shows_the_last_standings_and_the_next_view_the_new(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "c.db")
    engine = open_engine(db)
    ensure_contest(engine, WebConfig(db=db, sandbox="process"))  # the three house bots
    cache = StandingsCache()
    first = cache.get(engine, "contest")
    assert len(first.rows) == 3 and cache.get(engine, "contest") is first  # kept per state

    with Session(engine) as session, session.begin():  # a new entrant: a new state
        ladder = session.scalar(select(Ladder).where(Ladder.name == "contest"))
        assert ladder is not None
        version = add_version(session, "newcomer", "sample_bots/random", "f" * 64)
        session.add(Entry(ladder_id=ladder.id, version_id=version.id))

    assert cache._lock.acquire(blocking=False)  # someone (the player) is refitting
    try:
        assert cache.get(engine, "contest") is first  # at once, the last standings
    finally:
        cache._lock.release()
    fresh = cache.get(engine, "contest")
    assert fresh is not first and len(fresh.rows) == 4
    assert "newcomer" in {r["bot"] for r in fresh.rows}
    engine.dispose()


def test_the_first_fit_is_waited_for(tmp_path: Path) -> None:
    """With nothing kept yet there is nothing to show instead: the view fits it."""
    db = str(tmp_path / "c.db")
    engine = open_engine(db)
    ensure_contest(engine, WebConfig(db=db, sandbox="process"))
    cache = StandingsCache()
    assert len(cache.get(engine, "contest").rows) == 3
    engine.dispose()
