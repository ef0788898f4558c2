"""A ladder's ratings from its match digests: what the leaderboard is made of, refitted
without reading a match's result.

- **Digests**: every finished match has one (``store.save_match`` writes it).  A ladder
  kept before digests existed gets them here, on the first fit that misses them: computed
  from the stored results once and written (lazily rather than in the migration, which
  must not import the arena's rating code and would hold every server's start for minutes
  on a big PostgreSQL ladder).
- **Warm start**: the last fit's log-strengths and the OpenSkill ratings after the digests
  it covered are stored (``store.RatingState``); the next fit starts from them, and
  OpenSkill goes on from them with the newer digests only.
- **In-process evidence**: a process that fits again (the worker's fit process, a web
  process fitting a small ladder) keeps the summed evidence (``fitting.Evidence``) and
  reads only the digests written since.

OpenSkill's feedback is rated in the order the digests were written, which is the order
the matches finished (an old ladder's backfilled digests: in the order of their
``finished`` time).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from ..referee.results import MatchResult
from .digests import Digests, block_totals, decode, empty, join, match_digest
from .fitting import DigestFit, Evidence, fit_evidence
from .ratings import Fit, Rating, openskill_state
from .store import Entry, Ladder, Match, MatchDigest, RatingState

log = logging.getLogger(__name__)

BACKFILL_CHUNK = 2000
"""Digests of an old ladder's matches written per transaction."""


@dataclass(frozen=True)
class Played:
    """One version's columns summed over its finished matches."""

    matches: int = 0
    points: float = 0.0
    hands: int = 0
    first_places: int = 0
    faults: int = 0
    forfeits: int = 0


@dataclass(frozen=True)
class Rated:
    """A ladder's ratings and its entrants' columns, from its digests."""

    fit: Fit[int] | None
    """None: fewer than two versions with a complete deal block."""
    skill: dict[int, float]
    """OpenSkill ordinal per version (live feedback)."""
    played: dict[int, Played]
    """Per version seated in a finished match."""
    digests: int
    iterations: int
    """Newton steps the fit took (0: no fit)."""
    warm: bool
    """Whether the fit started from a previous solution."""
    seconds: dict[str, float] = field(default_factory=dict)
    """Where the time went: read, decode, evidence, fit, skill, store."""


@dataclass
class _Kept:
    """What a process keeps of a ladder between fits."""

    evidence: Evidence
    ids: int  # digests read
    last_id: int
    totals: dict[int, np.ndarray]  # version → [matches, points, hands, firsts, faults, forfeits]
    skill: dict[int, tuple[float, float]]
    theta: dict[int, float]
    last: Rated | None = None  # the fit of exactly these digests


_KEPT: OrderedDict[tuple[str, int, str], _Kept] = OrderedDict()
_KEEP = 4
_LOCK = threading.Lock()


def rate(session: Session, ladder: Ladder) -> Rated:
    """The ladder's ratings from its digests (made first for finished matches without
    one), warm-started; the new solution is stored for the next fit."""
    with _LOCK:
        return _rate(session, ladder)


def _rate(session: Session, ladder: Ladder) -> Rated:
    key = (session.get_bind().engine.url.render_as_string(), ladder.id, str(ladder.created))
    try:
        return _rate_kept(session, ladder, key)
    except BaseException:
        _KEPT.pop(key, None)  # changed half-way: the next fit starts afresh
        raise


