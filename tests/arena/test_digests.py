"""Ratings that scale: every finished match's digest is written with it, the leaderboard is
fitted from the digests (never a match's result) and equals the fit on the records, a
refit after one more match starts from the stored solution, and an old ladder (kept before
digests) gets its digests on the first fit — on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from arena.ladder import rated as rated_module
from arena.ladder.digests import decode, match_digest
from arena.ladder.leaderboard import leaderboard, rated_blocks, rated_totals
from arena.ladder.ratings import fit_plackett_luce, openskill_ordinals
from arena.ladder.store import (
    Entry,
    Ladder,
    Match,
    MatchDigest,
    MatchSeat,
    RatingState,
    open_engine,
    save_match,
)
from arena.referee.results import MatchResult

from testkit import arena as run_arena

arena = partial(run_arena, timeout=600)

ROOT = Path(__file__).resolve().parents[2]
BOTS = [str(ROOT / "sample_bots" / n) for n in ("random", "greedy")]
RAISER = str(ROOT / "tests" / "adversarial" / "bots" / "raiser.py")  # forfeits every match
HEURISTIC = str(ROOT / "sample_bots" / "heuristic")

ELO_ABS = 1e-3
SE_REL = 1e-6
"""Today's fit stops where scipy's L-BFGS-B stops, by default at a projected gradient of
1e-5: hundredths of an Elo point from the optimum for a bot in the main field, up to a
point or so for one outside it (its rating rests on the ridge, whose curvature is 1e-3).
The digest fit goes to Newton's optimum (a decrement of 1e-14).  So they are compared with
today's fit run to its optimum (L-BFGS-B's tolerances tightened): Elo within 1e-3 points,
interval half-widths within 1e-6 relative (measured: ~1e-5 points, ~1e-8)."""


def _ladder(db: str, *bots: str) -> None:
    proc = arena(
        "ladder", "run", "--db", db, "--sandbox", "inproc", "--no-check", "--jobs", "1",
        "--deals", "2", "--rounds", "2", "--json", "--bots", *bots,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="module")
def played(module_db):
    """A small ladder of real sample bots: three entrants first (a table of four repeats
    one of them), then a fourth joins; one entrant forfeits every match (its hands count as
    last).  Returns the database."""
    _ladder(module_db, *BOTS, RAISER)
    _ladder(module_db, *BOTS, RAISER, HEURISTIC)
    return module_db


def _record_fit(session: Session, ladder: Ladder) -> tuple[Any, list, dict[int, dict[str, Any]]]:
    """Today's path: every finished match's result read, its blocks rebuilt, fitted (to
    its optimum: see ``SE_REL``)."""
    done = list(
        session.scalars(select(Match).where(Match.ladder_id == ladder.id, Match.status == "done"))
    )
    rotations = ladder.settings["rotations"]
    blocks = rated_blocks(done, rotations)
    columns: dict[int, dict[str, Any]] = {}
    for m in done:
        for vid in dict.fromkeys(m.seats):
            c = columns.setdefault(vid, dict.fromkeys(("matches", "points", "hands"), 0))
            c["matches"] += 1
        assert m.result is not None
        for h in m.result["hands"]:
            for seat, vid in enumerate(m.seats):
                columns[vid]["points"] += h["scores"][seat]
                columns[vid]["hands"] += 1
    import scipy.optimize

    minimize = scipy.optimize.minimize
    tight = {"gtol": 1e-13, "ftol": 1e-16, "maxiter": 100_000, "maxfun": 100_000}
    try:
        scipy.optimize.minimize = lambda *a, **k: minimize(*a, **k, options=tight)
        fit = fit_plackett_luce(blocks)
    finally:
        scipy.optimize.minimize = minimize
    return fit, blocks, columns


def _same_fit(new, old) -> None:
    a, b = new.by_bot(), old.by_bot()
    assert set(a) == set(b)
    for bot in b:
        assert a[bot].elo == pytest.approx(b[bot].elo, abs=ELO_ABS)
        assert a[bot].stderr == pytest.approx(b[bot].stderr, rel=SE_REL)
        assert a[bot].in_field == b[bot].in_field
        for other in b:
            if other != bot:
                assert new.superiority[bot][other] == pytest.approx(
                    old.superiority[bot][other], abs=1e-4
                )


@pytest.mark.slow
def test_every_finished_match_has_its_digest_and_the_fit_on_them_is_the_fit_on_the_records(
    played,
):
    engine = open_engine(played)
    with Session(engine) as session:
        ladder = session.scalar(select(Ladder))
        assert ladder is not None
        done = list(session.scalars(select(Match).where(Match.status == "done")))
        assert len(done) == 4
        digests = {d.match_id: d for d in session.scalars(select(MatchDigest))}
        assert set(digests) == {m.id for m in done}  # one each, written with the match
        for m in done:
            assert m.result is not None
            again = match_digest(
                m.seats, MatchResult.from_json(m.result), ladder.settings["rotations"]
            )
            assert digests[m.id].data == again
        assert decode([(d.id, d.data) for d in digests.values()]).blocks == 4 * 2  # per deal
        old, blocks, columns = _record_fit(session, ladder)
        rated_module.forget()
        new = rated_module.rate(session, ladder)
        assert new.fit is not None
        _same_fit(new.fit, old)
        # OpenSkill in the order the matches finished (one job: the order of their ids)
        expected = openskill_ordinals(rated_totals(blocks, ladder.settings["rotations"]))
        assert new.skill == pytest.approx(expected, abs=1e-9)
        for vid, c in columns.items():
            got = new.played[vid]
            assert (got.matches, got.points, got.hands) == (c["matches"], c["points"], c["hands"])
        _, rows = leaderboard(session, ladder.name)
        results = {m.id: m.result for m in done}
    # the results are not read for the ratings or any column: the same leaderboard with
    # every result gone (the order notes alone read results: those of a disagreeing pair)
    with engine.begin() as conn:
        conn.execute(text("UPDATE matches SET result = NULL"))
    rated_module.forget()
    with Session(engine) as session:
        _, again = leaderboard(session, ladder.name, notes=False)
    assert again == [{**r, "order_note": None} for r in rows]
    with Session(engine) as session, session.begin():  # back, for the next test
        for mid, result in results.items():
            match = session.get(Match, mid)
            assert match is not None
            match.result = result
    raiser = next(r for r in rows if r["bot"] == "raiser")
    assert raiser["forfeits"] == 4 and raiser["first_places"] == 0 and not raiser["in_field"]
    engine.dispose()


def _one_more_match(session: Session, like: Match, n: int) -> None:
    """A finished match more, written through the store as the runner writes one (the
    result of an earlier match of the same table, played again)."""
    assert like.result is not None
    match = Match(
        ladder_id=like.ladder_id,
        key=f"again/{like.id}/{n}",
        seats=list(like.seats),
        deal_seeds=list(like.deal_seeds),
        status="running",
    )
    session.add(match)
    session.flush()
    session.add_all(
        MatchSeat(match_id=match.id, seat=s, version_id=v) for s, v in enumerate(match.seats)
    )
    result = json.loads(json.dumps(like.result))
    for seat in result["seats"]:  # the referee's summary has each fault's detail
        seat["faults"] = [{**f, "detail": "again"} for f in seat["faults"]]
    save_match(session, match, MatchResult.from_json(result), [], [])


@pytest.mark.slow
def test_a_refit_after_one_more_match_starts_from_the_last_solution(played, tmp_path):
    engine = open_engine(played)
    with Session(engine) as session:
        ladder = session.scalar(select(Ladder))
        assert ladder is not None
        session.query(RatingState).delete()  # no stored solution: a cold fit
        session.commit()
        rated_module.forget()
        cold = rated_module.rate(session, ladder)
        assert not cold.warm and cold.iterations >= 3
        stored = session.get(RatingState, ladder.id)
        assert stored is not None and stored.digests == cold.digests == 4

        last = session.scalars(select(Match).order_by(Match.id.desc())).first()
        assert last is not None
        _one_more_match(session, last, 1)
        session.commit()

        # a new process: the stored solution is its start, OpenSkill goes on from its state
        rated_module.forget()
        warm = rated_module.rate(session, ladder)
        assert warm.warm and warm.digests == 5
        assert warm.iterations < cold.iterations
        # this process again, one more match: only the new digest read
        _one_more_match(session, last, 2)
        session.commit()
        kept = rated_module.rate(session, ladder)
        assert kept.warm and kept.digests == 6 and kept.iterations < cold.iterations

        # the same as a cold fit of the same six matches, and as the records' fit
        session.query(RatingState).delete()
        session.commit()
        rated_module.forget()
        fresh = rated_module.rate(session, ladder)
        assert not fresh.warm and fresh.fit is not None and kept.fit is not None
        for bot, r in fresh.fit.by_bot().items():
            assert kept.fit.by_bot()[bot].elo == pytest.approx(r.elo, abs=1e-6)
            assert kept.fit.by_bot()[bot].stderr == pytest.approx(r.stderr, rel=1e-6)
        assert kept.skill == pytest.approx(fresh.skill, abs=1e-9)
        old, _, _ = _record_fit(session, ladder)
        _same_fit(kept.fit, old)

        # the planner's view: the active entrants' ratings, a paused one left out
        entry = session.scalars(select(Entry).order_by(Entry.version_id)).first()
        assert entry is not None
        entry.paused = True
        session.commit()
        active = rated_module.active_ratings(session, ladder.name)
        assert entry.version_id not in active.ratings and active.fit is not None
        assert set(active.ratings) | {entry.version_id} == set(fresh.fit.by_bot())
        for v, r in active.ratings.items():
            assert r.elo == pytest.approx(fresh.fit.by_bot()[v].elo, abs=1e-6)
        entry.paused = False
        session.commit()
    engine.dispose()


def _age(db: str) -> None:
    """Make the ladder look as one kept before digests (revision 0006)."""
    engine = open_engine(db)
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE rating_states"))
        conn.execute(text("DROP TABLE match_digests"))
        conn.execute(text("DROP INDEX IF EXISTS ix_matches_ladder_id_round"))  # (0007's)
        conn.execute(text("ALTER TABLE matches DROP COLUMN round"))
        conn.execute(text("UPDATE alembic_version SET version_num = '0006'"))
    engine.dispose()


@pytest.mark.slow
def test_an_old_ladder_gets_its_digests_on_its_first_fit(db):
    _ladder(db, *BOTS, HEURISTIC)
    shown = arena("ladder", "show", "--db", db, "--json")
    assert shown.returncode == 0, shown.stderr
    _age(db)
    engine = open_engine(db)  # upgraded: the tables are back, empty
    with Session(engine) as session:
        assert session.scalar(select(func.count()).select_from(MatchDigest)) == 0
    engine.dispose()
    rated_module.forget()
    again = arena("ladder", "show", "--db", db, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == json.loads(shown.stdout)
    engine = open_engine(db)
    with Session(engine) as session:
        ladder = session.scalar(select(Ladder))
        assert ladder is not None
        done = list(session.scalars(select(Match).where(Match.status == "done")))
        digests = {d.match_id: d.data for d in session.scalars(select(MatchDigest))}
        assert set(digests) == {m.id for m in done} and len(done) == 2
        for m in done:
            assert m.result is not None
            assert digests[m.id] == match_digest(
                m.seats, MatchResult.from_json(m.result), ladder.settings["rotations"]
            )
        old, _, _ = _record_fit(session, ladder)
        rated_module.forget()
        new = rated_module.rate(session, ladder)
        assert new.fit is not None
        _same_fit(new.fit, old)
    engine.dispose()
