"""Batch maximum-likelihood ratings with honest uncertainty.

- :func:`fit_plackett_luce`: every *block* (one deal played in every seat rotation) gives
  one or more orders of its bots — see ``arena.ladder.duplicate.block_rankings``: each
  game's order and each set of cards' order — and the Plackett–Luce likelihood of all the
  orders is maximised (scipy) for one log-strength per bot.  Ties are shared out: a tied
  group counts as the average over its orders.  The orders of a block are correlated (the
  same games), so the block, never the single order, is the unit of evidence: the Fisher
  intervals are widened by the dispersion the blocks show (a cluster "sandwich" estimate:
  a block that just repeats one order k times counts once, not k times).
- :func:`fit_bradley_terry`: the same from pairwise outcomes (the cross-check).
- :func:`openskill_ordinals`, :func:`elo_history`: incremental ratings in play order, for
  live feedback and the rating-over-time plot only — never the rank.

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

import itertools
import math
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

# scipy is imported where a fit needs it: it is most of a second of every `arena` command
# that imports this module (the ladder's runner does), and most of them fit nothing

ELO_PER_UNIT = 400 / math.log(10)
Z95 = 1.959963984540054
PRIOR = 1e-3
"""A tiny ridge on the log-strengths: keeps a bot that never lost (or never won) finite."""


BotKey = TypeVar("BotKey", bound=Hashable)
"""What names a bot in the blocks (a version id, a name): its ratings are keyed the same."""


@dataclass(frozen=True)
class Rating(Generic[BotKey]):
    bot: BotKey
    elo: float
    low: float
    high: float
    stderr: float
    in_field: bool = True
    """False: outside the main field (see the module's note on separation); its rating
    rests on the ridge, not on the data, and its interval is accordingly wide."""


@dataclass(frozen=True)
class Fit(Generic[BotKey]):
    ratings: list[Rating[BotKey]]
    """In rank order, strongest first."""
    superiority: dict[BotKey, dict[BotKey, float]]
    """P(row bot stronger than column bot)."""

    def by_bot(self) -> dict[BotKey, Rating[BotKey]]:
        return {r.bot: r for r in self.ratings}

    def separated(self, a: BotKey, b: BotKey) -> bool:
        """Whether one of a and b is stronger than the other with probability at least
        ``SEPARATED_P`` (``superiority``: the ratings' normal approximation, with their
        covariance) — the one criterion the leaderboard's "next" column and its matrix
        share."""
        return separated(max(self.superiority[a][b], self.superiority[b][a]))


SEPARATED_P = 0.975
"""Two bots are *separated* when P(the higher one stronger) ≥ 0.975: the 95% interval of
their Elo difference excludes 0.  Not "their two 95% intervals do not overlap", which
ignores that the ratings are estimated together and asks for P ≈ 0.997 or more, so that a
pair at P = 0.998 was shown as not separated."""


def separated(p: float) -> bool:
    """Whether a probability of superiority (either way round) separates two bots."""
    return max(p, 1 - p) >= SEPARATED_P


Orders = dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]
"""By length: (rows × length bot indices best first, row weights, row's block index)."""


def _choices(s: np.ndarray) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Plackett–Luce's successive choices for rows of strengths ``s`` (best first): for
    each place k, the log of the normaliser over the bots still left and their choice
    probabilities — the one piece of arithmetic the likelihood and the per-block scores
    share."""
    for k in range(s.shape[1] - 1):
        tail = s[:, k:]
        m = tail.max(axis=1, keepdims=True)
        w = np.exp(tail - m)
        z = w.sum(axis=1, keepdims=True)
        yield k, m[:, 0] + np.log(z[:, 0]), w / z


def _pl_negloglik(theta: np.ndarray, orders: Orders) -> tuple[float, np.ndarray]:
    """Weighted negative log-likelihood of the orders and its gradient; vectorised."""
    nll = PRIOR * float(theta @ theta) / 2
    grad = PRIOR * theta.copy()
    for order, weight, _ in orders.values():
        s = theta[order]
        for k, log_z, p in _choices(s):
            nll -= float(np.sum(weight * (s[:, k] - log_z)))
            # bincount sums repeated indices as np.add.at does, many times faster
            grad -= np.bincount(order[:, k], weight, len(theta))
            grad += np.bincount(order[:, k:].ravel(), (weight[:, None] * p).ravel(), len(theta))
    return nll, grad


def _pl_hessian(theta: np.ndarray, orders: Orders, chunk: int = 100_000) -> np.ndarray:
    """The Hessian of :func:`_pl_negloglik`, analytic: each choice's log-normaliser adds
    ``diag(p) - p pᵀ`` over the bots still left (one pass over the orders; the numerical
    one took two gradient evaluations per bot — minutes on a big ladder)."""
    n = len(theta)
    h = np.zeros(n * n)
    for order_all, weight_all, _ in orders.values():
        for lo in range(0, len(order_all), chunk):  # bounded memory: rows × left² each
            order, weight = order_all[lo : lo + chunk], weight_all[lo : lo + chunk]
            for k, _, p in _choices(theta[order]):
                left = order[:, k:]
                wp = weight[:, None] * p
                h += np.bincount((left * (n + 1)).ravel(), wp.ravel(), n * n)
                pairs = (left[:, :, None] * n + left[:, None, :]).ravel()
                h -= np.bincount(pairs, (wp[:, :, None] * p[:, None, :]).ravel(), n * n)
    h = h.reshape(n, n) + PRIOR * np.eye(n)
    return (h + h.T) / 2


def _block_scores(theta: np.ndarray, orders: Orders, blocks: int) -> Any:
    """Each block's gradient of the negative log-likelihood (blocks × bots, a sparse
    matrix: a block holds a few bots; dense it would be gigabytes on a big ladder): the
    pieces of the sandwich's "meat"."""
    from scipy.sparse import coo_matrix

    n = len(theta)
    cells: list[np.ndarray] = []
    values: list[np.ndarray] = []
    for order, weight, block in orders.values():
        for k, _, p in _choices(theta[order]):
            cells += [block * n + order[:, k], (block[:, None] * n + order[:, k:]).ravel()]
            values += [-weight, (weight[:, None] * p).ravel()]
    if not cells:
        return coo_matrix((blocks, n)).tocsr()
    flat = np.concatenate(cells)
    rows, cols = np.divmod(flat, n)
    return coo_matrix((np.concatenate(values), (rows, cols)), shape=(blocks, n)).tocsr()


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
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

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
    bots: list[BotKey],
    theta: np.ndarray,
    hess: np.ndarray,
    anchor: BotKey | None,
    field: np.ndarray | None = None,
    scores: Any = None,
    gram: tuple[np.ndarray, int] | None = None,
) -> Fit[BotKey]:
    """``scores``: per-block gradients (see :func:`_block_scores`); when given, the
    covariance is widened by the dispersion they show, never narrowed.  ``gram``: the same
    as (Σ over blocks of score·scoreᵀ, blocks), summed already (``fitting``)."""
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
    inv = np.linalg.pinv(reduced)
    dispersion = 1.0
    if scores is not None and gram is None:
        product = scores.T @ scores  # bots × bots; sparse scores give a sparse product
        product = product.toarray() if hasattr(product, "toarray") else np.asarray(product)
        gram = (product, scores.shape[0])
    if gram is not None and gram[1] > 1 and n > 1:
        blocks = gram[1]
        meat = basis.T @ gram[0] @ basis * blocks / (blocks - 1)
        dispersion = max(1.0, float(np.trace(inv @ meat)) / (n - 1))
    cov = dispersion * (basis @ inv @ basis.T)
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
    # P(a stronger than b) for every pair at once (a Python loop over the pairs took most
    # of a second at 200 bots); the same arithmetic as _normal_cdf, pair by pair
    diag = np.diag(cov)
    var = diag[:, None] + diag[None, :] - 2 * cov
    diff = theta[:, None] - theta[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var > 0, diff / np.sqrt(np.where(var > 0, var, 1.0)), 0.0)
    cdf = [0.5 * math.erfc(-x / math.sqrt(2)) for x in z.ravel().tolist()]
    step = (diff > 0).astype(float).ravel().tolist()
    positive = (var > 0).ravel().tolist()
    sup: dict[BotKey, dict[BotKey, float]] = {}
    for i, a in enumerate(bots):
        row = sup[a] = {}
        for j, b in enumerate(bots):
            if i != j:
                k = i * n + j
                row[b] = cdf[k] if positive[k] else step[k]
    ratings.sort(key=lambda r: -r.elo)
    return Fit(ratings, sup)