def _rate_kept(session: Session, ladder: Ladder, key: tuple[str, int, str]) -> Rated:
    clock: dict[str, float] = {}
    started = time.perf_counter()
    backfilled = _backfill(session, ladder)
    kept = _KEPT.pop(key, None)
    if kept is not None:
        covered = session.scalar(
            select(func.count())
            .select_from(MatchDigest)
            .where(MatchDigest.ladder_id == ladder.id, MatchDigest.id <= kept.last_id)
        )
        if covered != kept.ids:  # a digest committed out of order: read them all again
            kept = None
    last = kept.last_id if kept is not None else 0
    rows = [
        (int(i), bytes(data))
        for i, data in session.execute(
            select(MatchDigest.id, MatchDigest.data)
            .where(MatchDigest.ladder_id == ladder.id, MatchDigest.id > last)
            .order_by(MatchDigest.id)
        )
    ]
    seen = {i for i, _ in rows}
    rows += [(i, data) for i, data in backfilled if i > last and i not in seen]
    rows.sort()
    if not rows and kept is not None and kept.last is not None:
        _KEPT[key] = kept  # nothing new: the same fit (a page and a snapshot in a row)
        return kept.last
    clock["read"] = time.perf_counter() - started
    mark = time.perf_counter()
    new = decode(rows) if rows else empty()
    clock["decode"] = time.perf_counter() - mark
    stored = _stored(session, ladder.id)
    if kept is None:
        kept = _Kept(Evidence.empty(new.width), 0, 0, {}, {}, {})
        if stored is not None:
            kept.theta = stored[2]
    mark = time.perf_counter()
    kept.evidence = kept.evidence.add(new)
    _add_totals(kept.totals, new)
    clock["evidence"] = time.perf_counter() - mark
    mark = time.perf_counter()
    kept.skill = _skill(session, ladder.id, kept, new, stored)
    clock["skill"] = time.perf_counter() - mark
    mark = time.perf_counter()
    result: DigestFit | None = fit_evidence(kept.evidence, kept.theta or None)
    clock["fit"] = time.perf_counter() - mark
    if result is not None:
        clock.update({f"fit.{k}": v for k, v in result.seconds.items()})
    kept.ids += len(rows)
    kept.last_id = max([kept.last_id, *(i for i, _ in rows)])
    if result is not None:
        kept.theta = result.theta
    _KEPT[key] = kept
    _KEPT.move_to_end(key)
    while len(_KEPT) > _KEEP:
        _KEPT.popitem(last=False)
    mark = time.perf_counter()
    if rows:
        _store(session, ladder.id, kept)
    clock["store"] = time.perf_counter() - mark
    from openskill.models import PlackettLuce

    model = PlackettLuce(tau=0.0)
    skill = {v: model.rating(mu=mu, sigma=sigma).ordinal() for v, (mu, sigma) in kept.skill.items()}
    played = {
        v: Played(int(t[0]), float(t[1]), int(t[2]), int(t[3]), int(t[4]), int(t[5]))
        for v, t in kept.totals.items()
    }
    kept.last = Rated(
        result.fit if result is not None else None,
        skill,
        played,
        kept.ids,
        result.iterations if result is not None else 0,
        bool(result is not None and result.warm),
        clock,
    )
    return kept.last


def _add_totals(totals: dict[int, np.ndarray], d: Digests) -> None:
    """Each version's columns (``Played``) plus ``d``'s matches."""
    if not len(d.ids):
        return
    seated = d.group >= 0
    vids = d.group[seated]
    columns = np.column_stack(
        [np.ones(len(vids)), d.points[seated], d.counts[seated].astype(float)]
    )
    order = np.argsort(vids, kind="stable")
    vids, columns = vids[order], columns[order]
    starts = np.flatnonzero(np.r_[True, vids[1:] != vids[:-1]])
    sums = np.add.reduceat(columns, starts, axis=0)
    for v, row in zip(vids[starts].tolist(), sums, strict=True):
        have = totals.get(v)
        totals[v] = row if have is None else have + row


def _skill(
    session: Session,
    ladder_id: int,
    kept: _Kept,
    new: Digests,
    stored: tuple[int, int, dict[int, float], dict[int, tuple[float, float]]] | None,
) -> dict[int, tuple[float, float]]:
    """OpenSkill after every digest, in the order they were written: on from what this
    process kept, or from the stored state when it covers exactly the digests up to its
    last one, else from the first digest."""
    if kept.ids:
        return openskill_state(block_totals(new), kept.skill)
    if stored is not None and stored[0] > 0:
        digests, last_id = stored[0], stored[1]
        covered = session.scalar(
            select(func.count())
            .select_from(MatchDigest)
            .where(MatchDigest.ladder_id == ladder_id, MatchDigest.id <= last_id)
        )
        if covered == digests:
            after = np.nonzero(new.ids > last_id)[0]
            return openskill_state(block_totals(_matches(new, after)), stored[3])
    return openskill_state(block_totals(new), {})


def _matches(d: Digests, rows: np.ndarray) -> Digests:
    """The digests ``rows`` (ascending) of ``d``."""
    keep = np.isin(d.block_match, rows)
    renumber = np.full(len(d.ids), -1)
    renumber[rows] = np.arange(len(rows))
    return Digests(
        d.width,
        d.ids[rows],
        d.group[rows],
        d.points[rows],
        d.counts[rows],
        renumber[d.block_match[keep]],
        d.sets[keep],
        d.won[keep],
        d.ahead[keep],
        d.totals[keep],
    )


def _stored(
    session: Session, ladder_id: int
) -> tuple[int, int, dict[int, float], dict[int, tuple[float, float]]] | None:
    row = session.get(RatingState, ladder_id)
    if row is None:
        return None
    try:
        theta = {int(k): float(v) for k, v in json.loads(row.theta).items()}
        skill = {int(k): (float(v[0]), float(v[1])) for k, v in json.loads(row.skill).items()}
    except (ValueError, TypeError, IndexError, AttributeError):
        return None  # unreadable: a cold start is correct, only slower
    return int(row.digests), int(row.last_digest), theta, skill


