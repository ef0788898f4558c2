"""Synthetic bots of known strength, for testing and benchmarking the ratings.

A bot's *performance* in a hand is  skill + the deal's luck for its seat + play noise, and
its points in that hand are that performance (``score="performance"``: points measure how
well a hand went, as Big Two's card counts do) or only its finishing place
(``score="places"``: the coarsest result a hand can give, a pessimistic bound).

- Luck is normal and is the same for every bot that holds that seat's cards, so under
  duplicate play (a deal in all its seat rotations) it cancels from a block's totals.
- Play noise is Gumbel: without luck a hand's order is then exactly Plackett–Luce.
- ``luck_share`` is the part of a hand's random variance that comes from the deal.  The
  scale is calibrated so that, whatever the share, two bots ``d`` Elo apart beat each other
  in a single hand with the probability Elo gives (1 / (1 + 10^(−d/400)), to first order
  in ``d``) — "17 Elo apart" keeps one meaning across models.

How large is the deal's share in real Big Two?  It depends on how erratic the bots are:
for four copies of the heuristic sample bot that play a random legal move 2%, 5% or 10%
of the time, replaying each of 2,000 hk deals twice gave 0.79, 0.59 and 0.42 (the
covariance of a seat's points between the two replays over their variance).  Contest bots
are mostly deterministic, which is the high end.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Hashable, Sequence

from .duplicate import block_rankings, seat_permutations

ELO_PER_UNIT = 400 / math.log(10)
GUMBEL_VAR = math.pi**2 / 6
SCORES = ("performance", "places")
UNITS = ("rankings", "totals")


def _gumbel(rng: random.Random) -> float:
    return -math.log(-math.log(rng.random() or 1e-300))


@functools.lru_cache(maxsize=64)
def noise_scales(luck_share: float) -> tuple[float, float]:
    """(luck sd, Gumbel scale) for a luck share, such that the density at 0 of the
    difference of two bots' random parts is 1/4 — the slope of the logistic curve that
    Plackett–Luce (and Elo) give a pair of bots at equal strength."""
    if not 0 <= luck_share < 1:
        raise ValueError("luck_share must be in [0, 1)")
    from scipy.integrate import quad
    from scipy.optimize import brentq
    from scipy.stats import logistic, norm

    def slope(var: float) -> float:
        luck_sd = math.sqrt(luck_share * var)
        scale = math.sqrt((1 - luck_share) * var / GUMBEL_VAR)
        if luck_sd == 0:
            return logistic.pdf(0, scale=scale)

        # difference of two luck draws (normal, sd luck_sd·√2) plus that of two Gumbels
        # (logistic with the Gumbel's scale), evaluated at 0
        def dens(x: float) -> float:
            return norm.pdf(x, scale=luck_sd * math.sqrt(2)) * logistic.pdf(x, scale=scale)

        return quad(dens, -math.inf, math.inf)[0]

    var = brentq(lambda v: slope(v) - 0.25, 0.1, 100.0)
    return math.sqrt(luck_share * var), math.sqrt((1 - luck_share) * var / GUMBEL_VAR)


def play_blocks(
    elos: dict[Hashable, float],
    games: int,
    rng: random.Random,
    duplicate: bool = True,
    luck_share: float = 0.75,
    seats: int = 4,
    score: str = "performance",
    unit: str = "rankings",
) -> list:
    """``games`` hands among random groups of ``seats`` bots.  With ``duplicate`` every
    deal is played in all ``seats`` cyclic rotations and is one block: its orders as the
    ladder rates them (``unit="rankings"``: each game's and each card set's, see
    ``block_rankings``) or each bot's points summed over the rotations (``"totals"``).
    Otherwise every hand is its own block, with fresh luck."""
    if score not in SCORES:
        raise ValueError(f"score must be one of {', '.join(SCORES)}")
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}")
    luck_sd, scale = noise_scales(luck_share)
    names = list(elos)
    perms = seat_permutations(seats, seats)
    blocks: list = []
    per_block = seats if duplicate else 1
    for _ in range(max(1, games // per_block)):
        group = rng.sample(names, seats)
        luck = [rng.gauss(0, luck_sd) for _ in range(seats)]
        rows = []
        for rot in range(per_block):
            perf = [
                elos[b] / ELO_PER_UNIT + luck[perms[rot][s]] + scale * _gumbel(rng)
                for s, b in enumerate(group)
            ]
            if score == "places":
                ranks = sorted(range(seats), key=lambda s: -perf[s])
                perf = [-float(ranks.index(s)) for s in range(seats)]
            rows.append(perf)
        if not duplicate:
            blocks.append(dict(zip(group, rows[0], strict=True)))
        elif unit == "rankings":
            blocks.append(block_rankings(group, rows, seats))
        else:
            blocks.append({b: sum(r[s] for r in rows) for s, b in enumerate(group)})
    return blocks


def exact_order(ranked: Sequence[Hashable], elos: dict[Hashable, float]) -> bool:
    return list(ranked) == sorted(elos, key=lambda b: -elos[b])