def _normal_cdf(x: float) -> float:
    """Φ(x), as scipy.stats.norm.cdf computes it (to an ulp) without importing
    scipy.stats: that import alone took a quarter of a second of every `arena` command
    that rates a ladder."""
    return 0.5 * math.erfc(-x / math.sqrt(2))


def _tie_orders(ranking: Mapping[BotKey, float]) -> list[list[BotKey]]:
    """Every order consistent with the points, ties in every arrangement."""
    levels = sorted(set(ranking.values()), reverse=True)
    if len(levels) == len(ranking):  # no ties (most orders): the one order, made at once
        return [sorted(ranking, key=ranking.__getitem__, reverse=True)]
    groups = [[b for b in ranking if ranking[b] == v] for v in levels]
    return [
        [b for group in arrangement for b in group]
        for arrangement in itertools.product(*(itertools.permutations(g) for g in groups))
    ]


def fit_plackett_luce(
    blocks: Sequence[Mapping[BotKey, float] | Sequence[Mapping[BotKey, float]]],
    anchor: BotKey | None = None,
    intervals: bool = True,
) -> Fit[BotKey]:
    """Ratings from blocks.  A block is one order (bot → points, higher better) or a list
    of the correlated orders one unit of evidence gave (a duplicate deal's games and card
    sets).  ``intervals=False`` skips the Hessian (the intervals are then meaningless)."""
    units = [[b] if isinstance(b, Mapping) else list(b) for b in blocks]
    bots = sorted({b for unit in units for r in unit for b in r}, key=str)
    if len(bots) < 2:
        raise ValueError("a rating needs at least two distinct bots")
    index = {b: i for i, b in enumerate(bots)}
    rows: dict[int, tuple[list[list[int]], list[float], list[int]]] = {}
    ranked: list[tuple[list[int], list[float]]] = []
    for u, unit in enumerate(units):
        for ranking in unit:
            if len(ranking) < 2:
                continue
            arrangements = _tie_orders(ranking)
            for names in arrangements:
                order, weights, owner = rows.setdefault(len(names), ([], [], []))
                order.append([index[b] for b in names])
                weights.append(1 / len(arrangements))
                owner.append(u)
            names = arrangements[0]
            ranked.append(([index[b] for b in names], [ranking[b] for b in names]))
    orders: Orders = {
        n: (np.array(o, dtype=np.intp), np.array(w), np.array(b, dtype=np.intp))
        for n, (o, w, b) in rows.items()
    }
    from scipy.optimize import minimize

    fun = lambda th: _pl_negloglik(th, orders)  # noqa: E731
    res = minimize(fun, np.zeros(len(bots)), jac=True, method="L-BFGS-B")
    if not intervals:
        return _finish(bots, res.x, np.eye(len(bots)), anchor)
    field = main_field(len(bots), _ahead_edges(ranked))
    scores = _block_scores(res.x, orders, len(units))
    return _finish(bots, res.x, _pl_hessian(res.x, orders), anchor, field, scores)


