"""``arena ladder run`` and ``arena ladder add``: enter bots in a ladder (each new one
checked first) and play its matches with a live view of the leaderboard."""

from __future__ import annotations

import contextlib
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from bigtwo import RuleSet

from ..sandbox.base import SandboxUnavailable
from ..sandbox.images import ImageBuildError
from ..text import printable
from .common import (
    _err,
    _fail,
    _labelled,
    _shown,
    cancel_on_signals,
    interrupted_code,
    ladder_app,
    need_db,
    rules_or_fail,
    store_errors,
    time_control,
    warn_host_packages,
)
from .options import (
    BankMsOpt,
    CheckOpt,
    DbOpt,
    MaxStrikesOpt,
    MoveMsOpt,
    RulesOpt,
    SetOpt,
    StartupMsOpt,
)

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from ..bots import BotSpec
    from ..referee.results import MatchResult
    from ..validation import Validation


def _ladder_setup(
    db: str,
    name: str,
    ruleset: RuleSet | None,
    settings: dict | None,
    bots: list[str],
    refused: list[Validation] | None = None,
    to_play: bool = False,
) -> Engine:
    """Open the database, find or create the ladder, enter the bots; returns the engine.

    ``to_play`` (``ladder run``): a ladder that is final or in its final phase plays no
    regular match, so it is refused before any bot is checked or entered — not after, with
    a new row in a table that is final.

    With ``refused`` (a list to fill), each bot new to the ladder is first checked
    (:mod:`arena.validation`: one hand against copies of itself, in the ladder's sandbox
    and time control); one that cannot start or forfeits is not entered, and its
    :class:`~arena.validation.Validation` is appended to ``refused``."""
    from ..bots import BotSpecError, bot_digest, bot_files
    from ..bots import resolve as resolve_bot
    from ..ladder.queries import connect, ensure_ladder, enter_bots, entered, refuse_if_final

    with store_errors():
        engine = connect(db)
    try:
        specs = [resolve_bot(b) for b in bots]
        digests = ["" if s.remote else bot_digest(bot_files(s)) for s in specs]
    except BotSpecError as exc:
        raise _fail(str(exc)) from None
    if any(s.remote for s in specs):
        raise _fail("a ladder cannot hold remote seats")
    with store_errors():
        rules, ladder_settings = ensure_ladder(
            engine, name, None if ruleset is None else ruleset.to_dict(), settings, db
        )
        if to_play:
            refuse_if_final(engine, name)
    pairs = list(zip(specs, digests, strict=True))
    if refused is not None and pairs:
        known = entered(engine, name, [(s.name, d) for s, d in pairs])
        new = [s for (s, _), old in zip(pairs, known, strict=True) if not old]
        bad = _check_bots(new, RuleSet.from_dict(rules), ladder_settings) if new else []
        refused.extend(bad)
        names = {v.bot.name for v in bad}
        pairs = [(s, d) for s, d in pairs if s.name not in names]
    enter_bots(engine, name, [(s.name, s.runner_spec, d) for s, d in pairs])
    return engine


def _check_bots(specs: list[BotSpec], rules: RuleSet, settings: dict) -> list[Validation]:
    """Check each bot that needs it (:func:`arena.validation.validate`) in the ladder's
    sandbox and time control, one after the other with a line each on stderr; returns the
    refused ones' Validations.  A sandbox that cannot run at all is the organizer's error,
    not the bot's: it ends the command."""
    import asyncio

    from ..referee.time_control import TimeControl
    from ..validation import needs_check, validate

    err = _err()
    tc = TimeControl(**settings.get("time_control", {}))
    refused: list[Validation] = []
    for spec in specs:
        if not needs_check(spec):
            continue
        err.print(_shown(f"checking {spec.name}: one hand against copies of itself…"))
        try:
            result = asyncio.run(validate(spec, rules, settings.get("sandbox", "auto"), tc))
        except KeyboardInterrupt:
            raise _fail("interrupted while checking bots; nothing was entered", 130) from None
        except (ImageBuildError, SandboxUnavailable, OSError) as exc:
            raise _fail(f"cannot check {spec.name}: {exc}") from None
        if result.ok:
            for warning in result.warnings:
                err.print(_labelled(f"warning: {spec.name}:", "yellow", warning))
        else:
            err.print(_labelled(f"refused {spec.name}:", "red", result.reason))
            refused.append(result)
    return refused


