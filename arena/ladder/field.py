"""What the round planner is told about a ladder's field, read from its database: each
active entrant's matches so far and current rating, who has met whom, and where the
ladder's rounds stand (the newest planned, whether it is still being played).

The ratings come from one function, :func:`planning_ratings` — the leaderboard's own fit of
the finished matches — so that a faster fit (stored digests, a warm start) is swapped in
at one place.  They are read only when the planner needs them: a small field's round is
every group, whatever the ratings.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from .schedule import Standing
from .store import Entry, Ladder, Match

SEATS = 4
MAX_ALL_GROUPS = 70  # C(8, 4): up to it a round is every group (the planner's contract)

PLACEMENT = "place-"
"""How a placement match's key begins (a newcomer's first matches, planned between rounds'
plans): the planner counts an entrant with placement matches only as new."""

Ratings = dict[int, tuple[float, float]]
"""Entrant → (Elo, its standard error in Elo points)."""

RatingSource = Callable[[Session, Ladder], Ratings]


def planning_ratings(session: Session, ladder: Ladder) -> Ratings:
    """The active entrants' current ratings as the leaderboard fits them
    (:func:`arena.ladder.rated.active_ratings`: every finished match's digest,
    warm-started); empty while fewer than two entrants are rated."""
    from .rated import active_ratings

    rated = active_ratings(session, ladder.name).ratings
    return {int(v): (r.elo, r.stderr) for v, r in rated.items()}


def is_small(entrants: int, seats: int = SEATS) -> bool:
    """Whether a round of this field is every group of ``seats`` once (the planner's
    contract for small fields: it does not depend on the standings)."""
    return math.comb(entrants, seats) <= MAX_ALL_GROUPS


@dataclass(frozen=True)
class FieldState:
    """A ladder's field as the planner sees it."""

    active: list[int]
    """The entrants that get new matches (neither retired nor paused), sorted."""
    last_round: int
    """The newest round planned (-1: none yet)."""
    open_matches: int
    """Matches planned and not finished (pending or running; withdrawn ones wait for their
    bot to come back and do not hold the next round)."""
    matches: Counter[int]
    """Matches each entrant is seated in, finished or planned (withdrawn ones not)."""
    first_round: dict[int, int]
    """The round of each entrant's first match in a round's own plan (placement matches
    not counted)."""
    met: dict[tuple[int, int], int]
    """(a, b), a < b → how many matches they shared."""

    def newcomers(self) -> list[int]:
        """Active entrants seated in no match yet (a new bot, or a new version)."""
        return [e for e in self.active if self.matches[e] == 0]

    def standings(self, ratings: Ratings, round_no: int) -> list[Standing]:
        """What :func:`~arena.ladder.schedule.plan_round` is told of each active entrant
        for round ``round_no``; ``new``: it has played in no round before the last one (it
        joined, or entered a new version, since the last round was planned: it has played
        placement matches at most)."""
        out = []
        for e in self.active:
            elo, stderr = ratings.get(e, (None, None))
            new = self.first_round.get(e, round_no) >= round_no
            out.append(Standing(e, self.matches[e], elo, stderr, new))
        return out


def field_state(session: Session, ladder: Ladder) -> FieldState:
    """Read the ladder's field (one pass over its planned and finished matches)."""
    active = sorted(
        e.version_id
        for e in session.scalars(select(Entry).where(Entry.ladder_id == ladder.id))
        if not (e.retired or e.paused)  # no new matches (its finished ones keep counting)
    )
    last = session.scalar(select(func.max(Match.round)).where(Match.ladder_id == ladder.id))
    matches: Counter[int] = Counter()
    first: dict[int, int] = {}
    met: Counter[tuple[int, int]] = Counter()
    open_ = 0
    for key, seats, status, round_no in session.execute(
        select(Match.key, Match.seats, Match.status, Match.round).where(
            Match.ladder_id == ladder.id, Match.status != "withdrawn"
        )
    ):
        open_ += status != "done"
        who = sorted({int(v) for v in seats})
        r = -1 if round_no is None else int(round_no)
        for v in who:
            matches[v] += 1
            if not key.startswith(PLACEMENT):
                first[v] = min(first.get(v, r), r)
        met.update(itertools.combinations(who, 2))
    return FieldState(
        active=active,
        last_round=-1 if last is None else int(last),
        open_matches=open_,
        matches=matches,
        first_round=first,
        met=dict(met),
    )
