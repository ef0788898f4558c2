"""The ladder's Plackett–Luce fit from match digests (:mod:`.digests`), the same model and
the same numbers as :func:`.ratings.fit_plackett_luce` on the blocks, made to scale:

- the likelihood's terms are summed once per distinct *group* of entrants (every choice a
  group's blocks made from one subset of it is one term, weighted): a pass over the data is
  a pass over the groups and their few subsets, not over every order of every block;
- it is minimised by Newton's method with the exact Hessian (a small matrix: bots × bots)
  and a backtracking line search (the objective is strictly convex: the ridge), to
  machine precision, so the answer does not depend on where it started;
- it starts from the last fit's log-strengths (a warm start): after one more match, one
  Newton step or two;
- the intervals' sandwich needs each block's score; it is computed from the blocks' terms
  and the groups' choice probabilities in one vectorised pass.

``Iterations`` (the Newton steps taken) is returned beside the fit: a warm start shows as
fewer of them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .digests import Digests, widen
from .ratings import PRIOR, Fit, _finish

TOLERANCE = 1e-14
"""Newton stops once its decrement (−gradient · step: twice what the step would still gain)
is below this; the step is taken.  (A bound on the step itself cannot be met: the field's
mean rests on the ridge alone, and the rounding in a gradient of 100,000 terms moves it by
more than 1e-10.)"""
MAX_STEPS = 200
EMPTY = -1e300
"""An empty slot's log-strength: its choice probability is 0 (exactly)."""
FULL_STEP = 1e-2
"""A Newton decrement (−gradient · step) below which the full step is taken unsearched."""


@dataclass(frozen=True)
class DigestFit:
    fit: Fit[int]
    theta: dict[int, float]
    """Each rated version's log-strength (not anchored): the next fit's start."""
    iterations: int
    """Newton steps taken (each a gradient and a Hessian)."""
    warm: bool
    """Whether it started from a previous solution."""
    seconds: dict[str, float]
    """Where its time went: the groups as bot indices, Newton's steps, the sandwich, the
    main field, the intervals."""


def _masks(width: int) -> np.ndarray:
    """The subsets of ``width`` slots a choice can be made from (two slots or more)."""
    return np.array([m for m in range(1 << width) if bin(m).count("1") >= 2], dtype=np.int64)


