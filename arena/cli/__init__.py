"""The ``arena`` command.  One entry point, a subcommand per job, ``--help`` everywhere."""

from __future__ import annotations

import contextlib
import json
import secrets
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from bigtwo import OPTION_NAMES, PRESETS, RulesError, RuleSet

from ..demo import DemoPrinter, match_summary, play_match, standings_table
from ..rules_options import load_rules
from ..sandbox.base import SANDBOXES, SandboxUnavailable
from ..sandbox.images import ImageBuildError
from ..text import printable

app = typer.Typer(
    help="Big Two Arena: deal, referee and rate Big Two bots.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

RulesOpt = Annotated[
    str,
    typer.Option(
        "--rules",
        "-r",
        help=f"Preset ({', '.join(PRESETS)}) or a JSON file of rule options.",
    ),
]
# the time control, the same options wherever bots are refereed (TimeControl's fields)
MoveMsOpt = Annotated[int, typer.Option(min=1, help="Time allowed per move.")]
BankMsOpt = Annotated[int, typer.Option(min=0, help="Time bank per seat per match.")]
StartupMsOpt = Annotated[int, typer.Option(min=1, help="Time from launch to a bot's Hello.")]
MaxStrikesOpt = Annotated[int, typer.Option(min=1, help="Faults before a seat forfeits.")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        "-s",
        help="Override one rule option, OPTION=VALUE (repeatable), e.g. --set bombs=anywhere. "
        "See `arena rules` for every option.",
    ),
]


def _shown(text: object, limit: int = 300) -> Text:
    """Text someone else wrote (a bot's name or words, a file name, a record's contents),
    ready for a rich console or table: control characters made visible and length bounded
    (:func:`arena.text.printable`), and a :class:`~rich.text.Text`, so ``[blink]`` or
    ``[link=…]`` in it is shown as written, never read as markup."""
    return Text(printable(text, limit))


def _labelled(label: str, style: str, message: object, limit: int = 1000) -> Text:
    """``label`` in ``style``, then ``message`` shown as :func:`_shown` shows it."""
    return Text.assemble((label, style), " ", printable(message, limit))


def _fail(message: str, code: int = 2) -> typer.Exit:
    # messages quote file names, rules values, build logs and bots' words
    Console(stderr=True, soft_wrap=True, highlight=False).print(_labelled("error:", "red", message))
    return typer.Exit(code)


