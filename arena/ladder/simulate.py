"""Synthetic bots of known strength, for testing and benchmarking the ratings.

A hand's performance of a bot is  skill + deal luck of its seat + play noise.  The noise is
Gumbel and the luck normal, scaled so that together they have the variance of a standard
Gumbel (π²/6): without luck a hand's order is exactly Plackett–Luce, and with it two bots
``d`` Elo apart still beat each other about as often as ``d`` Elo says.  ``luck_share`` is
the part of that variance that comes from the deal; under duplicate play a deal's luck is
shared by its seat rotations, so it cancels.  Skills are given in Elo."""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Sequence

ELO_PER_UNIT = 400 / math.log(10)


def _gumbel(rng: random.Random) -> float:
    return -math.log(-math.log(rng.random() or 1e-300))


GUMBEL_VAR = math.pi**2 / 6


def play_blocks(
    elos: dict[Hashable, float],
    games: int,
    rng: random.Random,
    duplicate: bool = True,
    luck_share: float = 0.5,
    seats: int = 4,
) -> list[dict[Hashable, float]]:
    """``games`` hands among groups of ``seats`` bots.  With ``duplicate`` every deal is
    played in all ``seats`` cyclic rotations and returned as one block (totals of the
    negated finishing positions); otherwise every hand is its own block with fresh luck."""
    if not 0 <= luck_share < 1:
        raise ValueError("luck_share must be in [0, 1)")
    luck_sd = math.sqrt(luck_share * GUMBEL_VAR)
    noise = math.sqrt(1 - luck_share)
    names = list(elos)
    blocks = []
    per_block = seats if duplicate else 1
    for _ in range(max(1, games // per_block)):
        group = rng.sample(names, seats)
        luck = [rng.gauss(0, luck_sd) for _ in range(seats)]
        totals = {b: 0.0 for b in group}
        for rot in range(per_block):
            perf = {
                b: elos[b] / ELO_PER_UNIT + luck[(s + rot) % seats] + noise * _gumbel(rng)
                for s, b in enumerate(group)
            }
            for place, b in enumerate(sorted(perf, key=lambda b: -perf[b])):
                totals[b] -= place
        blocks.append(totals)
    return blocks


def exact_order(ranked: Sequence[Hashable], elos: dict[Hashable, float]) -> bool:
    return list(ranked) == sorted(elos, key=lambda b: -elos[b])