def _store(session: Session, ladder_id: int, kept: _Kept) -> None:
    """Keep the solution for the next fit, in a transaction of its own (the caller's may
    be a read-only snapshot).  A failure costs the next fit its warm start, nothing else."""
    try:
        with Session(session.get_bind()) as own, own.begin():
            row = own.get(RatingState, ladder_id)
            if row is None:
                row = RatingState(ladder_id=ladder_id)
                own.add(row)
            elif row.last_digest > kept.last_id:
                return  # another fitter stored a later state
            row.digests, row.last_digest = kept.ids, kept.last_id
            row.theta = json.dumps({str(k): v for k, v in kept.theta.items()})
            row.skill = json.dumps({str(k): list(v) for k, v in kept.skill.items()})
            from .store import _now

            row.fitted = _now()
    except SQLAlchemyError as exc:
        log.warning("the fit's warm start was not stored: %s", exc)


def _backfill(session: Session, ladder: Ladder) -> list[tuple[int, bytes]]:
    """Digests for the ladder's finished matches that have none (a ladder kept before
    digests), written in transactions of their own; returns them as ``(id, data)``."""
    done = session.scalar(
        select(func.count())
        .select_from(Match)
        .where(Match.ladder_id == ladder.id, Match.status == "done")
    )
    have = session.scalar(
        select(func.count()).select_from(MatchDigest).where(MatchDigest.ladder_id == ladder.id)
    )
    if done == have:
        return []
    missing = list(
        session.scalars(
            select(Match.id)
            .outerjoin(MatchDigest, MatchDigest.match_id == Match.id)
            .where(Match.ladder_id == ladder.id, Match.status == "done", MatchDigest.id.is_(None))
            .order_by(Match.finished, Match.id)
        )
    )
    rotations = ladder.settings["rotations"]
    out: list[tuple[int, bytes]] = []
    for lo in range(0, len(missing), BACKFILL_CHUNK):
        chunk = missing[lo : lo + BACKFILL_CHUNK]
        matches = {m.id: m for m in session.scalars(select(Match).where(Match.id.in_(chunk)))}
        made = [
            MatchDigest(
                match_id=mid,
                ladder_id=ladder.id,
                data=match_digest(list(matches[mid].seats), _result(matches[mid]), rotations),
            )
            for mid in chunk
        ]
        try:
            with Session(session.get_bind()) as own, own.begin():
                own.add_all(made)
                own.flush()
                out += [(int(d.id), d.data) for d in made]
        except SQLAlchemyError as exc:  # another fitter wrote them meanwhile
            log.warning("digests of old matches not written (%s); read again next fit", exc)
            base = 1 << 40  # in this fit only, after every real digest, in order
            out += [(base + lo + i, d.data) for i, d in enumerate(made)]
    return out


def _result(match: Match) -> MatchResult:
    assert match.result is not None, f"match {match.id} is done without a result"
    return MatchResult.from_json(match.result)


# ----- for the planner ---------------------------------------------------------------------
@dataclass(frozen=True)
class ActiveRatings:
    """The ladder's current ratings of the entrants that may be planned (neither retired
    nor paused)."""

    ratings: dict[int, Rating[int]]
    """Rated active entrants, by version id."""
    unrated: list[int]
    """Active entrants without a rating yet (not played, or no complete deal block)."""
    fit: Fit[int] | None
    """The whole fit (``superiority`` between any two rated versions)."""


def active_ratings(session: Session, ladder_name: str) -> ActiveRatings:
    """The current ratings of the ladder's active entrants (the planner's input): the
    digests' fit, warm-started, as the leaderboard has it."""
    ladder = session.scalar(select(Ladder).where(Ladder.name == ladder_name))
    if ladder is None:
        raise ValueError(f"no ladder named {ladder_name!r}")
    active = list(
        session.scalars(
            select(Entry.version_id)
            .where(Entry.ladder_id == ladder.id, Entry.retired.is_(False), Entry.paused.is_(False))
            .order_by(Entry.version_id)
        )
    )
    fit = rate(session, ladder).fit
    rated = fit.by_bot() if fit is not None else {}
    return ActiveRatings(
        {v: rated[v] for v in active if v in rated}, [v for v in active if v not in rated], fit
    )


def forget() -> None:
    """Drop what this process kept (tests; a fit then reads every digest again)."""
    with _LOCK:
        _KEPT.clear()


__all__ = ["ActiveRatings", "Played", "Rated", "active_ratings", "forget", "join", "rate"]