@app.command()
def demo(
    rules: RulesOpt = "hk",
    set_: SetOpt = None,
    seed: Annotated[int, typer.Option(help="Seed of the deals (and of the random players).")] = 7,
    hands: Annotated[
        int | None,
        typer.Option(min=1, help="Stop after this many hands even if the match is not over."),
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Show hands and scores only.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON only.")] = False,
) -> None:
    """Play a whole match between random players and show every deal, play and score.

    Example: arena demo --rules pusoy --seed 3 --set players=3
    """
    try:
        ruleset = load_rules(rules, set_ or ())
    except RulesError as exc:
        raise _fail(str(exc)) from None
    console = Console(quiet=as_json, highlight=False)
    console.print(
        _labelled(
            "Demo match",
            "bold",
            f"— rules {ruleset.preset_name or rules + ' (modified)'}, "
            f"seed {seed}, {ruleset.players} random players",
        )
    )
    try:
        game = play_match(ruleset, seed, hands, DemoPrinter(console, ruleset, not quiet))
    except KeyboardInterrupt:
        raise _fail("interrupted", 130) from None
    if as_json:
        sys.stdout.write(json.dumps(match_summary(game)) + "\n")
        return
    console.print(standings_table(game))
    if not game.match_over:
        console.print(f"(stopped after {len(game.results)} hands; the match was not over)")


@app.command("rules")
def show_rules(
    rules: RulesOpt = "hk",
    set_: SetOpt = None,
) -> None:
    """Print every rule option of a preset (with overrides applied) as JSON.

    Save the output to a file, edit it, and pass the file back with --rules FILE.
    """
    try:
        ruleset = load_rules(rules, set_ or ())
    except RulesError as exc:
        raise _fail(str(exc)) from None
    sys.stdout.write(json.dumps(ruleset.to_dict(), indent=2) + "\n")


@app.command()
def match(
    bots: Annotated[
        list[str],
        typer.Argument(
            help="One BOT per seat: a sample bot (random, greedy, heuristic), a folder with "
            "bot.py, or path/to/file.py[:Class].",
            show_default=False,
        ),
    ],
    rules: RulesOpt = "hk",
    set_: SetOpt = None,
    hands: Annotated[
        int | None,
        typer.Option(min=1, help="Play exactly this many hands (overrides the match end)."),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            help="Seed of the deals, for tests and replays only: a bot that knows the seed "
            "knows every hand. Default: a fresh secret seed (shown in the result).",
        ),
    ] = None,
    sandbox: Annotated[
        str,
        typer.Option(
            help="Where bots run: docker (a locked-down container each), process (own OS "
            "process, weaker isolation), auto (docker when an engine answers, else process), "
            "or inproc (trusted bots only)."
        ),
    ] = "auto",
    move_ms: MoveMsOpt = 1000,
    bank_ms: BankMsOpt = 10_000,
    startup_ms: StartupMsOpt = 15_000,
    max_strikes: MaxStrikesOpt = 3,
    memory_mb: Annotated[
        int | None,
        typer.Option(
            min=16,
            help="Memory per bot in MiB (docker: RAM, default 256; process: "
            "address space, default 1024).",
        ),
    ] = None,
    pids: Annotated[
        int | None, typer.Option(min=8, help="Processes and threads per bot (default 64).")
    ] = None,
    cpus: Annotated[
        float | None, typer.Option(min=0.1, help="CPUs per bot container (default 1.0).")
    ] = None,
    record: Annotated[
        Path | None, typer.Option(help="Write the match record (JSON Lines) to this file.")
    ] = None,
    listen: Annotated[
        str | None,
        typer.Option(
            help="Also listen on TCP HOST:PORT (port 0 picks one), for `remote` seats whose "
            "bots are started by hand. Unencrypted: use on a trusted network.",
        ),
    ] = None,
    logs: Annotated[
        Path | None,
        typer.Option(
            help="Keep what each bot printed (stdout and stderr, up to about 1 MiB per bot) "
            "in this folder as seat<N>-<bot>.log.",
        ),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the result as JSON only. In JSON (and records) hands and turns count "
            "from 0, as list indices; tables count hands from 1.",
        ),
    ] = False,
) -> None:
    """Referee a match between bots, each in its own sandbox, over gRPC.

    Example: arena match --rules hk --hands 8 --seed 1 random greedy heuristic my_bot.py

    A seat given as remote[:NAME] is played by a bot someone starts by hand; with
    --listen 0.0.0.0:50051 the arena prints the command that connects it.
    """
    import asyncio

    from ..bots import BotSpecError, resolve
    from ..match import failed_to_start, run_match
    from ..referee.session import TimeControl

    try:
        ruleset = load_rules(rules, set_ or ())
        if hands is not None:
            ruleset = ruleset.replace(match_end="hands", match_end_value=hands)
    except RulesError as exc:
        raise _fail(str(exc)) from None
    if sandbox not in SANDBOXES:
        raise _fail(f"--sandbox {sandbox!r}: choose one of {', '.join(SANDBOXES)}")
    if len(bots) != ruleset.players:
        raise _fail(f"{len(bots)} bots given for a {ruleset.players}-player game")
    try:
        specs = [resolve(b) for b in bots]
    except BotSpecError as exc:
        raise _fail(str(exc)) from None
    if any(sp.remote for sp in specs) and not listen:
        raise _fail("a remote seat needs --listen HOST:PORT")
    if record is not None and (record.is_dir() or not record.parent.is_dir()):
        raise _fail(f"--record {record}: not a writable file path")
    if logs is not None and logs.exists() and not logs.is_dir():
        raise _fail(f"--logs {logs}: not a folder")
    tc = TimeControl(
        move_ms=move_ms, bank_ms=bank_ms, startup_ms=startup_ms, max_strikes=max_strikes
    )
    if seed is None:  # unguessable: bots may try candidate seeds against their own cards
        seed = secrets.randbits(63)
    console = Console(quiet=as_json, highlight=False)
    printer = _HandPrinter(console, [s.name for s in specs])

    def show_remote(creds, name) -> None:  # type: ignore[no-untyped-def]
        Console(stderr=True, soft_wrap=True, highlight=False).print(
            _shown(
                f"seat {creds.seat} ({name}) waits {startup_ms / 1000:g} s for its bot: "
                f"python -m bigtwo.run BOT --address {creds.address} --match-id "
                f"{creds.match_id} --seat {creds.seat} --token {creds.token}",
                1000,
            )
        )

    from ..sandbox.base import choose_sandbox

    chosen = choose_sandbox(sandbox)  # once, and said: the first line may take a while
    err = Console(stderr=True, soft_wrap=True, highlight=False)
    err.print(
        _shown(
            f"starting {len(specs)} bots in the {chosen} sandbox"
            + (" (chosen by --sandbox auto)" if sandbox == "auto" else "")
            + "; the table begins when the first hand ends"
        )
    )
    if chosen == "process":
        _warn_host_packages(err, specs)
    got: list[int] = []

    async def guarded() -> dict:
        # Ctrl-C and SIGTERM cancel the match; run_match then stops every bot, closes the
        # record and removes the match folder before we exit.
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(sig) is not signal.SIG_IGN:
                loop.add_signal_handler(sig, lambda sig=sig: (got.append(sig), task.cancel()))
        return await run_match(
            specs,
            ruleset,
            seed,
            tc,
            chosen,
            record,
            on_hand_end=printer,
            listen_tcp=listen,
            on_remote=show_remote,
            limits={"memory_mb": memory_mb, "pids": pids, "cpus": cpus},
            all_must_start=True,  # a bot that cannot start stops it before the first hand
            log_dir=logs,
        )

    try:
        summary = asyncio.run(guarded())
    except OSError as exc:
        raise _fail(f"cannot run the referee: {exc}") from None
    except (ImageBuildError, SandboxUnavailable) as exc:
        raise _fail(str(exc)) from None
    except (KeyboardInterrupt, asyncio.CancelledError):
        code = 143 if got and got[-1] == signal.SIGTERM else 130
        raise _fail(
            "interrupted; every bot stopped"
            + (f"; the record so far is in {record} (arena replay checks it)" if record else ""),
            code,
        ) from None
    if as_json:
        sys.stdout.write(json.dumps(summary) + "\n")
    elif not summary.get("aborted"):
        _print_standings(console, summary)
        _print_faults(console, summary)
        _print_logs(console, summary)
        limits = ", ".join(f"{k} {v}" for k, v in summary.get("sandbox_limits", {}).items())
        chosen = " (chosen by --sandbox auto)" if sandbox == "auto" else ""
        console.print(
            _shown(f"sandbox: {summary['sandbox']}{chosen}; limits per bot: {limits}", 1000)
        )
    if summary["sandbox"] == "process":
        from ..sandbox.process import isolation_note

        note = isolation_note()
        if note:
            Console(stderr=True, soft_wrap=True, highlight=False).print(
                _labelled("warning:", "yellow", note)
            )
    failed = failed_to_start(summary)
    if failed:
        for s, detail in failed:
            Console(stderr=True, soft_wrap=True, highlight=False).print(
                _labelled(
                    "error:",
                    "red",
                    f"bot '{printable(s['bot'], 60)}' (seat {s['seat']}) failed to start: "
                    f"{printable(detail, 600)}"
                    + (f" (its output: {printable(s['log'], 300)})" if s.get("log") else ""),
                )
            )
        raise typer.Exit(3)


