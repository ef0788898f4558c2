"""Where a success rate crosses a target, from pass/fail outcomes at several sample sizes.

The rates are first made monotone in the size (pool-adjacent-violators, weighted by the
number of outcomes: more data never hurts, so a dip is noise), then interpolated linearly
in log(size) between the last size below the target and the first one at or above it.
Steadier than "the first size on the grid whose rate reached the target", and it never
extrapolates past the sizes tried."""

from __future__ import annotations

import math


def monotone_rates(points: list[tuple[int, bool]]) -> list[tuple[int, float]]:
    """(size, rate) in increasing size, the rates made non-decreasing (PAVA)."""
    sizes = sorted({size for size, _ in points})
    blocks: list[list[float]] = []  # [passes, count, first index, last index]
    for i, n in enumerate(sizes):
        outcomes = [ok for size, ok in points if size == n]
        blocks.append([float(sum(outcomes)), float(len(outcomes)), i, i])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            last = blocks.pop()
            blocks[-1] = [blocks[-1][0] + last[0], blocks[-1][1] + last[1], blocks[-1][2], last[3]]
    out = []
    for passes, count, first, last in blocks:
        out += [(sizes[i], passes / count) for i in range(int(first), int(last) + 1)]
    return out


def crossing(points: list[tuple[int, bool]], target: float) -> float | None:
    """The size at which the monotone rate reaches ``target``; None when no size tried
    reached it."""
    rates = monotone_rates(points)
    for i, (size, rate) in enumerate(rates):
        if rate >= target:
            if i == 0:
                return float(size)
            below, low = rates[i - 1]
            if rate == low:
                return float(size)
            frac = (target - low) / (rate - low)
            return math.exp(math.log(below) + frac * (math.log(size) - math.log(below)))
    return None
