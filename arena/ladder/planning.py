"""Planning a ladder: which matches it plays, and from which deals.

Planning is incremental and deterministic: every group of four entrants (all groups when
there are few, a balanced sample when C(n, 4) is large) gets ``rounds`` matches, each of
``deals`` deal seeds derived from the ladder, the group and the round, every deal played in
every seat rotation.  The rounds of a group seat its entrants in each of their circular
orders in turn (:func:`seating`): who plays after whom matters in Big Two — in one order
measured, the expert sample bot out-scored the heuristic by 6 points a hand, in another
the heuristic the expert by 3 — and rotating the hands does not move the bots.  A match
has a key; planning again adds only the keys that are missing,
so new or updated bots join a running ladder and get matches against the field.  Playing
them is :mod:`.running`'s.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import math
import random
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from .store import Entry, Ladder, Match, MatchSeat

MAX_ALL_GROUPS = 70  # C(8, 4): beyond, a balanced sample


def groups_for(ids: list[int], seats: int = 4, rng: random.Random | None = None) -> list[list[int]]:
    """Groups of ``seats`` entrants: all of them when few, else a sample in which every pair
    meets about equally often.  With fewer entrants than seats, entrants repeat in
    rotation."""
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


def plan(session: Session, ladder: Ladder, rounds: int) -> int:
    """Add the missing matches; returns how many were added.  Each deal is stored by its
    public id; its seed is keyed (``deal_seed``) when the match is played."""
    deal_key(ladder)
    s = ladder.settings
    ids = [
        e.version_id
        for e in session.scalars(select(Entry).where(Entry.ladder_id == ladder.id))
        if not (e.retired or e.paused)  # no new matches (its finished ones keep counting)
    ]
    added = 0
    for group in groups_for(ids):
        for r in range(rounds):
            key = hashlib.sha256(json.dumps([group, r]).encode()).hexdigest()[:32]
            exists = session.scalar(
                select(Match.id).where(Match.ladder_id == ladder.id, Match.key == key)
            )
            if exists:
                continue
            seeds = [f"{key}/{i}" for i in range(s["deals"])]
            seats = seating(group, r)
            match = Match(ladder_id=ladder.id, key=key, seats=seats, deal_seeds=seeds)
            session.add(match)
            session.flush()
            session.add_all(
                MatchSeat(match_id=match.id, seat=i, version_id=v) for i, v in enumerate(seats)
            )
            added += 1
    return added