def _warn_host_packages(err: Console, specs: list) -> None:  # type: ignore[type-arg]
    """The process sandbox has only the standard library and the SDK: name, before it
    runs, each bot that imports another package (see :mod:`arena.bot_imports`)."""
    from ..bot_imports import process_sandbox_note

    for spec in {s.name: s for s in specs}.values():
        note = process_sandbox_note(spec)
        if note:
            err.print(_labelled("warning:", "yellow", note))


class _HandPrinter:
    """The live per-hand table of `arena match`."""

    def __init__(self, console: Console, names: list[str]) -> None:
        self.console = console
        self.names = [printable(n, 12) for n in names]
        self.header_done = False

    def __call__(self, session, result) -> None:  # type: ignore[no-untyped-def]
        if not self.header_done:
            self.console.print(
                Text("hand  winner        " + "".join(f"{n:>14}" for n in self.names))
            )
            self.header_done = True
        cells = "".join(
            f"{c:>+9d} ({s:>+3d})" for c, s in zip(result.cumulative, result.scores, strict=True)
        )
        winner = self.names[result.winner]
        self.console.print(Text(f"{result.hand + 1:>4}  {winner:<14}{cells}"))


def _print_standings(console: Console, summary: dict) -> None:
    from rich.table import Table

    table = Table(title=_shown(f"Match {summary['match_id']} — final standings"))
    for col in ("place", "seat", "bot", "score", "forfeit", "faults"):
        table.add_column(col, justify="right" if col in ("place", "seat", "score") else "left")
    if any(s["forfeit"] for s in summary["seats"]):
        # a forfeited seat's points are partly the fallback's: never ranked above a bot
        # that played its own (a ladder rates it last)
        table.caption = "—: forfeited, listed last (the fallback played its seat since)"
    playing = [s for s in summary["seats"] if not s["forfeit"]]  # placed among themselves
    for s in sorted(summary["seats"], key=lambda s: (s["forfeit"], s["place"], s["seat"])):
        kinds: dict[str, int] = {}
        for f in s["faults"]:
            kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
        faults = ", ".join(k if n == 1 else f"{k} ×{n}" for k, n in kinds.items())
        table.add_row(
            "—" if s["forfeit"] else str(1 + sum(o["place"] < s["place"] for o in playing)),
            str(s["seat"]),
            _shown(s["bot"], 30),
            f"{s['score']:+d}",
            "yes" if s["forfeit"] else "",
            faults,
        )
    console.print(table)


def _print_faults(console: Console, summary: dict, per_seat: int = 5) -> None:
    """Each seat's faults with their reasons (the exception and where in the author's
    files, the refusal of a move), the same fault repeated shown once with its count and
    where it happened; a reason may quote the bot, so it is escaped and capped."""
    seats = [s for s in summary["seats"] if s["faults"]]
    if not seats:
        return
    console.print("faults:")
    for s in seats:
        same: dict[tuple[str, str], list[dict]] = {}
        for f in s["faults"]:
            same.setdefault((f["kind"], f["detail"]), []).append(f)
        for (kind, detail), faults in list(same.items())[:per_seat]:
            places = [
                " ".join(
                    ([] if f["hand"] is None else [f"hand {f['hand'] + 1}"])
                    + ([] if f["turn"] is None else [f"turn {f['turn']}"])
                )
                or "outside a hand"
                for f in faults[:3]
            ]
            count = f" ×{len(faults)}" if len(faults) > 1 else ""
            more = ", …" if len(faults) > 3 else ""
            console.print(
                _shown(
                    f"  seat {s['seat']} {printable(s['bot'], 40)}: {kind}{count} "
                    f"({', '.join(places)}{more}): {printable(detail, 500)}",
                    700,
                )
            )
        if len(same) > per_seat:
            console.print(
                f"  seat {s['seat']}: {len(same) - per_seat} more different faults "
                "(--json lists all)"
            )


