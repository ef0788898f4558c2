"""The final evaluation, as Kaggle runs one: after the regular play, an extra phase of fresh
secret deals concentrated on the top of the table, until the order of the top ``k`` is
settled or a budget of matches is spent; then the standings are marked *final*.

Why a phase of its own: regular planning spreads matches over the whole field (every
entrant seated, doubt wherever it is), but who wins a contest is decided by the top few,
and their order is what a contest's result must get right.  So the phase plays, batch by
batch, only groups built around the pairs of the top that are not yet *separated*
(:meth:`~arena.ladder.ratings.Fit.separated`, the leaderboard's "next" column), with the
entrants whose rating is not separated from the k-th (they may still climb into the top),
refitting after each batch.  It stops when each of the top ``k`` is separated from the
entrant below it (so the k-th from the (k+1)-th too: who is in the top k is settled as
well as their order), or when ``budget`` matches of the phase have been played, or when
no group of the doubtful pairs can be played (a paused bot among them).

What the ladder keeps, in its settings (JSON, typed here):

- ``final_phase`` (:class:`FinalPhase`): a phase asked for and under way (``arena ladder
  final``, or the organizer's button, which the served contest's player reads);
- ``final`` (:class:`FinalMarker`): the ladder is final — when, k, budget, matches played,
  whether the top was separated and the final top k.  Regular planning adds no match to a
  ladder in its final phase or final (:func:`refuse_if_final`) until it is reopened
  (:func:`reopen`; earlier markers are kept in ``final_history``).

Final matches have keys of their own (``final-000001``, ...: never a regular match's key,
which is 32 hex digits), so their deals are fresh — a deal's seed is the HMAC of its public
id under the ladder's secret (:func:`~arena.ladder.planning.deal_seed`), and the id is made
of the key.  Planning a batch only when none of the phase's matches is pending makes the
phase resumable: a killed run is run again and plays what was planned, nothing twice.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from bigtwo import RuleSet

from ..referee.results import MatchResult
from .planning import deal_key, seating
from .queries import StoreError, entrants, ladder_names, no_ladder
from .ratings import separated
from .running import BATCH
from .store import Ladder, Match, MatchSeat

FINAL_KEY = "final-"
"""The key prefix of the final phase's matches (a regular match's key is 32 hex digits)."""
PHASE = "final_phase"
MARKER = "final"
HISTORY = "final_history"
EXTRA_CONTENDERS = 4
"""At most this many entrants below the k-th whose rating is not separated from the k-th's
join the phase's groups (highest first): they may still climb into the top k."""
MAX_TOP = 100
MAX_BUDGET = 1_000_000


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class FinalPhase:
    """A final evaluation asked for and under way (the ladder setting ``final_phase``)."""

    k: int
    budget: int
    """Matches the phase may play."""
    started: str
    """When it was asked for (ISO 8601, UTC)."""
    base: int
    """The ladder's final matches before this phase (a reopened ladder's earlier phases):
    this phase's are those numbered above it."""

    def to_dict(self) -> dict[str, Any]:
        return {"k": self.k, "budget": self.budget, "started": self.started, "base": self.base}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FinalPhase:
        return cls(int(data["k"]), int(data["budget"]), str(data["started"]), int(data["base"]))