@ladder_app.command("run")
def ladder_run(
    bots: Annotated[
        list[str] | None,
        typer.Argument(help="Bots to enter (as for `arena match`); also --bots A B C."),
    ] = None,
    name: Annotated[
        str, typer.Option(help="Ladder name (several live in one database).")
    ] = "default",
    rules: RulesOpt = "hk",
    set_: SetOpt = None,
    deals: Annotated[int, typer.Option(min=1, help="Deals per match.")] = 4,
    rotations: Annotated[int, typer.Option(help="Seat rotations per deal: 4, 12 or 24.")] = 4,
    rounds: Annotated[
        int,
        typer.Option(
            min=1,
            help="Rounds in all: a run plays what is missing, so run again with a larger "
            "--rounds to add matches. A round seats every bot: up to 8 bots it is every "
            "group of four once; with more, about one match per bot, in groups chosen "
            "where the ratings are least sure, each round planned when the last one ends.",
        ),
    ] = 1,
    db: Annotated[
        str, typer.Option(help="SQLite file or database URL (postgresql://...).")
    ] = "arena.db",
    sandbox: Annotated[str, typer.Option(help="auto, docker, process or inproc.")] = "auto",
    jobs: Annotated[
        int | None, typer.Option(min=1, help="Matches at once (default: cores).")
    ] = None,
    move_ms: MoveMsOpt = 1000,
    bank_ms: BankMsOpt = 10_000,
    startup_ms: StartupMsOpt = 30_000,
    max_strikes: MaxStrikesOpt = 3,
    executor: Annotated[str, typer.Option(help="local (a pool in this process) or ray.")] = "local",
    ray_address: Annotated[
        str | None, typer.Option(help="Ray cluster address (default: a local Ray runtime).")
    ] = None,
    check: CheckOpt = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the leaderboard as JSON.")] = False,
) -> None:
    """Run a duplicate round-robin ladder and print the leaderboard.

    Resumable: run it again and it plays only what is not finished; add bots and they get
    matches against the field. A new ladder with no bots named plays the sample bots.
    Each bot new to the ladder is first checked (one hand against copies of itself);
    one that cannot start or forfeits is refused with its error, and the rest play.
    Example: arena ladder run --rules hk --bots sample_bots/*
    """
    import asyncio
    import os
    import time

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from ..ladder.duplicate import ROTATIONS
    from ..ladder.queries import holds_ladders, ladder_rounds, plan_ladder, save_snapshot
    from ..ladder.running import run_pending
    from ..sandbox.backends import choose_sandbox
    from .ladder_view import print_leaderboard, top  # here: `ladder show` lists after `run`

    if executor not in ("local", "ray"):
        raise _fail(f"--executor {executor!r}: choose local or ray")
    if rotations not in ROTATIONS:
        raise _fail(f"--rotations {rotations}: choose 4, 12 or 24")
    ruleset = rules_or_fail(rules, set_, sandbox)
    if ruleset.players != 4 and rotations != ruleset.players:
        raise _fail(f"--rotations must be {ruleset.players} with {ruleset.players} players")
    settings = {
        "deals": deals,
        "rotations": rotations,
        "sandbox": sandbox,
        # a new ladder's; an existing one keeps its own
        "time_control": asdict(time_control(move_ms, bank_ms, startup_ms, max_strikes)),
    }
    if not bots and not holds_ladders(db):  # a new database, no bots named: the samples
        from ..bots import sample_names

        bots = sample_names()
    refused: list[Validation] = []
    engine = _ladder_setup(
        db, name, ruleset, settings, bots or [], refused if check else None, to_play=True
    )
    with store_errors():
        pending, asked = plan_ladder(engine, name, rounds)

    def outlook(open_now: int) -> tuple[int, bool]:
        """Matches left (those open, and the rounds not planned yet at the field's round
        size) and whether that is exact (no round left to plan)."""
        planned = ladder_rounds(engine, name)
        left = max(0, rounds - planned.planned)
        return open_now + left * planned.round_size, left == 0

    expected, exact = outlook(pending)
    console = Console(stderr=as_json, highlight=False)
    tty = console.is_terminal  # else plain lines: a log file gets one per match
    chosen = choose_sandbox(asked)
    workers = jobs or os.cpu_count() or 1
    if chosen == "process" and bots:
        from ..bots import BotSpecError
        from ..bots import resolve as resolve_bot

        with contextlib.suppress(BotSpecError):  # named and refused above already
            warn_host_packages(_err(), [resolve_bot(b) for b in bots])
    console.print(
        _shown(
            f"{'' if exact else 'about '}{expected} match(es) to play, {workers} at a time; "
            f"sandbox: {chosen}"
            + (" (chosen by --sandbox auto)" if asked == "auto" else "")
            + ("" if exact else "; each round is planned when the last one ends")
            + ("; the first match ends after its bots start (and images build)" if pending else "")
        ),
        soft_wrap=True,
    )
    if not pending:
        console.print(
            _shown(
                f"nothing to play: the ladder has played its {rounds} round(s) (--rounds is "
                f"a total); run with --rounds {rounds + 1} or more to add matches"
            ),
            soft_wrap=True,
        )
    started = time.monotonic()
    with Progress(
        TextColumn("{task.description}", style="progress.description", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}", markup=False),
        TimeRemainingColumn(),
        console=console,
        transient=as_json,
        disable=not tty,
    ) as progress:
        task = progress.add_task("starting bots…", total=expected or None, rate="")
        played = [0]  # matches finished by this run, over its rounds
        total = [expected]

        def on_done(_done: int, _round_total: int, _summary: MatchResult) -> None:
            played[0] += 1
            done = played[0]
            minutes = (time.monotonic() - started) / 60
            rate = done / minutes if minutes > 0 else 0.0
            leaders = top(engine, name)
            progress.update(
                task,
                completed=done,
                total=total[0],
                description=leaders,
                rate=f"{rate:.1f}/min",
            )
            if not tty:
                left = (total[0] - done) / rate if rate > 0 else 0.0  # minutes
                eta = f"{left:.0f} min" if left >= 1 else f"{left * 60:.0f} s"
                console.print(
                    _shown(
                        f"match {done}/{total[0]} done, {rate:.1f} matches/min, about "
                        f"{eta} left; top: {leaders}",
                        1000,
                    ),
                    soft_wrap=True,
                )

        got: list[int] = []

        async def guarded() -> None:
            # Ctrl-C and SIGTERM cancel the run (asyncio.run alone knows only Ctrl-C: a
            # SIGTERM killed the process and left its containers); the matches in flight
            # stop their bots, the finished ones stay saved
            cancel_on_signals(got)
            open_now = pending
            while open_now:  # a round, then the next one planned from its results
                await run_pending(engine, name, workers, on_done, executor, ray_address)
                open_now, _ = await asyncio.to_thread(plan_ladder, engine, name, rounds)
                more, _ = await asyncio.to_thread(outlook, open_now)
                total[0] = played[0] + more

        try:
            with store_errors():  # a round that cannot be planned (every bot but one left)
                asyncio.run(guarded())
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise _fail(
                "interrupted: finished matches are saved; run again to go on",
                interrupted_code(got),
            ) from None
        except (ImageBuildError, SandboxUnavailable, RuntimeError) as exc:
            raise _fail(str(exc)) from None
    save_snapshot(engine, name)
    print_leaderboard(engine, name, as_json)
    if refused:  # said when checked; said again where the organizer looks last
        _err().print(
            _labelled(
                f"refused {len(refused)} bot(s), not entered:",
                "red",
                "; ".join(f"{v.bot.name}: {v.reason}" for v in refused),
                2000,
            )
        )


@ladder_app.command("add")
def ladder_add(
    bots: Annotated[list[str], typer.Argument(help="Bots to enter (as for `arena match`).")],
    name: Annotated[str, typer.Option(help="Ladder name.")] = "default",
    db: DbOpt = "arena.db",
    check: CheckOpt = True,
) -> None:
    """Enter bots in an existing ladder; the next `arena ladder run` gives each new one
    placement matches against the field at once, then seats it in every round. A changed
    bot is a new version with its own rating.

    Each new bot is first checked: one hand against copies of itself, in the ladder's
    sandbox and time control. A bot that cannot start or forfeits is refused with its
    error and not entered (exit 3); the others are entered."""
    need_db(db, " (create the ladder with `arena ladder run`)")
    refused: list[Validation] = []
    _ladder_setup(db, name, None, None, bots, refused if check else None)
    count = len(bots) - len(refused)
    Console(highlight=False).print(
        _shown(f"entered {count} bot(s) in ladder '{printable(name, 60)}'")
    )
    if refused:
        raise _fail(
            f"refused {len(refused)} bot(s): "
            + ", ".join(v.bot.name for v in refused)
            + " (the reasons are above); fix and add again",
            3,
        )