def _print_logs(console: Console, summary: dict) -> None:
    """Where each seat's output was kept (``arena match --logs``)."""
    seats = [s for s in summary["seats"] if s.get("log")]
    if not seats:
        return
    console.print("logs (what each bot printed):")
    for s in seats:
        try:
            size = f"{Path(s['log']).stat().st_size:,} bytes"
        except OSError:
            size = "missing"
        console.print(
            _shown(f"  seat {s['seat']} {printable(s['bot'], 40)}: {s['log']} ({size})", 700)
        )


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

            with ladder_record(db or "arena.db", int(record_file), ladder) as path:
                show_replay(path, console, step=step, quiet=quiet)  # type: ignore[arg-type]
        else:
            if db is not None or ladder is not None:
                raise _fail("--db and --ladder go with a ladder match id, not a record file")
            show_replay(Path(record_file), console, step=step, quiet=quiet)
    except RecordError as exc:
        raise _fail(str(exc), 1) from None
    except KeyboardInterrupt:
        raise _fail("interrupted", 130) from None


bot_app = typer.Typer(help="Bot images for the docker sandbox.", no_args_is_help=True)
sandbox_app = typer.Typer(help="Sandbox housekeeping.", no_args_is_help=True)
app.add_typer(bot_app, name="bot")
app.add_typer(sandbox_app, name="sandbox")


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
    import shutil
    import tempfile

    from ..sandbox.containers import docker_client, match_alive, remove_leftovers

    console = Console(highlight=False)
    client = docker_client(timeout=5)
    removed = remove_leftovers(client) if client is not None else []
    console.print(
        f"containers removed: {len(removed)}"
        + ("" if client is not None else " (no Docker engine answers)")
    )
    folders = [f for f in Path(tempfile.gettempdir()).glob("arena-*") if not match_alive(f)]
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    console.print(f"match folders removed: {len(folders)} (running matches are left alone)")
    from ..sandbox.process import remove_leftover_cgroups

    console.print(f"control groups removed: {len(remove_leftover_cgroups())}")


ladder_app = typer.Typer(help="Ladders: duplicate round-robin and ratings.", no_args_is_help=True)
app.add_typer(ladder_app, name="ladder")


def _ladder_setup(
    db: str,
    name: str,
    ruleset: RuleSet | None,
    settings: dict | None,
    bots: list[str],
    refused: list | None = None,
):  # type: ignore[no-untyped-def]
    """Open the database, find or create the ladder, enter the bots; returns the engine.

    With ``refused`` (a list to fill), each bot new to the ladder is first checked
    (:mod:`arena.validation`: one hand against copies of itself, in the ladder's sandbox
    and time control); one that cannot start or forfeits is not entered, and its
    :class:`~arena.validation.Validation` is appended to ``refused``."""
    from sqlalchemy import select
    from sqlalchemy.exc import SQLAlchemyError
    from sqlalchemy.orm import Session

    from ..bots import BotSpecError, bot_digest, bot_files
    from ..bots import resolve as resolve_bot
    from ..ladder.store import Entry, Ladder, add_version, open_engine

    try:
        engine = open_engine(db)
    except SQLAlchemyError as exc:
        raise _fail(f"--db {db}: {str(exc).splitlines()[0]}") from None
    try:
        specs = [resolve_bot(b) for b in bots]
        digests = [None if s.remote else bot_digest(bot_files(s)) for s in specs]
    except BotSpecError as exc:
        raise _fail(str(exc)) from None
    if any(s.remote for s in specs):
        raise _fail("a ladder cannot hold remote seats")
    with Session(engine) as session, session.begin():
        ladder = session.scalar(select(Ladder).where(Ladder.name == name))
        if ladder is None:
            if ruleset is None or settings is None:
                from .admin import ladder_names, no_ladder

                raise _fail(no_ladder(name, ladder_names(session), db))
            ladder = Ladder(name=name, rules=ruleset.to_dict(), settings=settings)
            session.add(ladder)
            session.flush()
        elif ruleset is not None and ladder.rules != ruleset.to_dict():
            raise _fail(f"ladder {name!r} plays other rules; give another --name")
        ladder_rules, ladder_settings = ladder.rules, dict(ladder.settings)
        new = [
            (spec, digest)
            for spec, digest in zip(specs, digests, strict=True)
            if not _entered(session, ladder.id, spec.name, digest)
        ]
    pairs = list(zip(specs, digests, strict=True))
    if refused is not None and new:
        bad = _check_bots([s for s, _ in new], RuleSet.from_dict(ladder_rules), ladder_settings)
        refused.extend(bad)
        names = {v.bot.name for v in bad}
        pairs = [(s, d) for s, d in pairs if s.name not in names]
    with Session(engine) as session, session.begin():
        ladder = session.scalar(select(Ladder).where(Ladder.name == name))
        for spec, digest in pairs:
            version = add_version(session, spec.name, spec.runner_spec, digest)

            exists = session.scalar(
                select(Entry).where(Entry.ladder_id == ladder.id, Entry.version_id == version.id)
            )
            if exists is None:
                session.add(Entry(ladder_id=ladder.id, version_id=version.id))
    return engine


