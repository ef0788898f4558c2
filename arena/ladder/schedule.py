"""Which groups a ladder round plays (the interface of /work/wt/SCHEDULE_API.md).

PLACEHOLDER, kept minimal on purpose: the planner's module replaces this file (same
interface).  It only covers the field: small fields play every group once a round, large
fields a seeded random cover (every entrant seated once, the last short group filled with
those who played least).  It does not yet choose groups where the ratings are in doubt.

Pure: standard library only, a function of its arguments (``random.Random`` seeded from
``seed`` and the round), never of time, dict order or global state.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MAX_ALL_GROUPS = 70  # C(8, 4), as planning.MAX_ALL_GROUPS: up to it, every group each round


@dataclass(frozen=True)
class Standing:
    """What the planner knows of one active entrant when it plans a round."""

    entrant: int
    matches: int
    elo: float | None = None
    stderr: float | None = None
    new: bool = False


@dataclass(frozen=True)
class RoundPlan:
    round_no: int
    groups: tuple[tuple[int, ...], ...]


def _distinct(standings: Sequence[Standing]) -> list[int]:
    ids = sorted({s.entrant for s in standings})
    if len(ids) < 2:
        raise ValueError("a ladder needs at least two distinct bots")
    return ids


def plan_round(
    standings: Sequence[Standing],
    *,
    round_no: int,
    seed: str,
    seats: int = 4,
    met: Mapping[tuple[int, int], int] | None = None,
) -> RoundPlan:
    """One round: every group when C(n, seats) <= MAX_ALL_GROUPS, else a seeded random
    cover of the field (newcomers and those with fewest matches first into the short
    group's fill)."""
    ids = _distinct(standings)
    if len(ids) <= seats:
        return RoundPlan(round_no, (tuple(ids[i % len(ids)] for i in range(seats)),))
    if math.comb(len(ids), seats) <= MAX_ALL_GROUPS:
        return RoundPlan(round_no, tuple(itertools.combinations(ids, seats)))
    rng = random.Random(f"{seed}/{round_no}")
    order = ids[:]
    rng.shuffle(order)
    groups = [order[i : i + seats] for i in range(0, len(order), seats)]
    short = groups[-1]
    if len(short) < seats:
        played = {s.entrant: s.matches for s in standings}
        fill = sorted((e for e in ids if e not in short), key=lambda e: (played[e], e))
        short.extend(fill[: seats - len(short)])
    return RoundPlan(round_no, tuple(tuple(sorted(g)) for g in groups))


def placement_groups(
    newcomer: Standing,
    field: Sequence[Standing],
    *,
    seed: str,
    seats: int = 4,
    count: int = 2,
) -> tuple[tuple[int, ...], ...]:
    """``count`` groups placing ``newcomer`` at once: it with opponents drawn at random from
    the rest of the field (all of them, repeated in rotation, when the field is small)."""
    others = sorted({s.entrant for s in field} - {newcomer.entrant})
    _distinct([newcomer, *(Standing(e, 0) for e in others)])
    rng = random.Random(f"{seed}/placement/{newcomer.entrant}")
    out = []
    for _ in range(count):
        if len(others) < seats - 1:
            ids = sorted([newcomer.entrant, *others])
            out.append(tuple(ids[i % len(ids)] for i in range(seats)))
        else:
            out.append(tuple(sorted([newcomer.entrant, *rng.sample(others, seats - 1)])))
    return tuple(out)
