"""Where a success rate crosses a target, from pass/fail outcomes at several sample sizes:
a logistic curve in log(size), fitted by maximum likelihood to every outcome, is steadier
than "the first size on the grid whose rate reached the target"."""

from __future__ import annotations

import math

import numpy as np


def crossing(points: list[tuple[int, bool]], target: float) -> float | None:
    """The size at which the fitted curve reaches ``target``: the smallest size when every
    outcome passed, None when no size tried reached it (never extrapolated)."""
    sizes = sorted({size for size, _ in points})
    rate = {n: np.mean([ok for size, ok in points if size == n]) for n in sizes}
    if all(ok for _, ok in points):
        return float(sizes[0])
    if max(rate.values()) < target:
        return None
    x = np.array([math.log(size) for size, _ in points])
    y = np.array([float(ok) for _, ok in points])
    design = np.column_stack([np.ones_like(x), x - x.mean()])
    beta = np.zeros(2)
    for _ in range(50):  # Newton steps on the logistic log-likelihood (tiny ridge: finite)
        p = 1 / (1 + np.exp(-(design @ beta)))
        grad = design.T @ (y - p) - 1e-6 * beta
        hess = (design * (p * (1 - p))[:, None]).T @ design + 1e-6 * np.eye(2)
        step = np.linalg.solve(hess, grad)
        beta += step
        if np.abs(step).max() < 1e-9:
            break
    a, b = beta
    if b <= 0:
        return None
    at = math.exp(x.mean() + (math.log(target / (1 - target)) - a) / b)
    return min(max(at, float(sizes[0])), float(sizes[-1]))
