"""The pages' leaderboard (``arena.web.contest.StandingsCache``): the fit stored in the
database by the worker, read by the pages; the web process never fits it in its own
interpreter (a fit of 100,000 matches takes minutes)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.ladder.store import Entry, Ladder, add_version, open_engine
from arena.web.contest import (
    StandingsCache,
    WebConfig,
    engine_db,
    ensure_contest,
    fit_standings,
    ladder_state,
)
from arena.web.worker_state import fit_meta, state_key, store_fit, worker_started


def _contest(tmp_path: Path):
    db = str(tmp_path / "c.db")
    engine = open_engine(db)
    ensure_contest(engine, WebConfig(db=db, sandbox="process"))  # the three house bots
    return engine


def _newcomer(engine) -> None:
    with Session(engine) as session, session.begin():  # a new entrant: a new state
        ladder = session.scalar(select(Ladder).where(Ladder.name == "contest"))
        assert ladder is not None
        version = add_version(session, "newcomer", "sample_bots/random", "f" * 64)
        session.add(Entry(ladder_id=ladder.id, version_id=version.id))


def _no_fit_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fit in this (the web) process fails the test; every ladder counts as big (a small
    one, under ``inline_below`` matches, is fitted in the web process: milliseconds)."""
    monkeypatch.setattr(StandingsCache, "inline_below", 0)

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("the leaderboard was fitted in the web process")

    monkeypatch.setattr("arena.ladder.leaderboard.leaderboard", refuse)
    monkeypatch.setattr("arena.web.contest.leaderboard", refuse)


def test_the_web_process_never_fits_the_leaderboard(tmp_path, monkeypatch):
    """With nothing stored and no worker, the first view waits for a fit made in a process
    of its own (before: fitted in the server's interpreter, holding every page)."""
    engine = _contest(tmp_path)
    _no_fit_here(monkeypatch)
    cache = StandingsCache()
    try:
        first = cache.get(engine, "contest")
        assert len(first.rows) == 3 and first.state == state_key(ladder_state(engine, "contest"))
        assert cache.get(engine, "contest") is first  # parsed once per stored fit
    finally:
        cache.fitter.close()
        engine.dispose()


def test_with_a_worker_running_a_trailing_fit_is_shown_and_nothing_fitted(tmp_path, monkeypatch):
    engine = _contest(tmp_path)
    fit_standings(engine, "contest")  # the worker's last fit
    _newcomer(engine)
    worker_started(engine, "contest")  # its heartbeat is fresh
    _no_fit_here(monkeypatch)
    cache = StandingsCache()
    shown = cache.get(engine, "contest")
    assert len(shown.rows) == 3 and cache.fitter._pool is None  # no fit started here
    engine.dispose()


def test_without_a_worker_later_views_never_wait_for_a_refit(tmp_path, monkeypatch):
    engine = _contest(tmp_path)
    monkeypatch.setattr(StandingsCache, "inline_below", 0)  # as on a big ladder
    cache = StandingsCache()
    try:
        first = cache.get(engine, "contest")
        _newcomer(engine)
        assert cache.get(engine, "contest") is first  # at once: the last standings
        deadline = time.monotonic() + 120
        while len((fresh := cache.get(engine, "contest")).rows) != 4:
            assert time.monotonic() < deadline, "the refit never showed"
            time.sleep(0.2)
        assert "newcomer" in {r["bot"] for r in fresh.rows}
    finally:
        cache.fitter.close()
        engine.dispose()


def test_an_older_fit_never_replaces_a_newer_one(tmp_path):
    """Two fitters (a worker, a server without one) finishing out of order."""
    engine = _contest(tmp_path)
    state = ladder_state(engine, "contest")
    newer = (state[0], 5, 9, state[3])
    assert store_fit(engine, state[0], newer, [{"bot": "new"}], 1.0)
    assert not store_fit(engine, state[0], state, [{"bot": "old"}], 1.0)
    meta = fit_meta(engine, state[0])
    assert meta is not None and meta.matches_done == 5 and meta.serial == 1
    assert engine_db(engine).startswith("sqlite:///")
    engine.dispose()


def test_a_small_ladder_without_a_worker_is_fitted_at_once(tmp_path):
    engine = _contest(tmp_path)
    cache = StandingsCache()
    assert len(cache.get(engine, "contest").rows) == 3 and cache.fitter._pool is None
    engine.dispose()