@dataclass
class Evidence:
    """The fit's evidence summed per distinct group of entrants (a row of version ids,
    -1 for no entrant): additive, so a new match's digest is added to it, never the whole
    ladder read again.  ``masks``: the subsets (bitmasks over the slots) chosen from;
    per group, ``sets``: the weight of the choices made from each, ``won``: of the choices
    each slot won; and the second moments of the blocks' (sets, won) vectors, which give
    the intervals' sandwich at any log-strengths without the blocks themselves (a block's
    score is ``Pᵀ sets − won``, P the group's choice probabilities per subset)."""

    width: int
    masks: np.ndarray  # (K,)
    group: np.ndarray  # (G, width) version ids
    sets: np.ndarray  # (G, K)
    won: np.ndarray  # (G, width)
    sets_sets: np.ndarray  # (G, K, K): Σ over blocks of sets·setsᵀ
    sets_won: np.ndarray  # (G, K, width): Σ sets·wonᵀ
    won_won: np.ndarray  # (G, width, width): Σ won·wonᵀ
    ahead: np.ndarray  # (G,) bits 8a + b: slot a ahead of (or level with) slot b
    blocks: int
    rows: dict[tuple[int, ...], int]  # a group's row

    @classmethod
    def empty(cls, width: int) -> Evidence:
        k = len(_masks(width))
        return cls(
            width,
            _masks(width),
            np.zeros((0, width), np.int64),
            np.zeros((0, k)),
            np.zeros((0, width)),
            np.zeros((0, k, k)),
            np.zeros((0, k, width)),
            np.zeros((0, width, width)),
            np.zeros(0, np.int64),
            0,
            {},
        )

    def widened(self, width: int) -> Evidence:
        """The same with ``width`` slots (a mask of fewer slots is the same mask of more)."""
        if width <= self.width:
            return self
        out = Evidence.empty(width)
        at = np.searchsorted(out.masks, self.masks)
        g, k, pad = len(self.group), len(out.masks), width - self.width
        out.group = np.pad(self.group, ((0, 0), (0, pad)), constant_values=-1)
        out.sets = np.zeros((g, k))
        out.sets[:, at] = self.sets
        out.won = np.pad(self.won, ((0, 0), (0, pad)))
        out.sets_sets = np.zeros((g, k, k))
        out.sets_sets[:, at[:, None], at[None, :]] = self.sets_sets
        out.sets_won = np.zeros((g, k, width))
        out.sets_won[:, at, : self.width] = self.sets_won
        out.won_won = np.pad(self.won_won, ((0, 0), (0, pad), (0, pad)))
        out.ahead, out.blocks = self.ahead, self.blocks
        out.rows = {row + (-1,) * pad: i for row, i in self.rows.items()}
        return out

    def add(self, d: Digests) -> Evidence:
        """This evidence with ``d``'s blocks added.  ``self`` is changed (and returned)
        unless the width grows; its arrays grow by doubling, so adding one match to a big
        ladder copies nothing big."""
        if not d.blocks:
            return self
        out = self.widened(max(self.width, d.width))
        d = widen(d, out.width)
        found, inverse = np.unique(d.group[d.block_match], axis=0, return_inverse=True)
        gid = np.empty(len(found), np.int64)
        fresh = []
        for i, row in enumerate(map(tuple, found.tolist())):
            if row not in out.rows:
                out.rows[row] = len(out.rows)
                fresh.append(row)
            gid[i] = out.rows[row]
        local = inverse.reshape(-1)  # each block's row among ``gid``: sums over d only,
        g, used = len(out.rows), len(out.group)  # then added at those rows
        out._grow(g)
        out.group[used:] = np.array(fresh, np.int64).reshape(-1, out.width)
        s, w = d.sets[:, out.masks], d.won  # (B, K), (B, width)
        k, width, rows = len(out.masks), out.width, len(gid)

        def summed(values: np.ndarray) -> np.ndarray:
            return np.bincount(local, values, rows)

        for a in range(k):
            out.sets[gid, a] += summed(s[:, a])
            for b in range(a, k):
                both = summed(s[:, a] * s[:, b])
                out.sets_sets[gid, a, b] += both
                if b != a:
                    out.sets_sets[gid, b, a] += both
            for b in range(width):
                out.sets_won[gid, a, b] += summed(s[:, a] * w[:, b])
        for a in range(width):
            out.won[gid, a] += summed(w[:, a])
            for b in range(width):
                out.won_won[gid, a, b] += summed(w[:, a] * w[:, b])
        ahead = np.zeros(rows, np.int64)
        np.bitwise_or.at(ahead, local, d.ahead)
        out.ahead[gid] |= ahead
        out.blocks += d.blocks
        return out

    _FIELDS = ("group", "sets", "won", "sets_sets", "sets_won", "won_won", "ahead")

    def _grow(self, g: int) -> None:
        """Room for ``g`` groups (capacity doubled when short); the fields become views."""
        store: dict[str, np.ndarray] = self.__dict__.setdefault("_store", {})
        for name in self._FIELDS:
            now = getattr(self, name)
            have = store.get(name)
            if have is None or len(have) < g:
                room = max(g + g // 4, 2 * (len(have) if have is not None else 0), 64)
                fill = -1 if name == "group" else 0
                bigger = np.full((room, *now.shape[1:]), fill, now.dtype)
                bigger[: len(now)] = now
                store[name] = bigger
            setattr(self, name, store[name][:g])


class _Terms:
    """The likelihood's terms for one fit: the evidence's groups as bot indices, and per
    group its log-strengths by slot (an empty slot: ``EMPTY``, so a choice never goes to
    it and its weight, 0, adds nothing).  Every pass is over the groups, the subsets of
    one size at once; what a group's slots gather is put on its slots by a small 0/1
    matrix product, and onto the bots once at the end."""

    def __init__(self, ev: Evidence, index: np.ndarray, n: int) -> None:
        self.ev, self.n, self.width = ev, n, ev.width
        w = ev.width
        self.index = np.where(index >= 0, index, n)  # n: the empty slot's strength
        ok = index >= 0
        self.won = np.bincount(index[ok], ev.won[ok], n)
        by_size: dict[int, list[tuple[int, list[int]]]] = {}
        for col, m in enumerate(ev.masks.tolist()):
            if ev.sets[:, col].any():
                slots = [s for s in range(w) if m >> s & 1]
                by_size.setdefault(len(slots), []).append((col, slots))
        # per size k: the subsets' columns, their slots (M × k), their weights (G × M),
        # and the 0/1 matrices that put (subset, slot) and (subset, slot, slot) on the
        # group's slots and slot pairs
        self.sizes = []
        for k, masks in sorted(by_size.items()):
            cols = np.array([c for c, _ in masks])
            slot_rows = np.array([sl for _, sl in masks], dtype=np.int64)
            to_slot = np.zeros((len(masks) * k, w))
            to_pair = np.zeros((len(masks) * k * k, w * w))
            for i, (_, sl) in enumerate(masks):
                for a, sa in enumerate(sl):
                    to_slot[i * k + a, sa] = 1
                    for b, sb in enumerate(sl):
                        to_pair[(i * k + a) * k + b, sa * w + sb] = 1
            self.sizes.append((cols, slot_rows, ev.sets[:, cols], to_slot, to_pair))
        self.slot_ok = ok
        self.pair_ok = ok[:, :, None] & ok[:, None, :]
        self.pair_bot = (index[:, :, None] * n + index[:, None, :])[self.pair_ok]

    def _choices(self, theta: np.ndarray):  # type: ignore[no-untyped-def]
        """Per subset size: its weights (G × M), log-normalisers (G × M) and choice
        probabilities (G × M × k)."""
        strength = np.append(theta, EMPTY)[self.index]  # (G, width)
        for size in self.sizes:
            s = strength[:, size[1]]  # (G, M, k)
            top = s.max(axis=2, keepdims=True)
            e = np.exp(s - top)
            z = e.sum(axis=2, keepdims=True)
            yield size, top[:, :, 0] + np.log(z[:, :, 0]), e / z

    def value(self, theta: np.ndarray) -> float:
        f = PRIOR * float(theta @ theta) / 2 - float(self.won @ theta)
        for size, log_z, _ in self._choices(theta):
            f += float((size[2] * log_z).sum())  # not BLAS: no threads to wait for
        return f

    def derivatives(self, theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """The negative log-likelihood, its gradient and its Hessian at ``theta``."""
        n, g, w = self.n, len(self.index), self.width
        f = PRIOR * float(theta @ theta) / 2 - float(self.won @ theta)
        grad_slots = np.zeros((g, w))
        hess_slots = np.zeros((g, w * w))
        for (_, slots, weight, to_slot, to_pair), log_z, p in self._choices(theta):
            f += float((weight * log_z).sum())
            wp = weight[:, :, None] * p  # (G, M, k)
            m, k = slots.shape
            grad_slots += wp.reshape(g, m * k) @ to_slot
            term = -wp[:, :, :, None] * p[:, :, None, :]
            term[:, :, np.arange(k), np.arange(k)] += wp
            hess_slots += term.reshape(g, m * k * k) @ to_pair
        grad = PRIOR * theta - self.won
        grad += np.bincount(self.index[self.slot_ok], grad_slots[self.slot_ok], n)
        cells = hess_slots.reshape(g, w, w)[self.pair_ok]
        hess = np.bincount(self.pair_bot, cells, n * n).reshape(n, n) + PRIOR * np.eye(n)
        return f, grad, (hess + hess.T) / 2

    def gram(self, theta: np.ndarray) -> np.ndarray:
        """Σ over blocks of the block's score times itself (bots × bots): the sandwich's
        meat, before its small-sample factor, from the groups' second moments (a block's
        score: ``Pᵀ sets − won``, P its group's choice probabilities per subset)."""
        n, ev = self.n, self.ev
        probs = np.zeros((len(self.index), len(ev.masks), self.width))
        for size, _, p in self._choices(theta):
            probs[:, size[0][:, None], size[1]] = p
        meat = np.einsum("gka,gkl,glb->gab", probs, ev.sets_sets, probs, optimize=True)
        cross = np.einsum("gka,gkb->gab", probs, ev.sets_won)
        meat += ev.won_won - cross - cross.transpose(0, 2, 1)
        return np.bincount(self.pair_bot, meat[self.pair_ok], n * n).reshape(n, n)

    def field(self) -> np.ndarray:
        """The main field (``ratings.main_field``) from the groups' "finished ahead of (or
        level with)" bits."""
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        n, bits, codes = self.n, self.ev.ahead, []
        for a in range(self.width):
            for b in range(self.width):
                has = (bits >> (8 * a + b)) & 1 == 1
                codes.append(self.index[has, a] * n + self.index[has, b])
        found = np.nonzero(np.bincount(np.concatenate(codes), minlength=n * n))[0]
        if not len(found):
            return np.ones(n, dtype=bool)
        rows, cols = np.divmod(found, n)
        graph = coo_matrix((np.ones(len(found)), (rows, cols)), shape=(n, n))
        _, labels = connected_components(graph, directed=True, connection="strong")
        return labels == int(np.argmax(np.bincount(labels)))


def fit_evidence(ev: Evidence, start: dict[int, float] | None = None) -> DigestFit | None:
    """The ratings from the evidence (None with fewer than two rated versions); ``start``:
    the last fit's log-strengths (versions not in it start at 0)."""
    rated = np.unique(ev.group[ev.group >= 0]) if len(ev.group) else np.zeros(0, np.int64)
    if len(rated) < 2:
        return None
    bots = sorted((int(v) for v in rated), key=str)  # as fit_plackett_luce orders them
    n = len(bots)
    position = np.array([bots.index(int(v)) for v in rated])  # rated is ascending
    index = np.where(ev.group >= 0, position[np.searchsorted(rated, ev.group).clip(max=n - 1)], -1)
    clock = {"terms": time.perf_counter()}
    terms = _Terms(ev, index, n)
    clock["terms"] = time.perf_counter() - clock["terms"]
    mark = time.perf_counter()
    theta = np.zeros(n)
    warm = False
    if start:
        theta = np.array([start.get(b, 0.0) for b in bots], dtype=float)
        warm = any(b in start for b in bots)
    steps = 0
    hess = np.eye(n)
    while steps < MAX_STEPS:
        f, grad, hess = terms.derivatives(theta)
        steps += 1
        step = np.linalg.solve(hess, -grad)
        slope = float(grad @ step)
        if -slope <= TOLERANCE:
            theta = theta + step
            break
        t = 1.0
        # near the optimum (Newton decrement below FULL_STEP) the full step is taken: there
        # it converges quadratically, and f's own rounding would fool a line search
        while (
            -slope > FULL_STEP and t > 1e-9 and terms.value(theta + t * step) > f + 1e-4 * t * slope
        ):
            t /= 2
        theta = theta + t * step
    clock["newton"], mark = time.perf_counter() - mark, time.perf_counter()
    gram = terms.gram(theta)
    clock["sandwich"], mark = time.perf_counter() - mark, time.perf_counter()
    field = terms.field()
    clock["field"], mark = time.perf_counter() - mark, time.perf_counter()
    fit = _finish(bots, theta, hess, None, field, gram=(gram, ev.blocks))
    clock["intervals"] = time.perf_counter() - mark
    theta_of = {b: float(theta[i]) for i, b in enumerate(bots)}
    return DigestFit(fit, theta_of, steps, warm, clock)


def fit_digests(d: Digests, start: dict[int, float] | None = None) -> DigestFit | None:
    """:func:`fit_evidence` on digests."""
    return fit_evidence(Evidence.empty(d.width).add(d), start)
