"""``arena compare``: is a new bot better than an old one (a sequential test on paired
deals), with compare's own exit codes and, with ``--json``, one JSON object whatever
happens."""

from __future__ import annotations

import json
import secrets
import sys
from typing import Annotated, Any

import typer
from rich.console import Console

from ..sandbox.base import SandboxUnavailable
from ..sandbox.images import ImageBuildError
from ..text import printable
from .common import (
    BadOptions,
    _err,
    _fail,
    _labelled,
    _shown,
    app,
    cancel_on_signals,
    game_options,
    interrupted_code,
    time_control,
)
from .options import BankMsOpt, MaxStrikesOpt, MoveMsOpt, RulesOpt, SetOpt, StartupMsOpt


class _CompareCommand(typer.core.TyperCommand):
    """`arena compare` as a command: click's own usage errors (an unknown option, a value of
    the wrong type or out of range, a missing argument) exit with compare's bad-input code
    (64) rather than click's 2, which compare's verdicts use for "undecided"; with --json
    they also print compare's error object on stdout."""

    # typer.Context is the context click passes; click's own signature names its base class
    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]
        from ..ladder.compare import EXIT_BAD_INPUT

        # click's UsageError: typer ≥ 0.22 raises that of its own copy of click
        usage_error: type[Any] = next(
            c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError"
        )
        as_json = "--json" in args  # before the parser consumes the list
        try:
            return super().parse_args(ctx, args)
        except usage_error as exc:
            exc.exit_code = EXIT_BAD_INPUT
            if as_json:
                message = exc.format_message()
                _compare_json({"error": "bad input", "message": message}, EXIT_BAD_INPUT)
            raise


def _compare_json(obj: dict, code: int) -> None:
    """One line of strict JSON (no Infinity or NaN) on stdout, for `compare --json`."""
    out = {"decision": None, **obj, "exit_code": code}
    sys.stdout.write(json.dumps(out, allow_nan=False) + "\n")
    sys.stdout.flush()


def _compare_fail(message: str, code: int, as_json: bool, kind: str) -> typer.Exit:
    if as_json:
        _compare_json({"error": kind, "message": message}, code)
    return _fail(message, code)


