"""``arena worker``: the contest's worker — checks uploads, plays the ladder, keeps the
standings fitted — in a process of its own (``arena serve --play`` starts one as its child;
run it alone beside a server started without ``--play``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .common import _fail, _shown, app

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from ..web.contest import WebConfig

JobsOpt = Annotated[int, typer.Option(min=1, max=64, help="Ladder matches played at once.")]
SandboxOpt = Annotated[
    str,
    typer.Option(help="auto, docker or process: where uploaded bots run (a new contest's)."),
]
ExecutorOpt = Annotated[
    str, typer.Option(help="local, or ray: matches on a Ray cluster (--ray-address).")
]
RayOpt = Annotated[str | None, typer.Option(help="The Ray cluster's address.")]
LadderOpt = Annotated[str, typer.Option(help="The ladder the contest plays.")]
DataOpt = Annotated[
    Path | None,
    typer.Option(help="Folder for unpacked uploads (default: beside the SQLite file)."),
]
CheckSlotsOpt = Annotated[
    int,
    typer.Option(
        min=1,
        max=16,
        help="Entry checks run at once, beside the matches. One account holds at most "
        "one, so its slow bot never holds another account's upload.",
    ),
]
CheckCapOpt = Annotated[
    float,
    typer.Option(
        min=5.0,
        max=86400.0,
        metavar="SECONDS",
        help="Wall-clock cap of one entry check; a check still running then is refused.",
    ),
]
CheckBudgetOpt = Annotated[
    float,
    typer.Option(
        min=0.0,
        metavar="SECONDS",
        help="Seconds of entry checks each account may use per UTC day; an upload after "
        "that is refused with the time they renew.",
    ),
]


def check_choices(sandbox: str, executor: str) -> None:
    if executor not in ("local", "ray"):
        raise _fail(f"--executor {executor!r}: choose local or ray")
    if sandbox not in ("auto", "docker", "process"):
        raise _fail(f"--sandbox {sandbox!r}: choose auto, docker or process")


def open_contest(config: WebConfig) -> Engine:
    """The contest's store, ready (its data folder usable, its ladder and settings made),
    for `arena serve` and `arena worker` alike; a clear error and exit 2 when not."""
    from ..ladder.queries import StoreError, connect
    from ..web.contest import ensure_contest

    try:
        config.data_dir()
    except ValueError as exc:
        raise _fail(str(exc)) from None
    try:
        engine = connect(config.db)
        ensure_contest(engine, config)
    except StoreError as exc:
        raise _fail(str(exc)) from None
    return engine


@app.command(
    epilog="Two ways to run a contest:\n\n"
    "  arena serve --db contest.db --play        (the server starts this worker as its "
    "child, restarts it if it dies, stops it with the server)\n\n"
    "  arena serve --db contest.db  and  arena worker --db contest.db   (two commands: "
    "restart or move either alone; on PostgreSQL they may run on two machines, each "
    "with --data)\n\n"
    "One worker per ladder: a second one refuses to start while the first's heartbeat is "
    "fresh. Stop it with Ctrl-C or SIGTERM: matches in flight end, finished ones are kept."
)
def worker(
    db: Annotated[
        str,
        typer.Option(
            envvar="ARENA_DB",
            help="The store: a SQLite file, or postgresql://… (or $ARENA_DB: a password "
            "kept out of the process list).",
        ),
    ] = "arena.db",
    ladder: LadderOpt = "contest",
    data: DataOpt = None,
    jobs: JobsOpt = 1,
    sandbox: SandboxOpt = "auto",
    executor: ExecutorOpt = "local",
    ray_address: RayOpt = None,
    matches: Annotated[
        bool,
        typer.Option(
            "--matches/--no-matches",
            help="Play the ladder's matches. --no-matches: check uploads and keep the "
            "standings only (matches played elsewhere, e.g. `arena ladder run`).",
        ),
    ] = True,
    check_slots: CheckSlotsOpt = 2,
    check_cap: CheckCapOpt = 300.0,
    check_budget: CheckBudgetOpt = 1800.0,
) -> None:
    """Run the contest's worker: check uploads, play the ladder, keep the leaderboard
    fitted — in this process, never in the web server's.

    Each upload is smoke-tested (one hand against copies of itself in the contest's
    sandbox) in its own slot beside the ladder's matches, accounts taken in turn, so one
    account's slow bot never holds another's upload; each check has a wall-clock cap and
    each account a daily budget of check-seconds. Passing uploads are entered and play at
    once. The leaderboard is refitted in a process of its own and stored in the database,
    where the pages read it. Its state (running, last error) shows on the Organize page."""
    import logging
    import os
    import sys

    from ..web.contest import WebConfig
    from ..web.player import AnotherWorker, run_worker

    check_choices(sandbox, executor)
    config = WebConfig(
        db=db,
        ladder=ladder,
        data=data,
        play=True,
        jobs=jobs,
        sandbox=sandbox,
        executor=executor,
        ray_address=ray_address,
        matches=matches,
        check_slots=check_slots,
        check_cap=check_cap,
        check_budget=check_budget,
    )
    engine = open_contest(config)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s worker: %(message)s", "%H:%M:%S"))
    log = logging.getLogger("arena.web.player")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    typer.echo(
        _shown(
            f"worker for {ladder!r} of {db} (pid {os.getpid()}): "
            + (f"{jobs} match(es) at a time, " if matches else "no matches, ")
            + f"{check_slots} check slot(s)"
        ),
        err=True,
    )
    try:
        run_worker(engine, config)
    except AnotherWorker as exc:
        raise _fail(str(exc)) from None
    finally:
        engine.dispose()
