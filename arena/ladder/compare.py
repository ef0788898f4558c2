"""Regression testing: is bot NEW better than bot OLD?

NEW and OLD each sit at seat 0 of the same table of opponents (a fixed pool), on the same
deals in the same seat rotations.  One sample is one deal: NEW's points over the deal's
rotations minus OLD's.  Deal luck and the opponents cancel in the difference, so few samples
decide; a sequential probability ratio test (:mod:`arena.ladder.sprt`) stops as soon as it
can.

The samples come from real matches over the referee (``match_samples``) or, for statistical
tests of the procedure itself, from the engine in-process (``engine_samples``); the test and
its stopping rule are the same code either way.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any

from bigtwo import Bot, RuleSet, play_local

from ..bots import BotSpec
from ..match import by_rotation, run_match
from ..referee.results import Fault, MatchResult
from ..referee.time_control import TimeControl
from .duplicate import rotated_deals
from .sprt import SPRT

# Exit codes of `arena compare`.  0, 1 and 2 are the verdicts CI scripts branch on; an
# error is never one of them.  Bad input is 64 (EX_USAGE of sysexits.h), not click's 2:
# 2 has always meant "undecided" here.
EXIT_BETTER = 0
EXIT_NOT_BETTER = 1
EXIT_UNDECIDED = 2
EXIT_BAD_INPUT = 64  # an option's value, a bot that cannot be found or loaded, the rules
EXIT_UNAVAILABLE = 69  # EX_UNAVAILABLE: the test could not run here (sandbox, bot image)
EXIT_INTERRUPTED = 130  # SIGINT (Ctrl-C); SIGTERM is 143
EXIT_TERMINATED = 143

# A run takes on average the expected count of samples; about 9 runs in 10 decide within
# twice that (bench/compare.py measures 0.85–0.94 at the bounds and between them, more
# beyond them), so that is the budget the command suggests.
SAFE_BUDGET = 2.0


@dataclass
class Verdict:
    decision: str  # "better" | "not better" | "undecided" | "interrupted"
    samples: int
    llr: float
    lower: float
    upper: float
    elo: float
    elo_low: float
    elo_high: float
    reason: str = ""  # why the test stopped early, when it did (a forfeit)

    @property
    def exit_code(self) -> int:
        return {
            "better": EXIT_BETTER,
            "not better": EXIT_NOT_BETTER,
            "interrupted": EXIT_INTERRUPTED,
        }.get(self.decision, EXIT_UNDECIDED)

    def to_dict(self) -> dict[str, Any]:
        """Every field, floats rounded; a bound that is infinite (the interval before two
        samples, e.g. when a bot forfeits in the first match) is None, so the JSON is
        strict (no Infinity, which most parsers reject)."""
        return {k: _finite(v) for k, v in vars(self).items()}


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4) if math.isfinite(value) else None
    return value


@dataclass
class Budget:
    """What a test at these bounds should cost, against what it may spend."""

    budget: int  # samples (deals): max_matches × batch
    bounds: tuple[float, float]  # elo0, elo1
    expected: dict[str, float]  # SPRT.asn(): at elo0, at elo1, halfway
    warning: str | None  # set when the budget is below the expected count
    max_matches: int  # the --max-matches that would give SAFE_BUDGET × the expected count
    elo1: float | None  # or the --elo1 that the budget would give that (None: none would)

    def to_dict(self) -> dict[str, Any]:
        return {
            "budget": self.budget,
            "expected_samples": {k: round(v, 1) for k, v in self.expected.items()},
            "budget_warning": self.warning,
        }

    def summary(self, batch: int) -> str:
        e, (elo0, elo1) = self.expected, self.bounds
        return (
            f"expected deals to a decision (Wald's estimate): {e['h0']:.0f} if NEW is "
            f"{elo0:+g} normalized Elo (elo0), {e['h1']:.0f} if {elo1:+g} (elo1), "
            f"{e['midpoint']:.0f} halfway; about 9 runs in 10 decide within twice that. "
            f"Budget: {self.budget} deals (--max-matches {self.budget // batch} × --batch "
            f"{batch})."
        )


def plan_budget(test: SPRT, max_matches: int, batch: int) -> Budget:
    """The test's expected length (:meth:`SPRT.asn`) against its budget, with advice when the
    budget falls short: the --max-matches, or the wider --elo1, that would make it about
    SAFE_BUDGET × the expected count.  Every expected count scales as 1/(elo1 − elo0)²."""
    budget = max_matches * batch
    expected = test.asn()
    worst = max(expected["h0"], expected["h1"])
    safe_matches = math.ceil(SAFE_BUDGET * worst / batch)
    elo1 = None
    widen = test.elo0 + (test.elo1 - test.elo0) * math.sqrt(SAFE_BUDGET * worst / budget)
    for candidate in (math.ceil(widen), math.ceil(widen) + 1, math.ceil(widen * 1.1)):
        wider = SPRT(test.elo0, candidate, test.alpha, test.beta).asn()
        if SAFE_BUDGET * max(wider["h0"], wider["h1"]) <= budget:
            elo1 = float(candidate)
            break
    warning = None
    if budget < worst:
        warning = (
            f"the budget of {budget} deals is below the {worst:.0f} a decision takes on "
            f"average at these bounds: most runs will end undecided (exit {EXIT_UNDECIDED}). "
            f"For about 9 decisions in 10, use --max-matches {safe_matches}"
            + (
                f", or test a coarser difference: --elo1 {elo1:g}"
                + (f" (with --elo0 {test.elo0:g})" if test.elo0 else "")
                if elo1 is not None
                else ""
            )
            + "."
        )
    return Budget(budget, (test.elo0, test.elo1), expected, warning, safe_matches, elo1)


class Forfeited(Exception):
    """NEW or OLD forfeited a match: the points of the fallback that then played its seat
    say nothing about the bot, so the test stops (NEW: not better; OLD: undecided)."""

    def __init__(self, which: str, bot: str, detail: str) -> None:
        super().__init__(f"{which} ({bot}) forfeited a match: {detail}")
        self.which = which


def _check_forfeit(summary: MatchResult, which: str, bot: BotSpec) -> None:
    seat = summary.seats[0]
    if seat.forfeit:
        last = seat.faults[-1] if seat.faults else Fault("?", detail="")
        raise Forfeited(which, bot.name, f"{last.kind}: {last.detail or ''}"[:300])


def _seat0_totals(summary: MatchResult, rotations: int, deals: int) -> list[float]:
    totals = [0.0] * deals
    for hand in summary.hands:
        totals[hand.hand // rotations] += hand.scores[0]
    return totals


async def match_samples(
    new: BotSpec,
    old: BotSpec,
    opponents: list[BotSpec],
    rules: RuleSet,
    seed: str,
    sandbox: str,
    batch: int = 4,
    time_control: TimeControl | None = None,
) -> AsyncGenerator[float, None]:
    """Paired samples from real matches: per batch of deals, one match with NEW at seat 0 and
    one with OLD, played at the same time, on the same rotated deals."""
    rotations = rules.players
    k = 0
    while True:
        seeds = [f"{seed}/{k + i}" for i in range(batch)]
        k += batch
        deals = rotated_deals(rules, seeds, rotations)
        runs = [
            run_match(
                [bot, *opponents],
                rules,
                seeds[0],
                time_control,
                sandbox,
                deals=deals,
                segments=by_rotation(len(deals), rotations),  # no bot sees a deal twice
            )
            for bot in (new, old)
        ]
        with_new, with_old = await asyncio.gather(*runs)
        _check_forfeit(with_new, "NEW", new)
        _check_forfeit(with_old, "OLD", old)
        a = _seat0_totals(with_new, rotations, batch)
        b = _seat0_totals(with_old, rotations, batch)
        for x, y in zip(a, b, strict=True):
            yield x - y


def engine_samples(
    new: Callable[[], Bot],
    old: Callable[[], Bot],
    opponents: list[Callable[[], Bot]],
    rules: RuleSet,
    seed: str,
):  # type: ignore[no-untyped-def]
    """The same samples from the engine in-process (no referee, :func:`bigtwo.play_local`:
    the same hooks and judging as over the wire): for testing the procedure."""
    rotations = rules.players
    k = 0
    while True:
        deals = rotated_deals(rules, [f"{seed}/{k}"], rotations)
        k += 1
        totals = []
        for factory in (new, old):
            seats = [factory(), *[o() for o in opponents]]
            totals.append(float(play_local(seats, rules, seed=seed, deals=deals).scores[0]))
        yield totals[0] - totals[1]


def decide(sprt: SPRT, sample: float) -> str | None:
    result = sprt.add(sample)
    return {"H1": "better", "H0": "not better"}.get(result or "")


def verdict(sprt: SPRT, decision: str | None, reason: str = "") -> Verdict:
    elo, low, high = sprt.elo()
    return Verdict(
        decision or "undecided", sprt.n, sprt.llr, sprt.lower, sprt.upper, elo, low, high, reason
    )


def run_engine_compare(samples, sprt: SPRT, max_samples: int) -> Verdict:  # type: ignore[no-untyped-def]
    decision = None
    for sample in samples:
        decision = decide(sprt, sample)
        if decision or sprt.n >= max_samples:
            break
    return verdict(sprt, decision)
