"""``arena serve``: the web arena (``arena.web``) on uvicorn — a contest served in the
browser, its ladder played in the background with ``--play``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from .common import _fail, _shown, app
from .worker import CheckBudgetOpt, CheckCapOpt, CheckSlotsOpt, check_choices, open_contest


@app.command(
    epilog="A contest in three commands:\n\n"
    "  arena serve --db contest.db --create-organizer alice   (prints a one-time password)\n\n"
    "  arena serve --db contest.db --play                      (open http://127.0.0.1:8000)\n\n"
    "  then hand out the join code shown on the Organize page."
)
def serve(
    db: Annotated[
        str, typer.Option(help="The store: a SQLite file, or postgresql://…")
    ] = "arena.db",
    host: Annotated[
        str, typer.Option(help="Address to listen on (0.0.0.0: every interface; put TLS in front).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8000,
    play: Annotated[
        bool,
        typer.Option(
            help="Start the worker (`arena worker`: checks uploads, plays the ladder, "
            "refits the standings) as a child process, restarted if it dies, stopped with "
            "the server. Without it, run `arena worker` beside the server."
        ),
    ] = False,
    jobs: Annotated[int, typer.Option(min=1, max=64, help="Matches played at once.")] = 1,
    sandbox: Annotated[
        str, typer.Option(help="auto, docker or process: where uploaded bots run.")
    ] = "auto",
    executor: Annotated[
        str, typer.Option(help="local, or ray: matches on a Ray cluster (--ray-address).")
    ] = "local",
    ray_address: Annotated[str | None, typer.Option(help="The Ray cluster's address.")] = None,
    ladder: Annotated[str, typer.Option(help="The ladder the contest plays.")] = "contest",
    data: Annotated[
        Path | None,
        typer.Option(help="Folder for unpacked uploads (default: beside the SQLite file)."),
    ] = None,
    create_organizer: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="Create the organizer's account, print its one-time password, and exit "
            "(ARENA_ORGANIZER_PASSWORD sets the password instead).",
        ),
    ] = None,
    secure_cookies: Annotated[
        bool, typer.Option(help="Send cookies only over HTTPS (behind a TLS proxy).")
    ] = False,
    check_slots: CheckSlotsOpt = 2,
    check_cap: CheckCapOpt = 300.0,
    check_budget: CheckBudgetOpt = 1800.0,
    house_bots: Annotated[
        bool,
        typer.Option(help="Enter the sample bots (random, greedy, heuristic) in a new contest."),
    ] = True,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME",
            help="A host name the server answers to (repeatable; * for any): its DNS name, or "
            "the Host a proxy passes on. Other names are refused, so a page of another site "
            "cannot reach the server through DNS rebinding. Always answered: 127.0.0.1, "
            "localhost, ::1 (a loopback --host), the --host address, any IP (0.0.0.0).",
        ),
    ] = None,
    connections_per_address: Annotated[
        int,
        typer.Option(
            min=4,
            max=100_000,
            help="Connections one address (IPv6: one /64) may hold; raise it for a classroom "
            "behind one NAT address.",
        ),
    ] = 64,
) -> None:
    """Serve the arena in the browser: accounts, bot uploads, the live leaderboard, match
    replays, and a JSON API (/api).

    Participants sign up with the contest's join code, upload bot.py (or a .zip/.tar.gz
    holding it) and watch the leaderboard; with --play a worker process of its own
    smoke-tests each upload in the sandbox, plays the ladder continuously and refits the
    leaderboard (see `arena worker --help`). Every asset is served by the app
    itself: an offline contest server works."""
    from ..web.accounts import AccountError, create_user
    from ..web.contest import WebConfig

    check_choices(sandbox, executor)
    config = WebConfig(
        db=db,
        ladder=ladder,
        data=data,
        play=play,
        jobs=jobs,
        sandbox=sandbox,
        executor=executor,
        ray_address=ray_address,
        secure_cookies=secure_cookies,
        house_bots=house_bots,
        check_slots=check_slots,
        check_cap=check_cap,
        check_budget=check_budget,
    )
    engine = open_contest(config)
    if create_organizer is not None:
        password = os.environ.get("ARENA_ORGANIZER_PASSWORD") or None
        try:
            account, password = create_user(
                engine, create_organizer, "organizer", password, must_change=password is None
            )
        except AccountError as exc:
            raise _fail(f"--create-organizer {create_organizer!r}: {exc}") from None
        typer.echo(_shown(f"organizer {account.name} created"))
        if not os.environ.get("ARENA_ORGANIZER_PASSWORD"):
            typer.echo(f"one-time password: {password}  (you choose your own at first sign-in)")
        return
    from ..web.app import create_app
    from ..web.server import ListenError, listen, serve_app

    try:
        socks = listen(host, port)
    except ListenError as exc:
        raise _fail(str(exc)) from None
    web = create_app(config)
    typer.echo(
        f"serving {config.ladder!r} of {db} on http://{host}:{port}"
        + (f" with {jobs} match(es) at a time" if play else " (no matches: add --play to play)")
        , err=True,
    )  # fmt: skip
    if not allowed_host and host not in ("127.0.0.1", "localhost", "::1"):
        from ..web.hosts import allowed_hosts

        answered = allowed_hosts(host, port).shown()
        typer.echo(f"answering to {answered} (a DNS name: --allowed-host NAME)", err=True)
    serve_app(
        web, host, port, hosts=allowed_host or (), per_address=connections_per_address,
        socks=socks,
    )  # fmt: skip