def _entered(session, ladder_id: int, bot: str, digest: str | None) -> bool:  # type: ignore[no-untyped-def]
    """Whether this version of ``bot`` (its source hash) is already in the ladder."""
    from sqlalchemy import select

    from ..ladder.store import Bot, BotVersion, Entry

    return (
        session.scalar(
            select(Entry.id)
            .join(BotVersion, Entry.version_id == BotVersion.id)
            .join(Bot, BotVersion.bot_id == Bot.id)
            .where(Entry.ladder_id == ladder_id, Bot.name == bot, BotVersion.source_hash == digest)
        )
        is not None
    )


def _check_bots(specs: list, rules: RuleSet, settings: dict) -> list:  # type: ignore[type-arg]
    """Check each bot that needs it (:func:`arena.validation.validate`) in the ladder's
    sandbox and time control, one after the other with a line each on stderr; returns the
    refused ones' Validations.  A sandbox that cannot run at all is the organizer's error,
    not the bot's: it ends the command."""
    import asyncio

    from ..referee.session import TimeControl
    from ..validation import needs_check, validate

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    tc = TimeControl(**settings.get("time_control", {}))
    refused = []
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


def _probability(p: float) -> str:
    return ">0.999" if p >= 0.9995 else "<0.001" if p < 0.0005 else f"{p:.3f}"


def _print_leaderboard(  # type: ignore[no-untyped-def]
    engine, name: str, as_json: bool, matrix: bool = False, all_: bool = False
) -> None:
    from rich.table import Table
    from sqlalchemy.orm import Session

    from ..ladder.ratings import SEPARATED_P
    from ..ladder.runner import leaderboard

    with Session(engine) as session:
        _, rows = leaderboard(session, name, retired=all_)
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    table = Table(
        title=_shown(f"Ladder {printable(name, 60)}: Elo ± 95% (Plackett–Luce on deal blocks)")
    )
    for col in (
        "#",
        "bot",
        "Elo",
        "95%",
        "OpenSkill",
        "matches",
        "pts/hand",
        "1st",
        "faults",
        "forfeits",
        "next",
    ):
        table.add_column(col, justify="left" if col == "bot" else "right", no_wrap=True)
    rated = [r for r in rows if r["rated"]]
    for r in rows:
        if not r["rated"]:  # entered, no rating yet: listed, never ranked
            note = "— not yet played" if not r["matches"] else "— no complete deal yet"
            bot = _shown(r["bot"], 30)
            if r["retired"]:
                bot.append(" (retired)", style="dim")
            table.add_row("", bot, note, "", "", str(r["matches"]), *[""] * 5)
            continue
        bot = _shown(r["bot"], 30)
        if r["retired"]:
            bot.append(" (retired)", style="dim")
        table.add_row(
            str(r["rank"]),
            bot,
            f"{r['elo']:+.0f}",
            f"{r['elo_low']:+.0f}..{r['elo_high']:+.0f}" if r["in_field"] else "unbounded*",
            f"{r['openskill']:.1f}",
            str(r["matches"]),
            f"{r['points_per_hand']:+.2f}" if r["points_per_hand"] is not None else "-",
            str(r["first_places"]),
            str(r["faults"]),
            str(r["forfeits"]),
            "" if r is rated[-1] else ">" if r["separated_from_next"] else "~",
        )
    console = Console(highlight=False, width=max(120, Console().width))
    console.print(table)
    console.print(
        f"next: > separated from the next: P(stronger than it) ≥ {SEPARATED_P} (95% interval "
        "of the Elo difference excludes 0); ~ not yet"
    )
    if matrix and len(rated) > 1:
        grid = Table(title="P(row stronger than column)", caption=f"* separated: P ≥ {SEPARATED_P}")
        grid.add_column("", no_wrap=True)
        for r in rated:
            grid.add_column(_shown(r["bot"], 30), justify="right", no_wrap=True)
        for r in rated:
            cells = []
            for o in rated:
                p = 0.5 if o is r else r["superiority"][o["bot"]]
                mark = "*" if o is not r and p >= SEPARATED_P else ""
                cells.append("" if o is r else _probability(p) + mark)
            grid.add_row(_shown(r["bot"], 30), *cells)
        console.print(grid)
    if any(r["retired"] for r in rows):
        console.print("(retired): no new matches; its finished ones count for everyone's ratings")
    if any(r["forfeits"] for r in rows):
        console.print(
            "forfeits: seats a bot lost to faults; from then on a fallback played them, and "
            "the ratings count those hands as last place"
        )
    if not all(r["in_field"] for r in rated):
        console.print(
            "* has finished behind (or ahead of) part of the field in every block so far: "
            "no finite rating yet; the mean anchor leaves it out"
        )