@dataclass(frozen=True)
class FinalMarker:
    """The ladder is final (the ladder setting ``final``)."""

    when: str
    """When the phase ended (ISO 8601, UTC)."""
    k: int
    budget: int
    matches: int
    """Matches the final phase played."""
    separated: bool
    """Each of the top k separated from the one below it when the phase ended."""
    stopped: str
    """Why it ended: ``separated``, ``budget`` (spent), or ``unplayable`` (the doubtful
    pairs hold a bot that cannot play: paused)."""
    top: tuple[str, ...]
    """The final top k, best first (bot labels as the leaderboard shows them)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "when": self.when,
            "k": self.k,
            "budget": self.budget,
            "matches": self.matches,
            "separated": self.separated,
            "stopped": self.stopped,
            "top": list(self.top),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FinalMarker:
        return cls(
            str(data["when"]),
            int(data["k"]),
            int(data["budget"]),
            int(data["matches"]),
            bool(data["separated"]),
            str(data.get("stopped", "separated" if data["separated"] else "budget")),
            tuple(str(b) for b in data["top"]),
        )

    def summary(self) -> str:
        """One line for people, after "final": since when, with what result."""
        top = ", ".join(f"{i}. {b}" for i, b in enumerate(self.top, 1))
        how = {
            "separated": "the top {k} separated",
            "budget": "its budget spent, the top {k} not all separated",
            "unplayable": "the top {k} not all separated, and no group of them can play",
        }[self.stopped if self.stopped in ("separated", "budget", "unplayable") else "budget"]
        return (
            f"since {self.when}: {how.format(k=self.k)} after {self.matches} match(es) "
            f"of the final phase (budget {self.budget}); top: {top}"
        )


def final_state(settings: Mapping[str, Any]) -> tuple[FinalPhase | None, FinalMarker | None]:
    """A ladder's final phase under way and its final marker, from its settings."""
    phase = settings.get(PHASE)
    marker = settings.get(MARKER)
    return (
        FinalPhase.from_dict(phase) if isinstance(phase, Mapping) else None,
        FinalMarker.from_dict(marker) if isinstance(marker, Mapping) else None,
    )


def settings_of(engine: Engine, name: str) -> dict[str, Any]:
    """Ladder ``name``'s settings (its final state is :func:`final_state` of them)."""
    with Session(engine) as session:
        return dict(_ladder(session, name).settings)


def refuse_if_final(ladder: Ladder) -> None:
    """Regular planning's guard: a ladder in its final phase, or final, gets no regular
    match (a :class:`StoreError` that says how to reopen it)."""
    phase, marker = final_state(ladder.settings)
    if marker is not None:
        raise StoreError(
            f"ladder {ladder.name!r} is final ({marker.summary()}); no new match is "
            f"planned. `arena ladder final --name {ladder.name} --reopen` reopens it"
        )
    if phase is not None:
        raise StoreError(
            f"ladder {ladder.name!r} is in its final evaluation (top {phase.k}, budget "
            f"{phase.budget}); `arena ladder final --name {ladder.name}` goes on with it"
        )


# ----- choosing the next batch (pure) ----------------------------------------------------
@dataclass(frozen=True)
class Place:
    """A rated entrant as the final phase sees it: its leaderboard row, in rank order."""

    vid: int
    label: str
    elo: float
    separated_from_next: bool
    superiority: Mapping[str, float]
    """P(this entrant stronger than the one so labelled)."""
    playable: bool = True
    """False: paused (it plays no match until resumed)."""


@dataclass(frozen=True)
class Doubt:
    """A pair of neighbours at the top whose order is not settled yet."""

    upper: Place
    lower: Place

    @property
    def p(self) -> float:
        """P(the upper one stronger than the lower)."""
        return float(self.upper.superiority.get(self.lower.label, 0.5))


def doubts(table: Sequence[Place], k: int) -> list[Doubt]:
    """Each of the top ``k`` not separated from the entrant below it (the k-th from the
    (k+1)-th too), most doubtful (P nearest ½) first."""
    out = [
        Doubt(table[i], table[i + 1])
        for i in range(min(k, len(table) - 1))
        if not table[i].separated_from_next
    ]
    return sorted(out, key=lambda d: abs(d.p - 0.5))


def contenders(table: Sequence[Place], k: int) -> list[Place]:
    """The top ``k`` and the entrants below whose rating is not separated from the k-th's
    (at most ``EXTRA_CONTENDERS`` of them, highest first)."""
    if not table:
        return []
    kth = table[min(k, len(table)) - 1]
    extra = [p for p in table[k:] if not separated(float(kth.superiority.get(p.label, 0.5)))][
        :EXTRA_CONTENDERS
    ]
    return [*table[:k], *extra]


