"""Batch maximum-likelihood ratings with honest uncertainty.

- :func:`fit_plackett_luce`: each *block* (one deal played in every seat rotation, its
  points summed per bot) gives an order of its bots; the Plackett–Luce likelihood of all the
  orders is maximised (scipy) for one log-strength per bot.  Rating a whole rotation block
  as one unit keeps the deal's luck out, and keeps the correlated games of a block from
  being counted as independent evidence.
- :func:`fit_bradley_terry`: the same from pairwise outcomes (the cross-check).

Ratings are shown on the Elo scale (400 / ln 10 per unit of log-strength), anchored so that
the field's mean (or a named anchor bot) is 0.  95% intervals come from the observed Fisher
information (the inverse Hessian of the negative log-likelihood under the anchoring
constraint); ``superiority[a][b]`` is P(a stronger than b) from the same normal
approximation, as BayesElo reports it.

**Separation.**  A bot that has finished behind (or ahead of) some part of the field in
every block it shared with it — a bot that crashes every match, or a newcomer after one
unlucky block — has no finite maximum-likelihood rating: only the tiny ridge keeps it
finite, and its interval is huge, as it should be.  The field mean used as anchor is
therefore taken over the *main field* only (the largest set of bots in which everyone has
finished ahead of everyone else through some chain of blocks: the largest strongly
connected component of the "finished ahead of" graph), so that one such bot does not widen
everybody's interval; ``Rating.in_field`` is False for the others.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.stats import norm

ELO_PER_UNIT = 400 / math.log(10)
Z95 = 1.959963984540054
PRIOR = 1e-3
"""A tiny ridge on the log-strengths: keeps a bot that never lost (or never won) finite."""


@dataclass(frozen=True)
class Rating:
    bot: Hashable
    elo: float
    low: float
    high: float
    stderr: float
    in_field: bool = True
    """False: outside the main field (see the module's note on separation); its rating
    rests on the ridge, not on the data, and its interval is accordingly wide."""


@dataclass(frozen=True)
class Fit:
    ratings: list[Rating]
    """In rank order, strongest first."""
    superiority: dict[Hashable, dict[Hashable, float]]
    """P(row bot stronger than column bot)."""

    def by_bot(self) -> dict[Hashable, Rating]:
        return {r.bot: r for r in self.ratings}

    def separated(self, a: Hashable, b: Hashable) -> bool:
        """Whether the 95% intervals of a and b do not overlap."""
        ra, rb = self.by_bot()[a], self.by_bot()[b]
        return ra.low > rb.high or rb.low > ra.high


def _pl_negloglik(theta: np.ndarray, orders: dict[int, np.ndarray]) -> tuple[float, np.ndarray]:
    """Negative log-likelihood of the orders (grouped by length: one array of shape
    blocks × length each, best first) and its gradient; vectorised over blocks."""
    nll = PRIOR * float(theta @ theta) / 2
    grad = PRIOR * theta.copy()
    for length, order in orders.items():
        s = theta[order]
        for k in range(length - 1):
            tail = s[:, k:]
            m = tail.max(axis=1, keepdims=True)
            w = np.exp(tail - m)
            z = w.sum(axis=1, keepdims=True)
            nll -= float(np.sum(s[:, k] - (m[:, 0] + np.log(z[:, 0]))))
            np.add.at(grad, order[:, k], -1.0)
            np.add.at(grad, order[:, k:], w / z)
    return nll, grad


def _hessian(fun, theta: np.ndarray, eps: float = 1e-4) -> np.ndarray:
    """Numerical Hessian from the analytic gradient (central differences)."""
    n = len(theta)
    h = np.zeros((n, n))
    for i in range(n):
        step = np.zeros(n)
        step[i] = eps
        h[i] = (fun(theta + step)[1] - fun(theta - step)[1]) / (2 * eps)
    return (h + h.T) / 2


def main_field(n: int, ahead: list[tuple[int, int]]) -> np.ndarray:
    """Mask of the bots in the largest strongly connected component of the directed graph
    with an edge a → b whenever a finished ahead of b (or level with b) in some block."""
    if not ahead:
        return np.ones(n, dtype=bool)
    rows, cols = zip(*ahead, strict=True)
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    _, labels = connected_components(graph, directed=True, connection="strong")
    counts = np.bincount(labels)
    return labels == int(np.argmax(counts))


def _ahead_edges(orders: list[tuple[list[int], list[float]]]) -> list[tuple[int, int]]:
    edges = set()
    for order, values in orders:
        for i, a in enumerate(order):
            for j in range(i + 1, len(order)):
                edges.add((a, order[j]))
                if values[i] == values[j]:
                    edges.add((order[j], a))
    return list(edges)


def _finish(
    bots: list[Hashable],
    theta: np.ndarray,
    hess: np.ndarray,
    anchor: Hashable | None,
    field: np.ndarray | None = None,
) -> Fit:
    n = len(bots)
    field = np.ones(n, dtype=bool) if field is None else field
    # anchoring is a linear constraint c·theta = 0; the covariance under it is the inverse
    # Hessian projected on the constraint's null space
    c = np.zeros(n)
    if anchor is None:
        c[field] = 1 / int(field.sum())
    else:
        c[bots.index(anchor)] = 1
    theta = theta - (c @ theta) / (c @ np.ones(n))
    basis = np.linalg.svd(c.reshape(1, -1))[2][1:].T  # n × (n−1), orthogonal to c
    reduced = basis.T @ hess @ basis
    cov = basis @ np.linalg.pinv(reduced) @ basis.T
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    ratings = [
        Rating(
            bot,
            ELO_PER_UNIT * theta[i],
            ELO_PER_UNIT * (theta[i] - Z95 * se[i]),
            ELO_PER_UNIT * (theta[i] + Z95 * se[i]),
            ELO_PER_UNIT * se[i],
            bool(field[i]),
        )
        for i, bot in enumerate(bots)
    ]
    sup: dict[Hashable, dict[Hashable, float]] = {}
    for i, a in enumerate(bots):
        sup[a] = {}
        for j, b in enumerate(bots):
            if i == j:
                continue
            var = cov[i, i] + cov[j, j] - 2 * cov[i, j]
            diff = theta[i] - theta[j]
            sup[a][b] = float(norm.cdf(diff / math.sqrt(var))) if var > 0 else float(diff > 0)
    ratings.sort(key=lambda r: -r.elo)
    return Fit(ratings, sup)


def fit_plackett_luce(
    blocks: Sequence[dict[Hashable, float]],
    anchor: Hashable | None = None,
    intervals: bool = True,
) -> Fit:
    """Ratings from blocks: each block maps bot → its total points in that block (higher is
    better); ties are broken by listing order, which is rare with summed points.
    ``intervals=False`` skips the Hessian (the intervals are then meaningless)."""
    bots = sorted({b for block in blocks for b in block}, key=str)
    if len(bots) < 2:
        raise ValueError("a rating needs at least two distinct bots")
    index = {b: i for i, b in enumerate(bots)}
    grouped: dict[int, list[list[int]]] = {}
    ranked: list[tuple[list[int], list[float]]] = []
    for block in blocks:
        if len(block) >= 2:
            names = sorted(block, key=lambda b: -block[b])
            order = [index[b] for b in names]
            grouped.setdefault(len(order), []).append(order)
            ranked.append((order, [block[b] for b in names]))
    orders = {n: np.array(rows, dtype=np.intp) for n, rows in grouped.items()}
    fun = lambda th: _pl_negloglik(th, orders)  # noqa: E731
    res = minimize(fun, np.zeros(len(bots)), jac=True, method="L-BFGS-B")
    hess = _hessian(fun, res.x) if intervals else np.eye(len(bots))
    field = main_field(len(bots), _ahead_edges(ranked)) if intervals else None
    return _finish(bots, res.x, hess, anchor, field)


def fit_bradley_terry(
    outcomes: Sequence[tuple[Hashable, Hashable, float]], anchor: Hashable | None = None
) -> Fit:
    """Ratings from pairwise outcomes ``(a, b, score of a)`` with score 1, 0.5 or 0."""
    bots = sorted({x for a, b, _ in outcomes for x in (a, b)}, key=str)
    if len(bots) < 2:
        raise ValueError("a rating needs at least two distinct bots")
    index = {b: i for i, b in enumerate(bots)}
    ia = np.array([index[a] for a, _, _ in outcomes])
    ib = np.array([index[b] for _, b, _ in outcomes])
    sa = np.array([s for _, _, s in outcomes], dtype=float)

    def fun(theta: np.ndarray) -> tuple[float, np.ndarray]:
        d = theta[ia] - theta[ib]
        p = 1 / (1 + np.exp(-d))
        eps = 1e-12
        nll = -np.sum(sa * np.log(p + eps) + (1 - sa) * np.log(1 - p + eps))
        nll += PRIOR * float(theta @ theta) / 2
        g = sa - p
        grad = PRIOR * theta.copy()
        np.add.at(grad, ia, -g)
        np.add.at(grad, ib, g)
        return float(nll), grad

    res = minimize(fun, np.zeros(len(bots)), jac=True, method="L-BFGS-B")
    edges = [(index[a], index[b]) for a, b, x in outcomes if x >= 0.5]
    edges += [(index[b], index[a]) for a, b, x in outcomes if x <= 0.5]
    return _finish(bots, res.x, _hessian(fun, res.x), anchor, main_field(len(bots), edges))


def pairwise_from_blocks(
    blocks: Sequence[dict[Hashable, float]],
) -> list[tuple[Hashable, Hashable, float]]:
    """Every pair of distinct bots in every block, as a Bradley–Terry outcome."""
    out = []
    for block in blocks:
        names = list(block)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                if a == b:
                    continue
                s = 1.0 if block[a] > block[b] else 0.0 if block[a] < block[b] else 0.5
                out.append((a, b, s))
    return out