def _top(engine, name: str, n: int = 3) -> str:  # type: ignore[no-untyped-def]
    """The live top of the leaderboard, for the progress line."""
    from sqlalchemy.orm import Session

    from ..ladder.runner import leaderboard

    try:
        with Session(engine) as session:
            _, rows = leaderboard(session, name)
    except Exception:  # never let the live view stop a ladder
        return "matches"
    rows = [r for r in rows if r["rated"]]
    if not rows:
        return "matches"
    return "  ".join(f"{r['rank']}. {printable(r['bot'], 24)} {r['elo']:+.0f}" for r in rows[:n])


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
            help="Matches per group of four, in all: a run plays what is missing, so run "
            "again with a larger --rounds to add matches.",
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
    check: Annotated[
        bool,
        typer.Option(
            "--check/--no-check",
            help="Check each new bot first (one hand against copies of itself) and refuse "
            "one that cannot start or forfeits. --no-check enters bots unchecked; a bot that "
            "then cannot start still stops the ladder, unrated.",
        ),
    ] = True,
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
    from sqlalchemy.orm import Session

    from ..ladder.duplicate import ROTATIONS
    from ..ladder.runner import plan, run_pending

    if executor not in ("local", "ray"):
        raise _fail(f"--executor {executor!r}: choose local or ray")
    if rotations not in ROTATIONS:
        raise _fail(f"--rotations {rotations}: choose 4, 12 or 24")
    if sandbox not in SANDBOXES:
        raise _fail(f"--sandbox {sandbox!r}: choose one of {', '.join(SANDBOXES)}")
    try:
        ruleset = load_rules(rules, set_ or ())
    except RulesError as exc:
        raise _fail(str(exc)) from None
    if ruleset.players != 4 and rotations != ruleset.players:
        raise _fail(f"--rotations must be {ruleset.players} with {ruleset.players} players")
    settings = {
        "deals": deals,
        "rotations": rotations,
        "sandbox": sandbox,
        "time_control": {  # a new ladder's; an existing one keeps its own
            "move_ms": move_ms,
            "bank_ms": bank_ms,
            "startup_ms": startup_ms,
            "max_strikes": max_strikes,
        },
    }
    if not bots:
        from pathlib import Path as _Path

        from sqlalchemy import create_engine, inspect

        from ..bots import sample_names
        from ..ladder.store import database_url

        fresh = "://" not in db and not _Path(db).exists()
        if not fresh:
            probe = create_engine(database_url(db))
            try:
                fresh = not inspect(probe).has_table("ladders")
            finally:
                probe.dispose()
        if fresh:  # a new ladder with no bots named: the sample bots
            bots = sample_names()
    refused: list = []
    engine = _ladder_setup(db, name, ruleset, settings, bots or [], refused if check else None)
    from sqlalchemy import func, select

    from ..ladder.store import Ladder, Match
    from ..sandbox.base import choose_sandbox

    with Session(engine) as session, session.begin():
        ladder = session.scalar(select(Ladder).where(Ladder.name == name))
        try:
            plan(session, ladder, rounds)
        except ValueError as exc:
            raise _fail(str(exc)) from None
        pending = session.scalar(
            select(func.count())
            .select_from(Match)
            .where(Match.ladder_id == ladder.id, Match.status != "done")
        )
        asked = ladder.settings.get("sandbox", "auto")
    console = Console(stderr=as_json, highlight=False)
    tty = console.is_terminal  # else plain lines: a log file gets one per match
    chosen = choose_sandbox(asked)
    workers = jobs or os.cpu_count() or 1
    if chosen == "process" and bots:
        from ..bots import BotSpecError
        from ..bots import resolve as resolve_bot

        with contextlib.suppress(BotSpecError):  # named and refused above already
            _warn_host_packages(
                Console(stderr=True, soft_wrap=True, highlight=False),
                [resolve_bot(b) for b in bots],
            )
    console.print(
        _shown(
            f"{pending} match(es) to play, {workers} at a time; sandbox: {chosen}"
            + (" (chosen by --sandbox auto)" if asked == "auto" else "")
            + ("; the first match ends after its bots start (and images build)" if pending else "")
        ),
        soft_wrap=True,
    )
    if not pending:
        console.print(
            _shown(
                f"nothing to play: every group has its {rounds} match(es) (--rounds is a "
                f"total); run with --rounds {rounds + 1} or more to add matches"
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
        task = progress.add_task("starting bots…", total=pending or None, rate="")

        def on_done(done: int, total: int, _summary: dict) -> None:
            minutes = (time.monotonic() - started) / 60
            rate = done / minutes if minutes > 0 else 0.0
            top = _top(engine, name)
            progress.update(
                task, completed=done, total=total, description=top, rate=f"{rate:.1f}/min"
            )
            if not tty:
                left = (total - done) / rate if rate > 0 else 0.0
                console.print(
                    _shown(
                        f"match {done}/{total} done, {rate:.1f} matches/min, about "
                        f"{left:.0f} min left; top: {top}",
                        1000,
                    ),
                    soft_wrap=True,
                )

        got: list[int] = []

        async def guarded() -> int:
            # Ctrl-C and SIGTERM cancel the run (asyncio.run alone knows only Ctrl-C: a
            # SIGTERM killed the process and left its containers); the matches in flight
            # stop their bots, the finished ones stay saved
            loop = asyncio.get_running_loop()
            me = asyncio.current_task()
            assert me is not None
            for sig in (signal.SIGINT, signal.SIGTERM):
                if signal.getsignal(sig) is not signal.SIG_IGN:
                    loop.add_signal_handler(sig, lambda sig=sig: (got.append(sig), me.cancel()))
            return await run_pending(engine, name, workers, on_done, executor, ray_address)

        try:
            asyncio.run(guarded())
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise _fail(
                "interrupted: finished matches are saved; run again to go on",
                143 if got and got[-1] == signal.SIGTERM else 130,
            ) from None
        except (ImageBuildError, SandboxUnavailable, RuntimeError) as exc:
            raise _fail(str(exc)) from None
    from ..ladder.runner import snapshot

    with Session(engine) as session, session.begin():
        snapshot(session, name)
    _print_leaderboard(engine, name, as_json)
    if refused:  # said when checked; said again where the organizer looks last
        Console(stderr=True, highlight=False, soft_wrap=True).print(
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
    db: Annotated[str, typer.Option(help="SQLite file or database URL.")] = "arena.db",
    check: Annotated[
        bool,
        typer.Option(
            "--check/--no-check",
            help="Check each new bot first (one hand against copies of itself) and refuse "
            "one that cannot start or forfeits. --no-check enters bots unchecked; a bot that "
            "then cannot start still stops the ladder, unrated.",
        ),
    ] = True,
) -> None:
    """Enter bots in an existing ladder; the next `arena ladder run` schedules their matches
    against the field. A changed bot is a new version with its own rating.

    Each new bot is first checked: one hand against copies of itself, in the ladder's
    sandbox and time control. A bot that cannot start or forfeits is refused with its
    error and not entered (exit 3); the others are entered."""
    from pathlib import Path as _Path

    if "://" not in db and not _Path(db).exists():
        raise _fail(f"--db {db}: no such database (create the ladder with `arena ladder run`)")
    refused: list = []
    _ladder_setup(db, name, None, None, bots, refused if check else None)
    entered = len(bots) - len(refused)
    Console(highlight=False).print(
        _shown(f"entered {entered} bot(s) in ladder '{printable(name, 60)}'")
    )
    if refused:
        raise _fail(
            f"refused {len(refused)} bot(s): "
            + ", ".join(v.bot.name for v in refused)
            + " (the reasons are above); fix and add again",
            3,
        )


@ladder_app.command("export")
def ladder_export(
    name: Annotated[str, typer.Option(help="Ladder name.")] = "default",
    db: Annotated[str, typer.Option(help="SQLite file or database URL.")] = "arena.db",
    csv_: Annotated[bool, typer.Option("--csv", help="CSV (the default is JSON).")] = False,
) -> None:
    """Every finished deal block (match, deal, seed, bot, points over its rotations), for
    analysis elsewhere: JSON lines, or CSV with --csv."""
    import csv
    from pathlib import Path as _Path

    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from ..ladder.store import BotVersion, DealResult, Ladder, Match

    if "://" not in db and not _Path(db).exists():
        raise _fail(f"--db {db}: no such database")
    engine = _ladder_setup(db, name, None, None, [])
    with Session(engine) as session:
        ladder = session.scalar(select(Ladder).where(Ladder.name == name))
        labels = {v.id: v.label for v in session.scalars(select(BotVersion))}
        rows = session.execute(
            select(Match.id, DealResult.index, DealResult.seed, DealResult.totals)
            .join(Match)
            .where(Match.ladder_id == ladder.id)
            .order_by(Match.id, DealResult.index)
        ).all()
    records = [
        {"match": m, "deal": i, "seed": seed, "bot": labels.get(int(v), v), "points": pts}
        for m, i, seed, totals in rows
        for v, pts in totals.items()
    ]
    if csv_:  # text for people and spreadsheets: names made harmless (JSON escapes its own)
        for r in records:
            r["bot"] = printable(r["bot"], 200)
        writer = csv.DictWriter(sys.stdout, fieldnames=["match", "deal", "seed", "bot", "points"])
        writer.writeheader()
        writer.writerows(records)
    else:
        for r in records:
            sys.stdout.write(json.dumps(r) + "\n")


@ladder_app.command("show")
def ladder_show(
    name: Annotated[str, typer.Option(help="Ladder name.")] = "default",
    db: Annotated[str, typer.Option(help="SQLite file or database URL.")] = "arena.db",
    as_json: Annotated[
        bool, typer.Option("--json", help="The leaderboard as one JSON list on stdout.")
    ] = False,
    matrix: Annotated[
        bool,
        typer.Option(
            "--matrix", help="Also print P(row bot stronger than column bot) for every pair."
        ),
    ] = False,
    all_: Annotated[bool, typer.Option("--all", help="Also the retired bots (marked).")] = False,
) -> None:
    """Print a ladder's leaderboard (rank, bot, Elo ± 95% interval, matches, ...).

    The "next" column and --matrix share one criterion: two bots are separated
    when P(one stronger than the other) ≥ 0.975 by the ratings' normal
    approximation (the 95% interval of their Elo difference excludes 0).
    Bots entered but not rated yet are listed last ("not yet played").
    Retired bots are hidden unless --all; their matches still count for
    everyone's ratings.

    --json prints a list in rank order, then the unrated (`rated` false,
    `rank` null); each object also holds `superiority` (for every other bot,
    the probability that this one is stronger) and `retired`."""
    from pathlib import Path as _Path

    if "://" not in db and not _Path(db).exists():
        raise _fail(f"--db {db}: no such database")
    engine = _ladder_setup(db, name, None, None, [])
    _print_leaderboard(engine, name, as_json, matrix, all_)


class _CompareCommand(typer.core.TyperCommand):
    """`arena compare` as a command: click's own usage errors (an unknown option, a value of
    the wrong type or out of range, a missing argument) exit with compare's bad-input code
    (64) rather than click's 2, which compare's verdicts use for "undecided"; with --json
    they also print compare's error object on stdout."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        from ..ladder.compare import EXIT_BAD_INPUT

        # click's UsageError: typer ≥ 0.22 raises that of its own copy of click
        usage_error = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
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
        EXIT_INTERRUPTED,
        EXIT_TERMINATED,
        EXIT_UNAVAILABLE,
        Forfeited,
        decide,
        match_samples,
        plan_budget,
        verdict,
    )
    from ..ladder.sprt import SPRT
    from ..referee.session import TimeControl

    if sandbox not in SANDBOXES:
        raise _compare_fail(
            f"--sandbox {sandbox!r}: choose one of {', '.join(SANDBOXES)}",
            EXIT_BAD_INPUT,
            as_json,
            "bad input",
        )
    try:
        ruleset = load_rules(rules, set_ or ())
        test = SPRT(elo0=elo0, elo1=elo1, alpha=alpha, beta=beta)
        tc = TimeControl(
            move_ms=move_ms, bank_ms=bank_ms, startup_ms=startup_ms, max_strikes=max_strikes
        )
        specs = [resolve(new), resolve(old)]
        pool = [resolve(o) for o in (opponents or ["random", "greedy", "heuristic"])]
    except (RulesError, BotSpecError, ValueError) as exc:
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
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(sig) is not signal.SIG_IGN:
                loop.add_signal_handler(sig, lambda sig=sig: (got.append(sig), task.cancel()))
        console.print(_shown(plan.summary(batch), 1000))
        if plan.warning:
            Console(stderr=True, soft_wrap=True, highlight=False).print(
                _labelled("warning:", "yellow", plan.warning)
            )
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
        code = EXIT_TERMINATED if got and got[-1] == signal.SIGTERM else EXIT_INTERRUPTED
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


from . import admin  # noqa: E402, F401  (registers ladder list, faults, retire, plot)


def _expand_bots(argv: list[str]) -> list[str]:
    """`--bots a b c` (as a shell glob gives) → `a b c` as arguments."""
    out: list[str] = []
    taking = False
    for arg in argv:
        if arg == "--bots":
            taking = True
            continue
        if taking and arg.startswith("-"):
            taking = False
        out.append(arg)
    return out


def _raise_descriptor_limit() -> None:
    """Open-files soft limit up to the hard limit (often 1024 of 4096+): the referee's
    descriptors are bounded by its gates, but its sandboxes and clients need room too."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for target in [hard] if hard != resource.RLIM_INFINITY else [1 << 20, 1 << 16]:
        if target > soft:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
                return
            except (ValueError, OSError):
                continue


def _show_progress_notes() -> None:
    """What the library says a person is waiting for (logger ``arena.progress``: an image
    building, ...) goes to stderr as plain lines, bot names escaped — stdout stays the
    command's result (JSON for scripts)."""
    import logging

    class Plain(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            return printable(record.getMessage(), 500)

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(Plain())
    notes = logging.getLogger("arena.progress")
    notes.addHandler(handler)
    notes.setLevel(logging.INFO)
    notes.propagate = False


def main() -> None:
    _raise_descriptor_limit()
    sys.argv[1:] = _expand_bots(sys.argv[1:])
    _show_progress_notes()
    from ..help_text import tidy

    tidy(typer.main.get_command(app))(prog_name="arena")


__all__ = ["OPTION_NAMES", "RuleSet", "app", "main"]
