"""Planning a ladder: which matches it plays, and from which deals.

A ladder is planned round by round (:func:`plan`).  A round seats every active entrant:
with few entrants (C(n, 4) <= 70, up to 8 bots) it is every group of four once, as it
always was; with more, a cover of the field that :mod:`.schedule` chooses from the
standings (how often each entrant played, its rating and its doubt, who met whom).  The
next round is planned only when the last one's matches have all finished, so it learns
from them; a new entrant gets placement matches at once.  Each match is ``deals`` deal
seeds derived from the ladder's secret key and the match's key, every deal played in every
seat rotation.  The rounds seat a group's entrants in each of their circular orders in turn
(:func:`seating`): who plays after whom matters in Big Two — in one order measured, the
expert sample bot out-scored the heuristic by 6 points a hand, in another the heuristic
the expert by 3 — and rotating the hands does not move the bots.  Planning is
deterministic (a function of the database) and stored in the caller's one transaction, so
a killed ladder resumes with the matches it had planned.  Playing them is
:mod:`.running`'s.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import math
import random
import secrets
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from . import schedule
from .field import (
    MAX_ALL_GROUPS,
    PLACEMENT,
    Ratings,
    RatingSource,
    field_state,
    is_small,
    planning_ratings,
)
from .store import Ladder, Match, MatchSeat


def groups_for(ids: list[int], seats: int = 4, rng: random.Random | None = None) -> list[list[int]]:
    """Groups of ``seats`` entrants: all of them when few, else a sample in which every pair
    meets about equally often.  With fewer entrants than seats, entrants repeat in
    rotation.  (What ladders played before rounds; a round is :mod:`.schedule`'s now, and
    every group of a small field still.)"""
    ids = sorted(ids)
    if len(ids) < 2:
        raise ValueError("a ladder needs at least two distinct bots")
    if len(ids) <= seats:
        return [[ids[i % len(ids)] for i in range(seats)]]
    if math.comb(len(ids), seats) <= MAX_ALL_GROUPS:
        return [list(c) for c in itertools.combinations(ids, seats)]
    rng = rng or random.Random(0)
    meets = {p: 0 for p in itertools.combinations(ids, 2)}
    target = MAX_ALL_GROUPS
    chosen: list[list[int]] = []
    for _ in range(target):  # greedy: the group whose pairs have met least
        # candidates drawn at random, never the list of every group (200 bots have 64
        # million groups of four)
        sample = [sorted(rng.sample(ids, seats)) for _ in range(200)]
        best = min(sample, key=lambda g: sum(meets[p] for p in itertools.combinations(g, 2)))
        chosen.append(best)
        for p in itertools.combinations(best, 2):
            meets[p] += 1
    return chosen


def deal_key(ladder: Ladder) -> str:
    """The ladder's secret deal key (made when first needed, kept in the ladder's settings in
    the database, which no sandbox can read)."""
    key = ladder.settings.get("deal_key")
    if not key:
        key = secrets.token_hex(32)
        ladder.settings = {**ladder.settings, "deal_key": key}  # a new dict: JSON is saved
    return key


def deal_seed(key: str, deal_id: str) -> str:
    """The seed a planned deal is dealt from: HMAC-SHA256 of its public id under the
    ladder's secret key.  The id is public (it is made of the group and the round), so a
    seed derived from it alone would let a bot try candidate seeds against its own 13 cards
    and learn all four hands; keyed, the deal is no function of anything a bot can learn."""
    return hmac.new(bytes.fromhex(key), deal_id.encode(), hashlib.sha256).hexdigest()


def seating(group: list[int], round_no: int) -> list[int]:
    """The entrants of ``group`` in seat order for round ``round_no``: the first stays in
    seat 0 and the others take, round by round, each of their distinct orders — so over
    every (n − 1)! rounds four entrants each play right after each other equally often.
    Two entrants alternate (A B A B) every round: each already plays after the other as
    often as the other after it."""
    if len(set(group)) <= 2:
        return list(group)
    first, rest = group[0], group[1:]
    orders = list(dict.fromkeys(itertools.permutations(rest)))
    return [first, *orders[round_no % len(orders)]]


def _canonical(group: Sequence[int]) -> list[int]:
    """A group as this module seats and keys it: its entrants sorted, or — with fewer
    distinct entrants than seats — repeated in rotation (``groups_for``'s form)."""
    ids = sorted(set(group))
    if len(ids) < len(group):
        return [ids[i % len(ids)] for i in range(len(group))]
    return ids


def _key(parts: list) -> str:  # type: ignore[type-arg]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def _add(session: Session, ladder: Ladder, key: str, group: list[int], order: int, r: int) -> int:
    """Store one pending match of ``group`` seated in circular order ``order``
    (:func:`seating`), in round ``r``; 0 when its key is taken already (never twice)."""
    if session.scalar(select(Match.id).where(Match.ladder_id == ladder.id, Match.key == key)):
        return 0
    seeds = [f"{key}/{i}" for i in range(ladder.settings["deals"])]
    seats = seating(group, order)
    match = Match(ladder_id=ladder.id, key=key, seats=seats, deal_seeds=seeds, round=r)
    session.add(match)
    session.flush()
    session.add_all(MatchSeat(match_id=match.id, seat=i, version_id=v) for i, v in enumerate(seats))
    return 1


SMALL_FIELD_AHEAD = 500
"""How many matches of a small field's rounds are planned at once: the next rounds, up to
about this many matches (whole rounds), then the rest as those are played.  All at once,
`ladder run --rounds 100000` on four bots stored 100,000 matches before its first one
played (minutes of silence); the matches and their keys are the same either way."""


def plan(
    session: Session, ladder: Ladder, rounds: int, ratings: RatingSource = planning_ratings
) -> int:
    """Plan what the ladder plays next, up to ``rounds`` rounds in all; returns how many
    matches were added.  Each deal is stored by its public id; its seed is keyed
    (``deal_seed``) when the match is played.

    - While a round has matches not finished, no round is planned: they are played first
      (a killed ladder resumes with them; nothing is planned twice).
    - Then the next round, from :func:`~arena.ladder.schedule.plan_round` and the field's
      standings (``ratings``: the current fit, read only for a large field).  A small
      field's round is every group, whatever the standings, so its next rounds are
      planned together, up to about ``SMALL_FIELD_AHEAD`` matches: the rounds of one
      table are then played as one batch (``running.batches``).
    - An entrant seated in nothing yet (a new bot or version) that no round planned now
      seats gets :func:`~arena.ladder.schedule.placement_groups` at once, in the current
      round (it joined mid-round, or the ladder has played its rounds).

    Keys never collide with older ones: a small field's keep the form they always had
    (``[group, round]``, so its deals are the ones they always were), a large field's
    name the round and the group's place in it, a placement's begin ``place-``."""
    key = deal_key(ladder)
    state = field_state(session, ladder)
    if len(state.active) < 2:
        raise ValueError("a ladder needs at least two distinct bots")
    small = is_small(len(state.active))
    seed = deal_seed(key, "schedule")  # the ladder's own: a bot cannot foresee its groups
    known: list[Ratings] = []

    def current() -> Ratings:
        if not known:
            known.append(ratings(session, ladder))
        return known[0]

    added = 0
    next_round = state.last_round + 1
    new_round = state.open_matches == 0 and next_round < rounds
    if state.last_round >= 0 and not new_round and state.newcomers():
        standings = state.standings(current(), state.last_round)
        by = {s.entrant: s for s in standings}
        for e in state.newcomers():
            groups = schedule.placement_groups(by[e], standings, seed=seed)
            for i, g in enumerate(groups):
                group = _canonical(g)
                k = PLACEMENT + _key(["placement", state.last_round, e, i, group])[:26]
                added += _add(session, ladder, k, group, state.last_round + i, state.last_round)
    while new_round and next_round < rounds:
        made = schedule.plan_round(
            state.standings({} if small else current(), next_round),
            round_no=next_round,
            seed=seed,
            met=state.met,
        )
        for i, g in enumerate(made.groups):
            group = _canonical(g)
            k = _key([group, next_round] if small else ["round", next_round, i, group])[:32]
            added += _add(session, ladder, k, group, next_round, next_round)
        if not small:
            break  # the next round is planned from this one's results
        next_round += 1
        if added >= SMALL_FIELD_AHEAD:
            break  # the rest when these are played (`ladder run` plans again then)
    return added
