"""A sequential probability ratio test on paired samples, as chess-engine testing does it
(the generalized SPRT of fishtest, on "normalized Elo").

A sample is one paired difference: NEW's points minus OLD's points on the same deal in the
same seat against the same opponents.  With x̄ and σ̂ the samples' mean and standard
deviation, the normalized effect is t̂ = x̄ / σ̂ and the normalized Elo
``nelo = 800 / ln 10 · t̂`` (fishtest's convention: an effect that takes as many samples to
detect as a logistic Elo difference of the same size with no draws).  For H0: nelo = elo0
against H1: nelo = elo1, with d = nelo · ln 10 / 800, the GSPRT log-likelihood ratio of the
normal model with the variance estimated from the sample is

    LLR = N / 2 · (d1 − d0) · (2 t̂ − d0 − d1)

and the test stops at LLR ≤ ln(β / (1 − α)) (H0: not better) or LLR ≥ ln((1 − β) / α)
(H1: better) — but never before ``minimum`` samples (16 by default).

Why the minimum: the variance is estimated from the samples themselves, and from two or
three of them it can be tiny by chance, which makes |t̂| and the LLR huge.  Without it,
random against itself was called "better" in 11% of tests at elo1 150 and 9% at elo1 100
(nominal α = 0.05; 4,000 tests each on bootstrap draws of 12,000 real paired deals,
centred so that the truth is exactly H0).  With 16 it was 4.3% and 4.7% (4.5% and 4.8% at
elo1 50 and 25, where the minimum hardly matters), at the cost of about 6 more deals on
average where a decision takes fewer than 40.

How many samples that takes on average is :meth:`SPRT.expected_samples` (Wald's
approximation in the same model).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

NELO_SCALE = 800 / math.log(10)


@dataclass
class SPRT:
    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    minimum: int = 16  # no decision before this many samples (see the module's docstring)
    n: int = 0
    _sum: float = 0.0
    _sumsq: float = 0.0
    history: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not (0 < self.alpha < 0.5 and 0 < self.beta < 0.5):
            raise ValueError("alpha and beta must be between 0 and 0.5")
        if self.minimum < 2:
            raise ValueError("minimum must be at least 2 (a variance needs two samples)")
        if not self.elo1 > self.elo0:
            raise ValueError(f"elo1 ({self.elo1}) must be above elo0 ({self.elo0})")

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    def add(self, sample: float) -> str | None:
        """Add one paired difference; returns "H1", "H0" or None (go on)."""
        self.n += 1
        self._sum += sample
        self._sumsq += sample * sample
        self.history.append(self.llr)
        return self.decision

    @property
    def mean(self) -> float:
        return self._sum / self.n if self.n else 0.0

    @property
    def stdev(self) -> float:
        if self.n < 2:
            return 0.0
        var = (self._sumsq - self._sum * self._sum / self.n) / (self.n - 1)
        return math.sqrt(max(var, 0.0))

    @property
    def t(self) -> float:
        sd = self.stdev
        if sd == 0:
            return 0.0 if self.mean == 0 else math.copysign(10.0, self.mean)
        return self.mean / sd

    @property
    def llr(self) -> float:
        if self.n < 2:
            return 0.0
        d0, d1 = self.elo0 / NELO_SCALE, self.elo1 / NELO_SCALE
        return self.n / 2 * (d1 - d0) * (2 * self.t - d0 - d1)

    @property
    def decision(self) -> str | None:
        if self.n < self.minimum:
            return None
        llr = self.llr
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return None

    def expected_samples(self, nelo: float) -> float:
        """Wald's approximation of the average sample number (ASN): how many samples the test
        takes on average to decide when NEW's true normalized Elo is ``nelo``.

        In the model above, with d0, d1 the bounds' normalized effects, Δ = d1 − d0 and the
        variance known, the LLR is a sum over samples x of z = Δ · x/σ − (d1² − d0²)/2 (the
        formula above with t̂ = x̄/σ).  When the true normalized effect is t = nelo · ln 10 /
        800, z has mean m = Δ · (2t − d0 − d1) / 2 and variance Δ².  With a = ln(β/(1 − α))
        and b = ln((1 − β)/α) the stopping bounds, Wald's approximation (no overshoot) is

            E[N] = (L · a + (1 − L) · b) / m,   L = (e^(h·b) − 1) / (e^(h·b) − e^(h·a)),
            h = −2m / Δ²,

        where L is the chance of accepting H0.  At the bounds themselves L = 1 − α (at
        elo0) and L = β (at elo1), so

            E0[N] = ((1 − α) · a + α · b) / (−Δ²/2),   E1[N] = (β · a + (1 − β) · b) / (Δ²/2),

        and halfway between them (m = 0: the slowest case when α = β, near it otherwise)
        E[N] = −a · b / Δ².  Every case scales as 1/Δ²: halving elo1 − elo0 takes four
        times the samples.  Real tests differ a little: the overshoot over a bound
        lengthens them, the variance estimated from few samples lets some stop early
        (``bench/compare.py`` measures means 0–12% below this), and the ``minimum`` before
        any decision lengthens the shortest ones.  Never fewer than that minimum.
        """
        d0, d1 = self.elo0 / NELO_SCALE, self.elo1 / NELO_SCALE
        delta = d1 - d0
        a, b = self.lower, self.upper
        m = delta * (2 * nelo / NELO_SCALE - d0 - d1) / 2
        h = -2 * m / (delta * delta)
        if abs(h * (b - a)) < 1e-6:  # m ≈ 0: the formula's limit (its error is below 1e-6)
            return max(float(self.minimum), -a * b / (delta * delta))
        # L as above, rewritten so that no exponent is positive (no overflow far from the
        # bounds) and with expm1 where two terms near 1 would cancel
        if h > 0:
            accept_h0 = math.expm1(-h * b) / math.expm1(h * (a - b))
        else:
            accept_h0 = (math.expm1(h * (b - a)) - math.expm1(-h * a)) / math.expm1(h * (b - a))
        return max(float(self.minimum), (accept_h0 * a + (1 - accept_h0) * b) / m)

    def asn(self) -> dict[str, float]:
        """:meth:`expected_samples` at elo0 (H0 true), at elo1 (H1 true) and halfway."""
        return {
            "h0": self.expected_samples(self.elo0),
            "h1": self.expected_samples(self.elo1),
            "midpoint": self.expected_samples((self.elo0 + self.elo1) / 2),
        }

    def elo(self, z: float = 1.959964) -> tuple[float, float, float]:
        """Normalized Elo estimate with its (1 − 2·Φ(−z)) interval."""
        if self.n < 2:
            return 0.0, -math.inf, math.inf
        half = z / math.sqrt(self.n)
        t = self.t
        return NELO_SCALE * t, NELO_SCALE * (t - half), NELO_SCALE * (t + half)