def choose_groups(
    table: Sequence[Place], unrated: Sequence[int], k: int, seats: int
) -> list[list[int]]:
    """The groups of the next batch, one per doubtful pair (most doubtful first) not
    already seated together in an earlier group, each filled with the contenders that
    settle most other doubtful pairs, then those seated least in the batch and nearest in
    rating; past the contenders, the entrants nearest the k-th's rating.  Active entrants
    with no rating yet (``unrated``: version ids) are placed first, with the top.  Only
    playable entrants are seated; a group of fewer entrants than seats repeats them in
    rotation (as ``planning.groups_for`` does).  Empty: nothing doubtful can be played."""
    playable = [p for p in table if p.playable]
    top_ids = {p.vid for p in contenders(table, k) if p.playable}
    rank = {p.vid: i for i, p in enumerate(table)}
    elo = {p.vid: p.elo for p in table}
    kth_elo = table[min(k, len(table)) - 1].elo if table else 0.0
    pairs = [(d.upper.vid, d.lower.vid) for d in doubts(table, k)]
    pairs = [(a, b) for a, b in pairs if a in top_ids or b in top_ids]
    pairs = [(a, b) for a, b in pairs if all(x in {p.vid for p in playable} for x in (a, b))]
    uncovered = set(pairs)
    uses: Counter[int] = Counter()
    groups: list[list[int]] = []

    def settles(vid: int, group: list[int]) -> int:
        return sum((a, b) in uncovered for x in group for a, b in ((x, vid), (vid, x)))

    def key(vid: int, group: list[int], centre: float) -> tuple[float, ...]:
        """Contenders first (those settling most doubtful pairs with the group, then the
        least seated, then the nearest the group's rating); then the rest nearest the k-th;
        then the unrated (placed by their own groups)."""
        if vid in top_ids:
            return (0, -settles(vid, group), uses[vid], abs(elo[vid] - centre), rank[vid])
        if vid in elo:
            return (1, 0, uses[vid], abs(elo[vid] - kth_elo), rank[vid])
        return (2, 0, uses[vid], 0, vid)

    def fill(group: list[int]) -> list[int]:
        pool = [vid for vid in [*(p.vid for p in playable), *unrated] if vid not in group]
        while len(group) < seats and pool:
            rated = [elo[v] for v in group if v in elo]
            centre = sum(rated) / len(rated) if rated else kth_elo
            best = min(pool, key=lambda vid: key(vid, group, centre))
            group.append(best)
            pool.remove(best)
        uses.update(group)
        uncovered.difference_update(itertools.permutations(group, 2))
        distinct = sorted(group)
        return [distinct[i % len(distinct)] for i in range(seats)]

    for vid in sorted(unrated):
        if not any(vid in g for g in groups):
            groups.append(fill([vid]))
    for a, b in pairs:
        if (a, b) in uncovered:
            groups.append(fill([a, b]))
    return groups


def batch_of(groups: list[list[int]], size: int, room: int) -> list[list[int]]:
    """The batch's matches: the groups in turn until ``size`` (at least each once), at most
    ``room`` (what is left of the budget) — the lowest-priority groups dropped first."""
    if not groups:
        return []
    return [groups[i % len(groups)] for i in range(max(size, len(groups)))][: max(0, room)]


# ----- the ladder's final phase ----------------------------------------------------------
@dataclass(frozen=True)
class FinalStep:
    """What one look at the refitted table found and did."""

    phase: FinalPhase
    played: int
    """The phase's finished matches."""
    planned: list[list[int]] = field(default_factory=list)
    """The groups (version ids in seat order) of the batch just planned (one per match)."""
    labels: dict[int, str] = field(default_factory=dict)
    doubts: list[tuple[str, str, float]] = field(default_factory=list)
    """The top's neighbours not yet separated: (upper, lower, P(upper stronger))."""
    pending: int = 0
    """The phase's matches still to play (planned earlier: play them first)."""
    marker: FinalMarker | None = None
    """Set when the phase ended with this step: the ladder is final."""


def _ladder(session: Session, name: str) -> Ladder:
    ladder = session.scalar(select(Ladder).where(Ladder.name == name))
    if ladder is None:
        raise StoreError(no_ladder(name, ladder_names(session), "this database"))
    return ladder


def _final_matches(session: Session, ladder_id: int) -> list[tuple[int, str]]:
    """(number, status) of every final-phase match of the ladder."""
    rows = session.execute(
        select(Match.key, Match.status).where(
            Match.ladder_id == ladder_id, Match.key.startswith(FINAL_KEY, autoescape=True)
        )
    ).all()
    return [(int(key[len(FINAL_KEY) :]), status) for key, status in rows]