def fit_bradley_terry(
    outcomes: Sequence[tuple[BotKey, BotKey, float]], anchor: BotKey | None = None
) -> Fit[BotKey]:
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

    from scipy.optimize import minimize

    res = minimize(fun, np.zeros(len(bots)), jac=True, method="L-BFGS-B")
    edges = [(index[a], index[b]) for a, b, x in outcomes if x >= 0.5]
    edges += [(index[b], index[a]) for a, b, x in outcomes if x <= 0.5]
    return _finish(bots, res.x, _hessian(fun, res.x), anchor, main_field(len(bots), edges))


def pairwise_from_blocks(
    blocks: Sequence[Mapping[BotKey, float] | Sequence[Mapping[BotKey, float]]],
) -> list[tuple[BotKey, BotKey, float]]:
    """Every pair of distinct bots in every order of every block, as a Bradley–Terry
    outcome (for the cross-check: its intervals treat the pairs as independent)."""
    out = []
    for block in blocks:
        for ranking in [block] if isinstance(block, Mapping) else block:
            names = list(ranking)
            for i, a in enumerate(names):
                for b in names[i + 1 :]:
                    if a == b:
                        continue
                    x, y = ranking[a], ranking[b]
                    out.append((a, b, 1.0 if x > y else 0.0 if x < y else 0.5))
    return out


def openskill_ordinals(blocks: list[dict[Any, float]]) -> dict[Any, float]:
    """OpenSkill (Plackett–Luce, skill drift tau = 0: fixed bot versions) over the blocks in
    play order; the conservative ordinal (mu − 3 sigma) for live feedback, never the rank."""
    from openskill.models import PlackettLuce

    model = PlackettLuce(tau=0.0)
    state = openskill_state(blocks, {})
    return {b: model.rating(mu=mu, sigma=sigma).ordinal() for b, (mu, sigma) in state.items()}


def openskill_state(
    blocks: list[dict[Any, float]], start: Mapping[Any, tuple[float, float]]
) -> dict[Any, tuple[float, float]]:
    """OpenSkill's (mu, sigma) per bot after ``blocks`` in play order, going on from
    ``start`` (the state after the blocks before them): rating the blocks in two parts this
    way gives what rating them at once gives."""
    from openskill.models import PlackettLuce

    model = PlackettLuce(tau=0.0)
    ratings: dict[Any, Any] = {
        b: model.rating(mu=mu, sigma=sigma) for b, (mu, sigma) in start.items()
    }
    for block in blocks:
        names = list(block)
        teams = [[ratings.setdefault(b, model.rating())] for b in names]
        new = model.rate(teams, scores=[block[b] for b in names])
        for b, team in zip(names, new, strict=True):
            ratings[b] = team[0]
    return {b: (float(r.mu), float(r.sigma)) for b, r in ratings.items()}


def elo_history(blocks: list[dict[Any, float]], k: float = 16.0) -> list[dict[Any, float]]:
    """An incremental K-factor Elo after each block (every pair of distinct bots in a block
    is one game, scored by their block points), for the rating-over-time plot only — never
    for the ranking, which is the batch fit's."""
    ratings: dict[Any, float] = {}
    out = []
    for block in blocks:
        names = list(block)
        delta = dict.fromkeys(names, 0.0)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                ra, rb = ratings.setdefault(a, 0.0), ratings.setdefault(b, 0.0)
                expected = 1 / (1 + 10 ** ((rb - ra) / 400))
                score = 1.0 if block[a] > block[b] else 0.0 if block[a] < block[b] else 0.5
                delta[a] += k * (score - expected)
                delta[b] -= k * (score - expected)
        for name in names:
            ratings[name] += delta[name]
        out.append(dict(ratings))
    return out