@app.command(cls=_CompareCommand)
def compare(
    new: Annotated[str, typer.Argument(help="The candidate bot (as for `arena match`).")],
    old: Annotated[str, typer.Argument(help="The bot it must beat.")],
    opponents: Annotated[
        list[str] | None,
        typer.Option("--opponent", help="An opponent (repeat; default: the sample bots)."),
    ] = None,
    rules: RulesOpt = "hk",
    set_: SetOpt = None,
    elo0: Annotated[
        float, typer.Option(help="H0: NEW is this much better (normalized Elo).")
    ] = 0.0,
    elo1: Annotated[
        float,
        typer.Option(
            help="H1: NEW is this much better. The default, 50, takes 256 deals on average; "
            "each halving of elo1 − elo0 takes four times as many."
        ),
    ] = 50.0,
    alpha: Annotated[float, typer.Option(help="False positive rate.")] = 0.05,
    beta: Annotated[float, typer.Option(help="False negative rate.")] = 0.05,
    max_matches: Annotated[
        int,
        typer.Option(
            min=1,
            help="Budget: pairs of matches (each pair plays --batch deals). The default, "
            "128 × 4 = 512 deals, twice the average at the default bounds, decides about 9 "
            "tests in 10.",
        ),
    ] = 128,
    batch: Annotated[int, typer.Option(min=1, help="Deals per match.")] = 4,
    seed: Annotated[
        str | None,
        typer.Option(
            help="Seed of the deals, for reproducing a test only: a bot that knows it knows "
            "every hand. Default: a fresh secret seed.",
        ),
    ] = None,
    sandbox: Annotated[str, typer.Option(help="auto, docker, process or inproc.")] = "auto",
    move_ms: MoveMsOpt = 1000,
    bank_ms: BankMsOpt = 10_000,
    startup_ms: StartupMsOpt = 15_000,
    max_strikes: MaxStrikesOpt = 3,
    check: Annotated[
        bool,
        typer.Option(
            "--check/--no-check",
            help="First play one hand of each bot (but the sample bots) against copies of "
            "itself; one that cannot start or forfeits is refused (exit 64) before any "
            "sample.",
        ),
    ] = True,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the verdict as one JSON object on stdout, whatever happens (errors "
            "too: decision null, error and message); progress goes to stderr.",
        ),
    ] = False,
) -> None:
    """Is NEW better than OLD? A sequential test on paired deals.

    NEW and OLD each play the same deals in the same seats against the same
    opponents; a sample is NEW's points minus OLD's on one deal. First it prints
    how many deals a decision takes on average at these bounds (Wald's estimate),
    and warns when the budget, --max-matches × --batch deals, is below that.

    Example: arena compare heuristic greedy --elo1 50 --max-matches 128

    \b
    Exit codes:
      0    better (H1 accepted)
      1    not better (H0 accepted; also when NEW forfeits a match)
      2    undecided at the budget (or OLD forfeited a match)
      64   bad input: an option's value, an unknown option, a bot that cannot
           be found, loaded or started, or forfeits its check (--check), the
           rules (EX_USAGE; not 2, which is undecided)
      69   the test could not run here: no sandbox, a bot image fails to build
      130  interrupted (143: terminated); with --json, the test so far
    """
    import asyncio

    from rich.progress import BarColumn, Progress, TextColumn

    from ..bots import BotSpecError, resolve
    from ..ladder.compare import (
        EXIT_BAD_INPUT,
        EXIT_UNAVAILABLE,
        Forfeited,
        decide,
        match_samples,
        plan_budget,
        verdict,
    )
    from ..ladder.sprt import SPRT

    try:
        ruleset = game_options(rules, set_, sandbox)
        test = SPRT(elo0=elo0, elo1=elo1, alpha=alpha, beta=beta)
        tc = time_control(move_ms, bank_ms, startup_ms, max_strikes)
        specs = [resolve(new), resolve(old)]
        pool = [resolve(o) for o in (opponents or ["random", "greedy", "heuristic"])]
    except (BadOptions, BotSpecError, ValueError) as exc:
        raise _compare_fail(str(exc), EXIT_BAD_INPUT, as_json, "bad input") from None
    if len(pool) != ruleset.players - 1:
        raise _compare_fail(
            f"{len(pool)} opponents for a {ruleset.players}-player game "
            f"(give {ruleset.players - 1} with --opponent)",
            EXIT_BAD_INPUT,
            as_json,
            "bad input",
        )
    console = Console(stderr=as_json, highlight=False)
    plan = plan_budget(test, max_matches, batch)
    budget = plan.budget
    if seed is None:  # unguessable: bots may try candidate seeds against their own cards
        seed = secrets.token_hex(16)
    got: list[int] = []

    async def run() -> str | None:
        # Ctrl-C and SIGTERM cancel the test; the matches stop their bots on the way out
        cancel_on_signals(got)
        console.print(_shown(plan.summary(batch), 1000))
        if plan.warning:
            _err().print(_labelled("warning:", "yellow", plan.warning))
        if check:  # every bot that is not a sample bot, before the first sample
            from ..validation import needs_check, validate

            named = [("NEW", specs[0]), ("OLD", specs[1])] + [("opponent", o) for o in pool]
            todo = {spec.name: (which, spec) for which, spec in named if needs_check(spec)}
            if todo:
                console.print(_shown(f"checking {', '.join(todo)}: one hand each…", 1000))
            checks = await asyncio.gather(
                *(validate(spec, ruleset, sandbox, tc) for _, spec in todo.values())
            )
            for (which, spec), checked in zip(todo.values(), checks, strict=True):
                if not checked.ok:
                    refused.append(f"{which} ({spec.name}) was refused: {checked.reason}")
                    return None
        samples = match_samples(specs[0], specs[1], pool, ruleset, seed, sandbox, batch, tc)
        with Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            TextColumn("{task.completed}/{task.total} deals", markup=False),
            console=console,
            transient=as_json,
        ) as progress:
            task_id = progress.add_task("LLR 0.00", total=budget)
            async for sample in samples:
                decision = decide(test, sample)
                elo, low, high = test.elo()
                progress.update(
                    task_id,
                    completed=test.n,
                    description=(
                        f"LLR {test.llr:+.2f} [{test.lower:.2f}, {test.upper:.2f}]  "
                        f"nElo {elo:+.0f} [{low:+.0f}, {high:+.0f}]"
                    ),
                )
                if decision or test.n >= budget:
                    await samples.aclose()
                    return decision
        return None

    reason = ""
    refused: list[str] = []
    try:
        decision = asyncio.run(run())
        if refused:
            raise _compare_fail(refused[0][:2000], EXIT_BAD_INPUT, as_json, "refused")
    except (KeyboardInterrupt, asyncio.CancelledError):
        code = interrupted_code(got)  # EXIT_INTERRUPTED or EXIT_TERMINATED
        decision, reason = "interrupted", f"interrupted after {test.n} deals"
        if not as_json:
            raise _fail(reason, code) from None
        result = verdict(test, decision, reason)
        _compare_json(
            {"new": specs[0].name, "old": specs[1].name, **result.to_dict(), **plan.to_dict()},
            code,
        )
        raise _fail(reason, code) from None
    except OSError as exc:
        raise _compare_fail(
            f"cannot run the referee: {exc}", EXIT_UNAVAILABLE, as_json, "could not run"
        ) from None
    except (ImageBuildError, SandboxUnavailable) as exc:
        raise _compare_fail(str(exc), EXIT_UNAVAILABLE, as_json, "could not run") from None
    except Forfeited as exc:  # a crashing NEW is not better; a crashing OLD decides nothing
        decision, reason = ("not better" if exc.which == "NEW" else None), str(exc)
    result = verdict(test, decision, reason)
    if as_json:
        _compare_json(
            {"new": specs[0].name, "old": specs[1].name, **result.to_dict(), **plan.to_dict()},
            result.exit_code,
        )
    else:
        console.print(
            _shown(
                f"{printable(specs[0].name, 60)} vs {printable(specs[1].name, 60)}: "
                f"{result.decision.upper()} after {result.samples} deals (LLR "
                f"{result.llr:+.2f}, bounds [{result.lower:.2f}, {result.upper:.2f}]; "
                f"normalized Elo {result.elo:+.1f} [{result.elo_low:+.1f}, "
                f"{result.elo_high:+.1f}])",
                1000,
            )
        )
        if reason:
            console.print(_shown(f"stopped early: {reason}", 1000))
    raise typer.Exit(result.exit_code)
