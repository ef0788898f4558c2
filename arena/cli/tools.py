"""``arena replay``, ``arena bot build`` and ``arena sandbox gc``: a record checked and
shown, a bot's image, and the clean-up after killed runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ..sandbox.images import ImageBuildError
from .common import _fail, _shown, app, bot_app, sandbox_app


@app.command()
def replay(
    record_file: Annotated[
        str,
        typer.Argument(
            metavar="RECORD",
            help="A match record (JSON Lines), as `arena match --record` writes, or a ladder "
            "match id (digits, when no file has that name; see `arena ladder faults`).",
        ),
    ],
    step: Annotated[
        bool,
        typer.Option(
            help="Stop after every move: Enter next move, n next hand, c to the end, q quit, "
            "? help. Ctrl-D (end of input) stops like q."
        ),
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Only check; show nothing but the verdict.")
    ] = False,
    db: Annotated[
        str | None,
        typer.Option(help="With a match id: the ladder database (default arena.db)."),
    ] = None,
    ladder: Annotated[
        str | None, typer.Option(help="With a match id: the ladder it must belong to.")
    ] = None,
) -> None:
    """Replay a recorded match and check every deal, move and score with the engine.

    Example: arena replay --step m.jsonl
    (after: arena match --record m.jsonl random greedy heuristic random)
    A ladder match by its id: arena replay 42 --db arena.db
    (its record is kept compressed in the ladder's database; its hands are shown
    as one game in deal order: each deal in every seat rotation, then the next)

    Shows the match header (bots per seat, rules, match id), then for each hand
    every seat's dealt cards (weakest first), each move with its bot's name and
    the referee's turn id, passes, who won each trick and leads next, faults
    where they happened, and the hand's result with running totals.
    Hands are numbered from 1 (the record's "hand" field counts from 0);
    seats from 0, in the order the bots were given to `arena match`.

    Exit code 0 when everything agrees with the engine (or you quit --step),
    1 when not (the error names the record's line), 130 on Ctrl-C.
    """
    from ..record import RecordError
    from ..replay_view import show_replay

    if step and quiet:
        raise _fail("--step shows every move; --quiet shows none: give one of them")
    console = Console(highlight=False)
    try:
        if record_file.isdigit() and (db is not None or not Path(record_file).exists()):
            from .admin import ladder_record

            events, name = ladder_record(db or "arena.db", int(record_file), ladder)
            show_replay(name, console, step=step, quiet=quiet, events=events)
        else:
            if db is not None or ladder is not None:
                raise _fail("--db and --ladder go with a ladder match id, not a record file")
            show_replay(Path(record_file), console, step=step, quiet=quiet)
    except RecordError as exc:
        raise _fail(str(exc), 1) from None
    except KeyboardInterrupt:
        raise _fail("interrupted", 130) from None


@bot_app.command("build")
def bot_build(
    path: Annotated[
        str,
        typer.Argument(
            help="A bot folder (bot.py + optional requirements.txt) or path/to/file.py[:Class]."
        ),
    ],
    name: Annotated[str | None, typer.Option(help="Image name (default: the bot's).")] = None,
    version: Annotated[str, typer.Option(help="Version label of the image.")] = "1",
    base: Annotated[
        str, typer.Option(help="Base image (build it offline with docker/make-base-image.sh).")
    ] = "python:3.11-slim",
) -> None:
    """Build (or find in the cache) the Docker image of a bot.

    The SDK and the bot's requirements are installed from wheels prepared on this machine,
    so the image build needs no network. An unchanged bot is a cache hit.
    """
    from dataclasses import replace

    from ..bots import BotSpecError, resolve
    from ..sandbox.containers import docker_client
    from ..sandbox.images import ImageBuilder

    try:
        spec = resolve(path)
    except BotSpecError as exc:
        raise _fail(str(exc)) from None
    if spec.remote:
        raise _fail("a remote seat has no image")
    if name:
        spec = replace(spec, name=name)
    client = docker_client()
    if client is None:
        raise _fail("no Docker engine answers (is dockerd running?)")
    try:
        image = ImageBuilder(client, base).ensure(spec, version=version)
    except ImageBuildError as exc:
        raise _fail(str(exc)) from None
    Console(highlight=False).print(_shown(f"{image.tag} ({'cached' if image.cached else 'built'})"))


@sandbox_app.command("gc")
def sandbox_gc() -> None:
    """Remove what a crashed or killed run left behind: the arena's containers, its match
    folders, and the process sandbox's control groups."""
    from ..sandbox.gc import collect

    done = collect()
    console = Console(highlight=False)
    console.print(
        f"containers removed: {done.containers or 0}"
        + ("" if done.containers is not None else " (no Docker engine answers)")
    )
    console.print(f"match folders removed: {done.folders} (running matches are left alone)")
    console.print(f"control groups removed: {done.cgroups}")
