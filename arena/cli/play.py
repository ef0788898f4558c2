"""``arena play``: a person plays against bots in the browser, on this machine.

The same Play page as ``arena serve``'s, served on the loopback address without accounts
(``WebConfig.local_play``); the first table is opened at start with the command's bots and
rules, and its address printed (and opened when a browser is there).  Games are kept in
``--db`` to be replayed (``/play`` lists them)."""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
import webbrowser
from typing import Annotated

import typer

from .common import BadOptions, _fail, _shown, app, game_options
from .options import RulesOpt, SetOpt

HELP_BOTS = (
    "The opponents, one per other seat (default: the sample bots, strongest first): a "
    "sample bot name, a folder with bot.py, or path/to/file.py[:Class]."
)


def _has_display() -> bool:
    """A browser can be shown here (not a server's shell over ssh)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


@app.command(
    epilog="Examples:\n\n"
    "  arena play                                  (hk, you in seat 0 against the sample bots)\n\n"
    "  arena play --rules pusoy --seat 2 mybot/    (your bot among the sample bots)\n\n"
    "  arena play --set players=3 heuristic greedy --hands 4"
)
def play(
    bots: Annotated[list[str] | None, typer.Argument(help=HELP_BOTS, show_default=False)] = None,
    rules: RulesOpt = "hk",
    set_: SetOpt = None,
    seat: Annotated[int, typer.Option(min=0, max=3, help="Your seat (0 leads first).")] = 0,
    hands: Annotated[
        int | None,
        typer.Option(min=1, max=100, help="Play this many hands (default: the rules' match end)."),
    ] = None,
    move_s: Annotated[
        int, typer.Option(min=5, max=3600, help="Your time for a move, in seconds (bots: 1 s).")
    ] = 60,
    db: Annotated[str, typer.Option(help="Where your games are kept, to replay them.")] = (
        "arena-play.db"
    ),
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port on 127.0.0.1 (0: any free one).")
    ] = 0,
    sandbox: Annotated[
        str,
        typer.Option(
            help="Where the bots run: auto (docker when an engine answers, else process), "
            "docker, process, or inproc (trusted bots only)."
        ),
    ] = "auto",
    open_browser: Annotated[
        bool, typer.Option("--open/--no-open", help="Open the page in a browser when there is one.")
    ] = True,
) -> None:
    """Play against bots in your browser: a local server seats you at a table refereed
    exactly as a bot's match is (same rules, your own move time, the same record), prints
    the address and opens it.

    Click cards (or use the arrow keys and space) to select them; the page names the
    selection in the engine's words and enables Play only when it is legal; Pass is p,
    Hint asks a sample bot. Games are kept in --db and replayable from the Play page.
    Ctrl-C stops the server (a game in progress is kept as interrupted)."""
    from ..bots import BotSpecError, resolve
    from ..sandbox.backends import choose_sandbox
    from ..web.contest import WebConfig
    from ..web.tables import TableSetup, default_opponents

    if sandbox not in ("auto", "docker", "process", "inproc"):
        raise _fail(f"--sandbox {sandbox!r}: choose auto, docker, process or inproc")
    try:
        ruleset = game_options(rules, set_, sandbox, hands)
    except BadOptions as exc:
        raise _fail(str(exc)) from None
    others = ruleset.players - 1
    names = list(bots or [])
    if not names:
        names = default_opponents(ruleset.players)
    if len(names) != others:
        raise _fail(f"{ruleset.players} players: give {others} opponents, not {len(names)}")
    if seat >= ruleset.players:
        raise _fail(
            f"--seat {seat}: seats are 0 to {ruleset.players - 1} for {ruleset.players} players"
        )
    try:
        specs = tuple(resolve(b) for b in names)
        setup = TableSetup(ruleset, seat, specs, "you", move_s * 1000)
    except (BotSpecError, ValueError) as exc:
        raise _fail(str(exc)) from None
    chosen = choose_sandbox(sandbox)
    host = "127.0.0.1"
    from ..web.server import ListenError, listen, serve_app

    try:
        socks = listen(host, port)
    except ListenError as exc:
        raise _fail(str(exc)) from None
    port = socks[0].getsockname()[1]
    table_id = secrets.token_urlsafe(18)
    config = WebConfig(
        db=db,
        sandbox=chosen,
        local_play=True,
        house_bots=False,
        extra={
            "first_table": {"id": table_id, "setup": setup},
            "human_move_ms": move_s * 1000,
            "play_rules": ruleset.preset_name or "hk",
        },
    )
    from ..ladder.queries import StoreError, connect

    try:
        connect(db)
    except StoreError as exc:
        raise _fail(str(exc)) from None
    from ..web.app import create_app

    web = create_app(config)
    url = f"http://{host}:{port}/play/{table_id}"
    typer.echo(
        _shown(
            f"you (seat {seat}) against {', '.join(s.name for s in specs)} under "
            f"{ruleset.preset_name or 'modified'} rules; bots in the {chosen} sandbox"
        ),
        err=True,
    )
    typer.echo(f"open {url}   (Ctrl-C stops; games are kept in {db})")
    if open_browser and _has_display():
        with contextlib.suppress(Exception):  # no browser after all: the address is printed
            webbrowser.open(url)
    serve_app(
        web, host, port, socks=socks, hint="arena play answers only at the address it printed"
    )
