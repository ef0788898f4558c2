"""Each finished match's *digest*: its evidence exactly as the ratings read it, small and
numeric, written with the match (``store.save_match``) so that a refit reads digests, never
the result JSON of every match.

A match's deal blocks (``leaderboard.match_blocks``: each deal's game and card-set orders)
are kept in the Plackett–Luce likelihood's own terms, over the match's distinct entrants
(its *group*, ascending version ids, at most ``MAX_GROUP``; a subset of them is a bitmask).
An order ``a > b > c > d`` is the choices "a from {a,b,c,d}", "b from {b,c,d}", "c from
{c,d}"; a tied order is every arrangement of its ties, each weighted ``1/arrangements``
(``ratings._tie_orders``).  Per block:

- ``sets[mask]``: the summed weight of the choices made from the subset ``mask``;
- ``won[slot]``: the summed weight of the choices the entrant in ``slot`` won;
- ``ahead``: bit ``8a + b`` when slot ``a`` finished ahead of (or level with) slot ``b`` in
  some order (the "main field" graph of ``ratings.main_field``);
- ``totals``: each entrant's points over the block's games (OpenSkill's one order a block,
  ``leaderboard.rated_totals``).

The weights are multiples of ``1/g!`` (an order's arrangements divide ``g!``), so they are
stored exactly as integers times ``g!``.  Per entrant of the match: its points, hands,
first places, faults and forfeits (the leaderboard's columns).  The likelihood, its
gradient, its Hessian and each block's score (the intervals' sandwich) are functions of
these alone: :mod:`.fitting` computes them summed per group, once per distinct group.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..referee.results import MatchResult
from .leaderboard import FORFEITED, rated_totals, result_blocks
from .ratings import _tie_orders

FORMAT = 1
MAX_GROUP = 8
"""Entrants a match may hold (bits ``8a + b`` of ``ahead`` need a, b < 8)."""
HEADER = struct.Struct("<BBH")  # format, entrants g, blocks D


def _layout(g: int, blocks: int) -> np.dtype:
    """One digest's bytes as a packed numpy record (so many digests of one shape decode
    as one array)."""
    return np.dtype(
        [
            ("header", "u1", (HEADER.size,)),
            ("group", "<i8", (g,)),
            ("points", "<f8", (g,)),
            ("counts", "<i4", (g, 4)),  # hands, first places, faults, forfeits
            ("sets", "<i4", (blocks, 1 << g)),
            ("won", "<i4", (blocks, g)),
            ("ahead", "<i8", (blocks,)),
            ("totals", "<f8", (blocks, g)),
        ]
    )


def match_digest(seats: Sequence[int], result: MatchResult, rotations: int) -> bytes:
    """The digest of a finished match (its seats' version ids, its stored result)."""
    group = sorted(set(int(v) for v in seats))
    g = len(group)
    if not 1 <= g <= MAX_GROUP:
        raise ValueError(f"a digest holds 1 to {MAX_GROUP} entrants, not {g}")
    slot = {v: i for i, v in enumerate(group)}
    scale = math.factorial(g)
    blocks = result_blocks([int(v) for v in seats], result, rotations)
    record = np.zeros((), dtype=_layout(g, len(blocks)))
    record["header"] = np.frombuffer(HEADER.pack(FORMAT, g, len(blocks)), dtype="u1")
    record["group"] = group
    counts = record["counts"]
    for hand in result.hands:
        for seat, vid in enumerate(seats):
            record["points"][slot[int(vid)]] += hand.scores[seat]
            counts[slot[int(vid)], 0] += 1
    for held in result.seats:
        at = slot[int(seats[held.seat])]
        counts[at, 1] += held.place == 1 and not held.forfeit
        counts[at, 2] += len(held.faults)
        counts[at, 3] += bool(held.forfeit)
    for b, orders in enumerate(blocks):
        sets, won = record["sets"][b], record["won"][b]
        ahead = 0
        for ranking in orders:
            if len(ranking) < 2:
                continue
            arrangements = _tie_orders(ranking)
            weight = scale // len(arrangements)
            for names in arrangements:
                mask = 0
                for k in range(len(names) - 1, -1, -1):
                    mask |= 1 << slot[names[k]]
                    if k < len(names) - 1:
                        sets[mask] += weight
                        won[slot[names[k]]] += weight
            names = arrangements[0]
            for i, a in enumerate(names):
                for j in range(i + 1, len(names)):
                    ahead |= 1 << (8 * slot[a] + slot[names[j]])
                    if ranking[a] == ranking[names[j]]:
                        ahead |= 1 << (8 * slot[names[j]] + slot[a])
        record["ahead"][b] = ahead
        total = rated_totals([orders], rotations)[0]
        for vid, points in total.items():
            record["totals"][b, slot[vid]] = points
    return record.tobytes()


@dataclass(frozen=True)
class Digests:
    """Many matches' digests decoded into flat arrays, matches in the order given, blocks in
    match order.  Slots beyond a match's entrants hold version id -1 and zeros."""

    width: int
    """Slots per match: the largest group among them."""
    ids: np.ndarray
    """(M,) each digest's id (its row's, in ``match_digests``)."""
    group: np.ndarray
    """(M, width) the entrants of each match."""
    points: np.ndarray
    """(M, width) their points."""
    counts: np.ndarray
    """(M, width, 4) their hands, first places, faults and forfeits."""
    block_match: np.ndarray
    """(B,) the match (row of the above) each block is of."""
    sets: np.ndarray
    """(B, 2**width) the weight of the choices made from each subset (a float)."""
    won: np.ndarray
    """(B, width) the weight of the choices each slot won."""
    ahead: np.ndarray
    """(B,) bits 8a + b: slot a ahead of (or level with) slot b."""
    totals: np.ndarray
    """(B, width) points over the block's games, for OpenSkill."""

    @property
    def blocks(self) -> int:
        return len(self.block_match)


def empty(width: int = 1) -> Digests:
    return Digests(
        width,
        np.zeros(0, np.int64),
        np.zeros((0, width), np.int64),
        np.zeros((0, width)),
        np.zeros((0, width, 4), np.int64),
        np.zeros(0, np.int64),
        np.zeros((0, 1 << width)),
        np.zeros((0, width)),
        np.zeros(0, np.int64),
        np.zeros((0, width)),
    )


def decode(rows: Sequence[tuple[int, bytes]]) -> Digests:
    """``(id, data)`` rows as one :class:`Digests`, in the order given: digests of one
    shape (entrants, blocks) are decoded together, as one numpy array."""
    if not rows:
        return empty()
    shapes: dict[tuple[int, int], list[int]] = {}
    for i, (_, raw) in enumerate(rows):
        fmt, g, blocks = HEADER.unpack_from(raw)
        if fmt != FORMAT:
            raise ValueError(f"digest format {fmt} is not {FORMAT}")
        shapes.setdefault((g, blocks), []).append(i)
    width = max(g for g, _ in shapes)
    m = len(rows)
    group = np.full((m, width), -1, np.int64)
    points = np.zeros((m, width))
    counts = np.zeros((m, width, 4), np.int64)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    for (g, blocks), where in shapes.items():
        at = np.array(where, dtype=np.int64)
        data: np.ndarray = np.frombuffer(
            b"".join(rows[i][1] for i in where), dtype=_layout(g, blocks)
        )
        group[at, :g] = data["group"]
        points[at, :g] = data["points"]
        counts[at, :g] = data["counts"]
        if blocks:
            scale = float(math.factorial(g))
            sets = np.zeros((len(at), blocks, 1 << width))
            sets[:, :, : 1 << g] = data["sets"] / scale  # a mask of g slots is one of width
            won = np.zeros((len(at), blocks, width))
            won[:, :, :g] = data["won"] / scale
            totals = np.zeros((len(at), blocks, width))
            totals[:, :, :g] = data["totals"]
            parts.append(
                (
                    np.repeat(at, blocks),
                    np.repeat(np.arange(blocks)[None, :], len(at), axis=0).ravel(),
                    sets.reshape(-1, 1 << width),
                    won.reshape(-1, width),
                    data["ahead"].reshape(-1).astype(np.int64),
                    totals.reshape(-1, width),
                )
            )
    if parts:
        match_of = np.concatenate([p[0] for p in parts])
        order = np.lexsort((np.concatenate([p[1] for p in parts]), match_of))
        block_match = match_of[order]
        sets = np.concatenate([p[2] for p in parts])[order]
        won = np.concatenate([p[3] for p in parts])[order]
        ahead = np.concatenate([p[4] for p in parts])[order]
        totals = np.concatenate([p[5] for p in parts])[order]
    else:
        none = empty(width)
        block_match, sets, won, ahead, totals = (
            none.block_match,
            none.sets,
            none.won,
            none.ahead,
            none.totals,
        )
    ids = np.array([i for i, _ in rows], dtype=np.int64)
    return Digests(width, ids, group, points, counts, block_match, sets, won, ahead, totals)


def widen(d: Digests, width: int) -> Digests:
    """``d`` with ``width`` slots per match (padding slots: id -1, zeros)."""
    if width == d.width:
        return d
    pad = width - d.width
    sets = np.zeros((d.blocks, 1 << width))
    sets[:, : 1 << d.width] = d.sets
    return Digests(
        width,
        d.ids,
        np.pad(d.group, ((0, 0), (0, pad)), constant_values=-1),
        np.pad(d.points, ((0, 0), (0, pad))),
        np.pad(d.counts, ((0, 0), (0, pad), (0, 0))),
        d.block_match,
        sets,
        np.pad(d.won, ((0, 0), (0, pad))),
        d.ahead,
        np.pad(d.totals, ((0, 0), (0, pad))),
    )


def join(a: Digests, b: Digests) -> Digests:
    """``a``'s matches then ``b``'s."""
    if not len(b.ids):
        return a
    if not len(a.ids):
        return b
    width = max(a.width, b.width)
    a, b = widen(a, width), widen(b, width)
    return Digests(
        width,
        np.concatenate([a.ids, b.ids]),
        np.concatenate([a.group, b.group]),
        np.concatenate([a.points, b.points]),
        np.concatenate([a.counts, b.counts]),
        np.concatenate([a.block_match, b.block_match + len(a.ids)]),
        np.concatenate([a.sets, b.sets]),
        np.concatenate([a.won, b.won]),
        np.concatenate([a.ahead, b.ahead]),
        np.concatenate([a.totals, b.totals]),
    )


def block_totals(d: Digests) -> list[dict[int, float]]:
    """Each block's points per entrant (``leaderboard.rated_totals``), in order."""
    out = []
    for b in range(d.blocks):
        row = d.group[d.block_match[b]]
        out.append({int(v): float(t) for v, t in zip(row, d.totals[b], strict=True) if v >= 0})
    return out


__all__ = ["FORFEITED", "Digests", "decode", "join", "match_digest"]
