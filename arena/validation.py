"""Checking a bot when it is entered: one short match against copies of itself.

A bot that cannot start (a syntax error, no Bot subclass, a missing package) or that
forfeits at once (it raises in ``act``, returns nothing, exits) would otherwise be found out
only inside a ladder or a regression test — where the fallback plays its seat, its points
say nothing about it, and its author learns of it last.  Kaggle checks every submission the
same way: a validation episode of the agent against copies of itself.  Copies, because then
the bot plays every seat of one deal: it leads (and must open with the rules' opening
card), follows, passes and is passed — and no other bot's cost or fault is mixed in.

The check is a real match through the referee, in the sandbox and under the time control
the bot will play in, so what passes here starts there.  A bot is refused when a copy does
not start or forfeits; faults that cost a strike but no forfeit are reported as warnings
(the bot plays, and pays for them in its matches).  Sample bots are ours and are not
checked.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bigtwo import RuleSet

from .bots import BotSpec, is_sample_bot
from .match import failed_to_start, run_match
from .referee.results import Fault
from .referee.time_control import TimeControl

VALIDATION_HANDS = 1


@dataclass
class Validation:
    """The outcome of :func:`validate` for one bot.  ``reason`` and ``warnings`` hold the
    bot's own words (its error, its faults' details): escape them before printing."""

    bot: BotSpec
    ok: bool
    reason: str = ""
    warnings: list[str] = field(default_factory=list)
    sandbox: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "bot": self.bot.name,
            "ok": self.ok,
            "reason": self.reason,
            "warnings": self.warnings,
            "sandbox": self.sandbox,
        }


def needs_check(bot: BotSpec) -> bool:
    """Every bot but the sample bots shipped with the arena (and remote seats, which the
    arena does not start)."""
    return not bot.remote and bot.path is not None and not is_sample_bot(bot)


def _fault_text(fault: Fault) -> str:
    where = f"hand {fault.hand + 1}: " if fault.hand is not None else ""
    return f"{where}{fault.kind}: {fault.detail or ''}"


async def validate(
    bot: BotSpec,
    rules: RuleSet,
    sandbox: str = "process",
    time_control: TimeControl | None = None,
    hands: int = VALIDATION_HANDS,
    log_dir: Path | None = None,
) -> Validation:
    """Play ``hands`` hand(s) of ``rules`` with ``bot`` in every seat; see the module's
    docstring for what refuses a bot.  Sandbox errors (no engine, an image that does not
    build) are raised, not blamed on the bot.  ``log_dir``: keep each seat's output there
    (the web arena shows its end to the bot's author)."""
    one = rules.replace(match_end="hands", match_end_value=hands)
    summary = await run_match(
        [bot] * rules.players,
        one,
        secrets.token_hex(8),
        time_control,
        sandbox,
        all_must_start=True,
        log_dir=log_dir,
    )
    chosen = summary.sandbox or sandbox
    failed = failed_to_start(summary)
    if failed:
        return Validation(bot, False, f"it did not start: {failed[0][1]}", sandbox=chosen)
    if summary.aborted:
        return Validation(bot, False, f"it did not start: {summary.aborted}", sandbox=chosen)
    warnings: list[str] = []
    for seat in summary.seats:
        faults = seat.faults
        if seat.forfeit:
            last = _fault_text(faults[-1]) if faults else "it forfeited"
            return Validation(
                bot, False, f"it forfeited its seat in a {hands}-hand check: {last}", sandbox=chosen
            )
        warnings.extend(_fault_text(f) for f in faults)
    return Validation(bot, True, warnings=sorted(set(warnings))[:5], sandbox=chosen)
