"""Where a success rate crosses a target, from pass/fail outcomes at several sample sizes:
a logistic curve in log(size), fitted by maximum likelihood to every outcome, is steadier
than "the first size on the grid whose rate reached the target"."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize


def crossing(points: list[tuple[int, bool]], target: float) -> float | None:
    """The size at which the fitted curve reaches ``target``; the smallest size when every
    outcome passed, None when the curve does not rise."""
    x = np.array([math.log(size) for size, _ in points])
    y = np.array([float(ok) for _, ok in points])
    if y.all():
        return float(min(size for size, _ in points))
    xm = x.mean()

    def nll(ab: np.ndarray) -> float:
        z = ab[0] + ab[1] * (x - xm)
        return float(np.sum(np.logaddexp(0, z) - y * z))

    a, b = minimize(nll, np.array([0.0, 1.0]), method="Nelder-Mead").x
    if b <= 0:
        return None
    return math.exp(xm + (math.log(target / (1 - target)) - a) / b)