def start(engine: Engine, name: str, k: int | None, budget: int | None) -> FinalPhase:
    """Ask for ladder ``name``'s final evaluation of its top ``k`` within ``budget``
    matches, or go on with the one under way (``None``: its own k and budget; a number:
    the new limit, the matches it played counting against it).  A final ladder must be
    reopened first."""
    if k is not None and not 1 <= k <= MAX_TOP:
        raise StoreError(f"--top {k}: the final evaluation ranks the top 1 to {MAX_TOP}")
    if budget is not None and not 1 <= budget <= MAX_BUDGET:
        raise StoreError(f"--budget {budget}: give 1 to {MAX_BUDGET} matches")
    with Session(engine) as session, session.begin():
        ladder = _ladder(session, name)
        phase, marker = final_state(ladder.settings)
        if marker is not None:
            raise StoreError(
                f"ladder {name!r} is final already ({marker.summary()}); reopen it first "
                "(`arena ladder final --reopen`) to evaluate it again"
            )
        if phase is None:
            numbers = [n for n, _ in _final_matches(session, ladder.id)]
            phase = FinalPhase(k or 3, budget or 200, _now(), max(numbers, default=0))
        else:
            phase = FinalPhase(k or phase.k, budget or phase.budget, phase.started, phase.base)
        ladder.settings = {**ladder.settings, PHASE: phase.to_dict()}
        return phase


def reopen(engine: Engine, name: str) -> FinalMarker | None:
    """Reopen ladder ``name``: its final marker (kept in ``final_history``) and any phase
    under way are removed, so regular planning goes on; returns the marker removed.  The
    final phase's matches stay: the finished keep counting, and any not played yet (a
    phase stopped half-way) are played with the regular ones — never deleted under a
    player that may be playing them."""
    with Session(engine) as session, session.begin():
        ladder = _ladder(session, name)
        _, marker = final_state(ladder.settings)
        settings = {k: v for k, v in ladder.settings.items() if k not in (PHASE, MARKER)}
        if marker is not None:
            settings[HISTORY] = [*settings.get(HISTORY, []), marker.to_dict()]
        ladder.settings = settings
        return marker


def step(engine: Engine, name: str, jobs: int = 1) -> FinalStep:
    """One step of the phase under way: when none of its matches is pending, refit the
    table and either end the phase (the marker written, the ladder final) or plan its next
    batch (about ``max(BATCH, jobs)`` matches, within the budget).

    The refit (long on a big ladder) reads in a transaction of its own; the decision is
    written in a short one that reads the settings afresh and writes nothing when the phase
    changed meanwhile (the organizer stopped it or changed its limits: the next step
    decides again) — a settings dict read before the refit and written after it would undo
    whatever the organizer changed in between."""
    from .leaderboard import leaderboard

    with Session(engine) as session:
        ladder = _ladder(session, name)
        phase, marker = final_state(ladder.settings)
        if phase is None:
            if marker is None:
                raise StoreError(f"ladder {name!r} has no final evaluation under way")
            return FinalStep(FinalPhase(marker.k, marker.budget, marker.when, 0), 0, marker=marker)
        seen = sorted(_final_matches(session, ladder.id))
        mine = [(n, s) for n, s in seen if n > phase.base]
        played = sum(s == "done" for _, s in mine)
        pending = sum(s in ("pending", "running") for _, s in mine)
        if pending:
            return FinalStep(phase, played, pending=pending)
        entries = entrants(session, ladder.id)
        labels = {e.version_id: e.version.label for e in entries}
        by_label = {e.version.label: e for e in entries}
        if sum(not (e.paused or e.retired) for e in entries) < 2:
            raise StoreError(f"ladder {name!r}: a final evaluation needs two active bots")
        seats = RuleSet.from_dict(ladder.rules).players
        _, rows = leaderboard(session, name)
    table = [
        Place(
            by_label[r["bot"]].version_id,
            r["bot"],
            float(r["elo"]),
            bool(r["separated_from_next"]),
            r["superiority"],
            not by_label[r["bot"]].paused,
        )
        for r in rows
        if r["rated"] and r["bot"] in by_label
    ]
    unrated = sorted(
        by_label[r["bot"]].version_id
        for r in rows
        if not r["rated"] and r["bot"] in by_label and not by_label[r["bot"]].paused
    )
    found = [(d.upper.label, d.lower.label, d.p) for d in doubts(table, phase.k)]
    groups = choose_groups(table, unrated, phase.k, seats)
    stop = (
        "separated"
        if not found and not unrated
        else "budget"
        if played >= phase.budget
        else "unplayable"
        if not groups
        else None
    )
    with Session(engine) as session, session.begin():
        fresh = session.scalar(select(Ladder).where(Ladder.name == name).with_for_update())
        if (
            fresh is None
            or final_state(fresh.settings) != (phase, None)
            or sorted(_final_matches(session, fresh.id)) != seen
        ):
            return FinalStep(phase, played, labels=labels, doubts=found)  # decide again
        ladder = fresh
        if stop is not None:
            marker = FinalMarker(
                _now(),
                phase.k,
                phase.budget,
                played,
                not found,
                stop,
                tuple(p.label for p in table[: phase.k]),
            )
            settings = {k: v for k, v in ladder.settings.items() if k != PHASE}
            ladder.settings = {**settings, MARKER: marker.to_dict()}
            return FinalStep(phase, played, labels=labels, doubts=found, marker=marker)
        batch = batch_of(groups, max(BATCH, jobs), phase.budget - played)
        _plan(session, ladder, batch)
        return FinalStep(phase, played, batch, labels, found)


