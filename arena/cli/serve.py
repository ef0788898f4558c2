"""``arena serve``: the web arena (``arena.web``) on uvicorn — a contest served in the
browser, its ladder played in the background with ``--play``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from .common import _fail, _shown, app
from .worker import CheckBudgetOpt, CheckCapOpt, CheckSlotsOpt, check_choices


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
    try:
        config.data_dir()
    except ValueError as exc:
        raise _fail(str(exc)) from None
    from ..ladder.queries import StoreError, connect
    from ..web.contest import ensure_contest

    try:
        engine = connect(db)
        ensure_contest(engine, config)
    except StoreError as exc:
        raise _fail(str(exc)) from None
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
    import uvicorn

    from ..web.app import create_app

    web = create_app(config)
    typer.echo(
        f"serving {config.ladder!r} of {db} on http://{host}:{port}"
        + (f" with {jobs} match(es) at a time" if play else " (no matches: add --play to play)")
        , err=True,
    )  # fmt: skip
    uvicorn.run(web, host=host, port=port, log_level="warning", proxy_headers=False)
