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
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from bigtwo import Bot, Game, RuleSet

from ..bots import BotSpec
from ..match import by_rotation, run_match
from ..referee.session import TimeControl
from .duplicate import rotated_deals
from .sprt import SPRT


@dataclass
class Verdict:
    decision: str  # "better" | "not better" | "undecided"
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
        return {"better": 0, "not better": 1}.get(self.decision, 2)

    def to_dict(self) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in vars(self).items()}


class Forfeited(Exception):
    """NEW or OLD forfeited a match: the points of the fallback that then played its seat
    say nothing about the bot, so the test stops (NEW: not better; OLD: undecided)."""

    def __init__(self, which: str, bot: str, detail: str) -> None:
        super().__init__(f"{which} ({bot}) forfeited a match: {detail}")
        self.which = which


def _check_forfeit(summary: dict[str, Any], which: str, bot: BotSpec) -> None:
    seat = summary["seats"][0]
    if seat["forfeit"]:
        last = seat["faults"][-1] if seat["faults"] else {"kind": "?", "detail": ""}
        raise Forfeited(which, bot.name, f"{last['kind']}: {last['detail']}"[:300])


def _seat0_totals(summary: dict[str, Any], rotations: int, deals: int) -> list[float]:
    totals = [0.0] * deals
    for hand in summary["hands"]:
        totals[hand["hand"] // rotations] += hand["scores"][0]
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
) -> AsyncIterator[float]:
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
    """The same samples from the engine in-process (no referee): for testing the procedure."""
    rotations = rules.players
    k = 0
    while True:
        deals = rotated_deals(rules, [f"{seed}/{k}"], rotations)
        k += 1
        totals = []
        for factory in (new, old):
            seats = [factory(), *[o() for o in opponents]]
            total = 0.0
            for hands in deals:
                g = Game.from_hands(rules.replace(match_end="hands", match_end_value=1), hands)
                while not g.hand_over:
                    g.apply(seats[g.turn].act(g.observation(g.turn)))
                total += g.scores[0]
            totals.append(total)
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