def _plan(session: Session, ladder: Ladder, groups: list[list[int]]) -> None:
    """Add one final match per group, with fresh deals (ids of the match's own key) and
    the group's circular orders in turn from one batch to the next."""
    deal_key(ladder)
    numbers = [n for n, _ in _final_matches(session, ladder.id)]
    first = max(numbers, default=0) + 1
    for i, group in enumerate(groups):
        key = f"{FINAL_KEY}{first + i:06d}"
        seats = seating(group, first // max(1, len(groups)))
        seeds = [f"{key}/{d}" for d in range(ladder.settings["deals"])]
        match = Match(ladder_id=ladder.id, key=key, seats=seats, deal_seeds=seeds)
        session.add(match)
        session.flush()
        session.add_all(
            MatchSeat(match_id=match.id, seat=s, version_id=v) for s, v in enumerate(seats)
        )


Play = Callable[[], Awaitable[Any]]
"""Plays the phase's pending matches (``run_pending`` with the final key prefix)."""


async def play_step(engine: Engine, name: str, jobs: int, play: Play) -> FinalStep:
    """Play what the phase has pending, then one :func:`step` (in a thread: a refit of a
    big ladder takes a while, and the caller's event loop has other work)."""
    import asyncio

    await play()
    return await asyncio.to_thread(step, engine, name, jobs)


@dataclass(frozen=True)
class FinalView:
    """What pages show of a ladder's final evaluation."""

    phase: FinalPhase | None
    marker: FinalMarker | None
    played: int
    """The phase under way's finished matches (0 when none is under way)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON API's ``final`` (the marker, or null) and ``final_phase`` (the phase
        under way with ``played``, or null)."""
        phase = self.phase.to_dict() if self.phase else None
        if phase is not None:
            phase = {k: v for k, v in phase.items() if k != "base"} | {"played": self.played}
        return {"final": self.marker.to_dict() if self.marker else None, "final_phase": phase}


def view(engine: Engine, name: str) -> FinalView:
    """Ladder ``name``'s final evaluation as pages show it."""
    with Session(engine) as session:
        ladder = _ladder(session, name)
        phase, marker = final_state(ladder.settings)
        played = 0
        if phase is not None:
            played = sum(
                s == "done" for n, s in _final_matches(session, ladder.id) if n > phase.base
            )
    return FinalView(phase, marker, played)


async def play_final_round(
    engine: Engine,
    name: str,
    jobs: int,
    on_done: Callable[[int, int, MatchResult], None] | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> bool | None:
    """One round of the final phase for a player that also plays regular rounds (the
    served contest's): ``None`` when no final evaluation is asked for and the ladder is not
    final (regular play goes on); ``False`` when the ladder is final (nothing to play);
    ``True`` after playing the phase's pending matches and taking its next step."""
    import asyncio

    from .running import run_pending

    phase, marker = final_state(await asyncio.to_thread(settings_of, engine, name))
    if marker is not None:
        return False
    if phase is None:
        return None

    def play() -> Awaitable[int]:
        return run_pending(engine, name, jobs, on_done, executor, ray_address, FINAL_KEY)

    await play_step(engine, name, jobs, play)
    return True
