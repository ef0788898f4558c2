"""``arena ladder final``: the final evaluation of a ladder's top (see
:mod:`arena.ladder.final`) — fresh secret deals for the top k until their order is
separated or a budget is spent, then the standings marked final; ``--reopen`` undoes it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from ..text import printable
from .common import (
    _fail,
    _shown,
    cancel_on_signals,
    interrupted_code,
    ladder_app,
    open_ladder,
    store_errors,
)
from .options import DbOpt

if TYPE_CHECKING:  # the CLI imports the rest lazily (its start stays quick)
    from ..referee.results import MatchResult


@ladder_app.command("final")
def ladder_final(
    ladder: Annotated[
        str | None, typer.Argument(metavar="NAME", help="Ladder name (or --name).")
    ] = None,
    name: Annotated[str, typer.Option(help="Ladder name.")] = "default",
    top: Annotated[
        int | None,
        typer.Option(
            "--top",
            min=1,
            help="How many places to settle: each of the top K separated from the one below "
            "it. Default 3 (or the phase's own when one is under way).",
        ),
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Matches the final phase may play at most. Default 200 (or the phase's "
            "own); a new value for a phase under way counts the matches it played.",
        ),
    ] = None,
    db: DbOpt = "arena.db",
    jobs: Annotated[
        int | None, typer.Option(min=1, help="Matches at once (default: cores).")
    ] = None,
    executor: Annotated[str, typer.Option(help="local (a pool in this process) or ray.")] = "local",
    ray_address: Annotated[
        str | None, typer.Option(help="Ray cluster address (default: a local Ray runtime).")
    ] = None,
    reopen: Annotated[
        bool,
        typer.Option(
            "--reopen",
            help="Undo: the ladder is no longer final and regular play (`ladder run`, the "
            "served contest) goes on. The final matches played keep counting; the marker "
            "is kept in the ladder's history. Plays nothing.",
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the final marker as JSON on stdout.")
    ] = False,
) -> None:
    """The final evaluation, as Kaggle runs one: play fresh secret deals on the top of the
    table until its order is settled, then mark the standings final.

    Batch by batch, the groups are built around the top's neighbours whose order is in
    doubt (P(one stronger) < 0.975, the "next" column of `ladder show`), with the bots just
    below the K-th that may still climb in; the ratings are refitted after each batch.  It
    stops when each of the top K is separated from the bot below it, or when --budget
    matches are played; the ladder is then final: `ladder show` and the served contest
    say so, and regular planning adds no match until `--reopen`.

    Resumable: interrupted (Ctrl-C, or killed), run it again and it goes on where it
    stopped; no match is played twice.  On a final ladder, without --top or --budget, it
    says how it ended (--json: the marker).  Example: arena ladder final cup --top 3
    --budget 100
    """
    import asyncio
    import json
    import os
    import time

    from ..ladder import final
    from ..ladder.queries import save_snapshot
    from ..ladder.running import BotCannotStart, run_pending
    from ..sandbox.backends import choose_sandbox
    from ..sandbox.base import SandboxUnavailable
    from ..sandbox.images import ImageBuildError
    from .ladder_view import print_leaderboard

    if executor not in ("local", "ray"):
        raise _fail(f"--executor {executor!r}: choose local or ray")
    if ladder is not None and name not in ("default", ladder):
        raise _fail(f"two ladder names: {ladder!r} and --name {name!r}; give one")
    name = ladder or name
    engine, _ = open_ladder(db, name)
    console = Console(stderr=as_json, highlight=False)
    shown = printable(name, 60)
    if reopen:
        with store_errors():
            was = final.reopen(engine, name)
        was_said = f"it was final {was.summary()}" if was else "it was not final"
        console.print(
            _shown(f"ladder '{shown}' reopened ({was_said}); regular play goes on", 2000),
            soft_wrap=True,
        )
        if as_json:
            print(json.dumps({"reopened": was.to_dict() if was else None}))
        return
    with store_errors():
        settings = final.settings_of(engine, name)
        _, marker = final.final_state(settings)
        asked = str(settings.get("sandbox", "auto"))
        if marker is not None and top is None and budget is None:
            console.print(
                _shown(f"ladder '{shown}' is final {marker.summary()}", 2000), soft_wrap=True
            )
            if as_json:
                print(json.dumps(marker.to_dict()))
            return
        phase = final.start(engine, name, top, budget)
    workers = jobs or os.cpu_count() or 1
    chosen = choose_sandbox(asked)
    console.print(
        _shown(
            f"final evaluation of ladder '{shown}': the top {phase.k}, at most "
            f"{phase.budget} match(es), {workers} at a time; sandbox: {chosen}",
            2000,
        ),
        soft_wrap=True,
    )
    started = time.monotonic()
    before = [final.view(engine, name).played]  # the phase's finished before this batch
    ran = [0]

    def on_done(done: int, _total: int, _summary: MatchResult) -> None:
        ran[0] += 1
        minutes = (time.monotonic() - started) / 60
        rate = f", {ran[0] / minutes:.1f} matches/min" if minutes > 0 else ""
        console.print(
            _shown(f"final match {before[0] + done}/{phase.budget} done{rate}"), soft_wrap=True
        )

    def said(step: final.FinalStep) -> None:
        doubt = "; ".join(
            f"{printable(a, 24)} ~ {printable(b, 24)} (P={p:.3f})" for a, b, p in step.doubts
        )
        before[0] = step.played + step.pending
        if step.marker is not None:
            return
        if step.planned:
            names = sorted({step.labels.get(v, str(v)) for g in step.planned for v in g})
            console.print(
                _shown(
                    f"played {step.played}/{step.phase.budget}; not yet separated: "
                    f"{doubt or 'none (placing unrated bots)'}; next {len(step.planned)} "
                    f"match(es) seat: {', '.join(printable(n, 24) for n in names)}",
                    2000,
                ),
                soft_wrap=True,
            )

    got: list[int] = []

    async def phase_run() -> final.FinalMarker:
        cancel_on_signals(got)
        while True:
            step = await final.play_step(
                engine,
                name,
                workers,
                lambda: run_pending(
                    engine, name, workers, on_done, executor, ray_address, final.FINAL_KEY
                ),
            )
            said(step)
            if step.marker is not None:
                return step.marker

    try:
        with store_errors():
            marker = asyncio.run(phase_run())
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise _fail(
            "interrupted: finished matches are saved; run `arena ladder final` again to go on",
            interrupted_code(got),
        ) from None
    except BotCannotStart as exc:
        raise _fail(
            f"{exc}; fix or retire it (`arena ladder retire`) and run `arena ladder final` again"
        ) from None
    except (ImageBuildError, SandboxUnavailable, RuntimeError) as exc:
        raise _fail(str(exc)) from None
    save_snapshot(engine, name)
    if as_json:
        print(json.dumps(marker.to_dict()))
    else:
        print_leaderboard(engine, name, False)
    console.print(_shown(f"ladder '{shown}' is final {marker.summary()}", 2000), soft_wrap=True)
