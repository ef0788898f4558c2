"""``arena demo``, ``arena rules`` and ``arena match``: one match, and how its result is
shown (the live per-hand table, the standings, each seat's faults and logs)."""

from __future__ import annotations

import json
import secrets
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from ..bots import unique_names
from ..demo import DemoPrinter, match_summary, play_match, standings_table
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
    rules_or_fail,
    time_control,
    warn_host_packages,
)
from .options import (
    BankMsOpt,
    InsecureOpt,
    MaxStrikesOpt,
    MoveMsOpt,
    RulesOpt,
    SetOpt,
    StartupMsOpt,
    TlsDirOpt,
    TlsNameOpt,
)

if TYPE_CHECKING:  # the CLI imports the rest lazily (its start stays quick)
    from ..referee.results import Fault, MatchResult


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
    ruleset = rules_or_fail(rules, set_)
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
    ruleset = rules_or_fail(rules, set_)
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
            "bots are started by hand. It speaks TLS with the arena's own CA (see --tls-dir, "
            "--tls-name); plain TCP only with --insecure.",
        ),
    ] = None,
    insecure: InsecureOpt = False,
    tls_dir: TlsDirOpt = None,
    tls_name: TlsNameOpt = None,
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
    --listen 0.0.0.0:50051 the arena prints the command that connects it (over TLS: with
    --ca and the arena's CA certificate, whose fingerprint it prints).
    """
    import asyncio

    from ..bots import BotSpecError, resolve
    from ..match import failed_to_start, run_match
    from ..sandbox.backends import choose_sandbox

    try:
        ruleset = game_options(rules, set_, sandbox, hands)
    except BadOptions as exc:
        raise _fail(str(exc)) from None
    if len(bots) != ruleset.players:
        raise _fail(f"{len(bots)} bots given for a {ruleset.players}-player game")
    try:
        specs = [resolve(b) for b in bots]
    except BotSpecError as exc:
        raise _fail(str(exc)) from None
    if any(sp.remote for sp in specs) and not listen:
        raise _fail("a remote seat needs --listen HOST:PORT")
    if listen is not None:
        host, sep, port_text = listen.rpartition(":")
        if not sep or not host or not port_text.isdigit() or int(port_text) > 65535:
            raise _fail(f"--listen {listen!r}: expected HOST:PORT, e.g. 127.0.0.1:50051")
    if (tls_dir is not None or tls_name) and (not listen or insecure):
        raise _fail("--tls-dir and --tls-name need --listen (without --insecure)")
    remote = _RemoteDoor(listen, insecure, tls_dir, tls_name or []) if listen else None
    if record is not None and (record.is_dir() or not record.parent.is_dir()):
        raise _fail(f"--record {record}: not a writable file path")
    if logs is not None and logs.exists() and not logs.is_dir():
        raise _fail(f"--logs {logs}: not a folder")
    tc = time_control(move_ms, bank_ms, startup_ms, max_strikes)
    if seed is None:  # unguessable: bots may try candidate seeds against their own cards
        seed = secrets.randbits(63)
    console = Console(quiet=as_json, highlight=False)
    printer = _HandPrinter(console, unique_names(specs))  # as the standings name seats

    def show_remote(creds: Any, name: str) -> None:
        assert remote is not None
        remote.announce()
        _err().print(
            _shown(
                f"seat {creds.seat} ({name}) waits {startup_ms / 1000:g} s for its bot: "
                f"python -m bigtwo.run BOT --address {remote.dial(creds.address)} --match-id "
                f"{creds.match_id} --seat {creds.seat} --token={creds.token}"
                + (f" --ca {shlex.quote(str(remote.files.ca))}" if remote.files else ""),
                1000,
            )
        )

    chosen = choose_sandbox(sandbox)  # once, and said: the first line may take a while
    err = _err()
    err.print(
        _shown(
            f"starting {len(specs)} bots in the {chosen} sandbox"
            + (" (chosen by --sandbox auto)" if sandbox == "auto" else "")
            + "; the table begins when the first hand ends"
        )
    )
    if chosen == "process":
        warn_host_packages(err, specs)
    got: list[int] = []

    async def guarded() -> MatchResult:
        # Ctrl-C and SIGTERM cancel the match; run_match then stops every bot, closes the
        # record and removes the match folder before we exit.
        cancel_on_signals(got)
        return await run_match(
            specs,
            ruleset,
            seed,
            tc,
            chosen,
            record,
            on_hand_end=printer,
            listen_tcp=listen,
            listen_tls=remote.context if remote else None,
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
        code = interrupted_code(got)
        raise _fail(
            "interrupted; every bot stopped"
            + (f"; the record so far is in {record} (arena replay checks it)" if record else ""),
            code,
        ) from None
    if as_json:
        sys.stdout.write(json.dumps(summary.to_json()) + "\n")
    elif not summary.aborted:
        _print_standings(console, summary)
        _print_faults(console, summary)
        _print_logs(console, summary)
        limits = ", ".join(f"{k} {v}" for k, v in (summary.sandbox_limits or {}).items())
        chosen = " (chosen by --sandbox auto)" if sandbox == "auto" else ""
        console.print(_shown(f"sandbox: {summary.sandbox}{chosen}; limits per bot: {limits}", 1000))
    if summary.sandbox == "process":
        from ..sandbox.process import isolation_note

        note = isolation_note()
        if note:
            _err().print(_labelled("warning:", "yellow", note))
    failed = failed_to_start(summary)
    if failed:
        for s, detail in failed:
            _err().print(
                _labelled(
                    "error:",
                    "red",
                    f"bot '{printable(s.bot, 60)}' (seat {s.seat}) failed to start: "
                    f"{printable(detail, 600)}"
                    + (f" (its output: {printable(s.log, 300)})" if s.log else ""),
                )
            )
        raise typer.Exit(3)


class _RemoteDoor:
    """``--listen``'s TLS (unless ``--insecure``): the CA and server certificate made or
    found before the match, what the join command must say, and the notice shown once."""

    def __init__(self, listen: str, insecure: bool, folder: Path | None, names: list[str]):
        from ..referee import tls

        self.host = listen.rpartition(":")[0].strip("[]")
        self.names = names
        self.files: Any = None
        self.context: Any = None
        self.told = False
        if insecure:
            return
        try:
            self.files = tls.ensure(
                folder or tls.default_folder(), tls.server_names(self.host, names)
            )
            self.context = tls.server_context(self.files)
        except tls.TlsError as exc:
            raise _fail(str(exc)) from None

    def dial(self, address: str) -> str:
        """The address a student dials: a wildcard listen is dialled by the first
        --tls-name, else (TLS) by this machine's name, which the certificate covers."""
        host, _, port = address.rpartition(":")
        if host.strip("[]") not in ("0.0.0.0", "::", ""):
            return address
        if self.names:
            name = self.names[0]
        elif self.files is not None:
            name = next(
                (n for n in self.files.names if n not in ("localhost", "127.0.0.1", "::1")),
                "localhost",
            )
        else:
            return address
        return f"[{name}]:{port}" if ":" in name else f"{name}:{port}"

    def announce(self) -> None:
        if self.told:
            return
        self.told = True
        err = _err()
        if self.files is None:
            err.print(
                _labelled(
                    "warning:",
                    "yellow",
                    "--insecure: remote seats connect over plain TCP, unencrypted — anyone on "
                    "the network can read each seat's token and cards, and take its seat",
                )
            )
            return
        err.print(
            _shown(
                f"remote seats speak TLS: give each student the arena's CA certificate "
                f"{self.files.ca} (public; SHA-256 fingerprint {self.files.fingerprint}) — "
                "they check the fingerprint and run the command below with --ca pointing "
                "at their copy",
                1000,
            )
        )


class _HandPrinter:
    """The live per-hand table of `arena match`."""

    def __init__(self, console: Console, names: list[str]) -> None:
        self.console = console
        self.names = [printable(n, 12) for n in names]
        self.header_done = False

    def __call__(self, session: Any, result: Any) -> None:
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


def _print_standings(console: Console, summary: MatchResult) -> None:
    from rich.table import Table

    table = Table(title=_shown(f"Match {summary.match_id} — final standings"))
    for col in ("place", "seat", "bot", "score", "forfeit", "faults"):
        table.add_column(col, justify="right" if col in ("place", "seat", "score") else "left")
    if any(s.forfeit for s in summary.seats):
        # a forfeited seat's points are partly the fallback's: never ranked above a bot
        # that played its own (a ladder rates it last)
        table.caption = "—: forfeited, listed last (the fallback played its seat since)"
    playing = [s for s in summary.seats if not s.forfeit]  # placed among themselves
    for s in sorted(summary.seats, key=lambda s: (s.forfeit, s.place, s.seat)):
        kinds: dict[str, int] = {}
        for f in s.faults:
            kinds[f.kind] = kinds.get(f.kind, 0) + 1
        faults = ", ".join(k if n == 1 else f"{k} ×{n}" for k, n in kinds.items())
        table.add_row(
            "—" if s.forfeit else str(1 + sum(o.place < s.place for o in playing)),
            str(s.seat),
            _shown(s.bot, 30),
            f"{s.score:+d}",
            "yes" if s.forfeit else "",
            faults,
        )
    console.print(table)


def _print_faults(console: Console, summary: MatchResult, per_seat: int = 5) -> None:
    """Each seat's faults with their reasons (the exception and where in the author's
    files, the refusal of a move), the same fault repeated shown once with its count and
    where it happened; a reason may quote the bot, so it is escaped and capped."""
    seats = [s for s in summary.seats if s.faults]
    if not seats:
        return
    console.print("faults:")
    for s in seats:
        same: dict[tuple[str, str], list[Fault]] = {}
        for f in s.faults:
            same.setdefault((f.kind, f.detail or ""), []).append(f)
        for (kind, detail), faults in list(same.items())[:per_seat]:
            places = [
                " ".join(
                    ([] if f.hand is None else [f"hand {f.hand + 1}"])
                    + ([] if f.turn is None else [f"turn {f.turn}"])
                )
                or "outside a hand"
                for f in faults[:3]
            ]
            count = f" ×{len(faults)}" if len(faults) > 1 else ""
            more = ", …" if len(faults) > 3 else ""
            console.print(
                _shown(
                    f"  seat {s.seat} {printable(s.bot, 40)}: {kind}{count} "
                    f"({', '.join(places)}{more}): {printable(detail, 500)}",
                    700,
                )
            )
        if len(same) > per_seat:
            console.print(
                f"  seat {s.seat}: {len(same) - per_seat} more different faults (--json lists all)"
            )


def _print_logs(console: Console, summary: MatchResult) -> None:
    """Where each seat's output was kept (``arena match --logs``)."""
    seats = [(s, s.log) for s in summary.seats if s.log]
    if not seats:
        return
    console.print("logs (what each bot printed):")
    for s, log in seats:
        try:
            size = f"{Path(log).stat().st_size:,} bytes"
        except OSError:
            size = "missing"
        console.print(_shown(f"  seat {s.seat} {printable(s.bot, 40)}: {log} ({size})", 700))
