"""What every ``arena`` command shares: the command groups, the checks of the options that
mean the same everywhere (rules, sandbox, time control, database), and how a command
shows text someone else wrote and fails with a message and an exit code."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.text import Text

from bigtwo import RulesError, RuleSet

from ..rules_options import load_rules
from ..sandbox.backends import SANDBOXES
from ..text import printable

# arena.ladder.queries (SQLAlchemy: a third of a second) is imported where a command uses
# the database, so `arena match`, `demo`, `replay FILE` and `compare` start without it
if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from ..bots import BotSpec
    from ..referee.time_control import TimeControl

app = typer.Typer(
    help="Big Two Arena: deal, referee and rate Big Two bots.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
bot_app = typer.Typer(help="Bot images for the docker sandbox.", no_args_is_help=True)
sandbox_app = typer.Typer(help="Sandbox housekeeping.", no_args_is_help=True)
ladder_app = typer.Typer(help="Ladders: duplicate round-robin and ratings.", no_args_is_help=True)
app.add_typer(bot_app, name="bot")
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(ladder_app, name="ladder")


def _shown(text: object, limit: int = 300) -> Text:
    """Text someone else wrote (a bot's name or words, a file name, a record's contents),
    ready for a rich console or table: control characters made visible and length bounded
    (:func:`arena.text.printable`), and a :class:`~rich.text.Text`, so ``[blink]`` or
    ``[link=…]`` in it is shown as written, never read as markup."""
    return Text(printable(text, limit))


def _labelled(label: str, style: str, message: object, limit: int = 1000) -> Text:
    """``label`` in ``style``, then ``message`` shown as :func:`_shown` shows it."""
    return Text.assemble((label, style), " ", printable(message, limit))


def _err() -> Console:
    """A console on stderr for warnings and errors, lines never cut."""
    return Console(stderr=True, soft_wrap=True, highlight=False)


def _fail(message: str, code: int = 2) -> typer.Exit:
    # messages quote file names, rules values, build logs and bots' words
    _err().print(_labelled("error:", "red", message))
    return typer.Exit(code)


class BadOptions(ValueError):
    """An option's value that cannot be used; the message names it."""


def game_options(
    rules: str,
    set_: list[str] | None,
    sandbox: str | None = None,
    hands: int | None = None,
) -> RuleSet:
    """The rules ``--rules`` and ``--set`` give (played for exactly ``hands`` hands when
    given), after checking ``--sandbox`` when given: the checks every refereeing command
    makes, in one place.  A bad value is :class:`BadOptions`; each command turns it into
    its own exit code."""
    if sandbox is not None and sandbox not in SANDBOXES:
        raise BadOptions(f"--sandbox {sandbox!r}: choose one of {', '.join(SANDBOXES)}")
    try:
        ruleset = load_rules(rules, set_ or ())
        if hands is not None:
            ruleset = ruleset.replace(match_end="hands", match_end_value=hands)
    except RulesError as exc:
        raise BadOptions(str(exc)) from None
    return ruleset


def rules_or_fail(rules: str, set_: list[str] | None, sandbox: str | None = None) -> RuleSet:
    """:func:`game_options`, a bad value ending the command (exit 2)."""
    try:
        return game_options(rules, set_, sandbox)
    except BadOptions as exc:
        raise _fail(str(exc)) from None


def time_control(move_ms: int, bank_ms: int, startup_ms: int, max_strikes: int) -> TimeControl:
    """The time control the four shared options give."""
    from ..referee.time_control import TimeControl

    return TimeControl(
        move_ms=move_ms, bank_ms=bank_ms, startup_ms=startup_ms, max_strikes=max_strikes
    )


def cancel_on_signals(got: list[int]) -> None:
    """From inside the running coroutine: Ctrl-C and SIGTERM cancel it (asyncio.run alone
    knows only Ctrl-C: a SIGTERM would kill the process and leave its bots running), each
    signal appended to ``got`` so the exit code can say which (:func:`interrupted_code`)."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None

    def stop(sig: int) -> None:
        got.append(sig)
        task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(sig) is not signal.SIG_IGN:
            loop.add_signal_handler(sig, stop, sig)


def interrupted_code(got: list[int]) -> int:
    """143 when the last signal was SIGTERM, else 130 (Ctrl-C), as shells report them."""
    return 143 if got and got[-1] == signal.SIGTERM else 130


def warn_host_packages(err: Console, specs: list[BotSpec]) -> None:
    """The process sandbox has only the standard library and the SDK: name, before it
    runs, each bot that imports another package (see :mod:`arena.bot_imports`)."""
    from ..bot_imports import process_sandbox_note

    for spec in {s.name: s for s in specs}.values():
        note = process_sandbox_note(spec)
        if note:
            err.print(_labelled("warning:", "yellow", note))


def need_db(db: str, hint: str = "") -> None:
    """A database that must exist already (only ``ladder run`` creates one)."""
    from ..ladder.queries import database_exists

    if not database_exists(db):
        raise _fail(f"--db {db}: no such database{hint}")


@contextmanager
def store_errors() -> Iterator[None]:
    """A request the ladder database cannot answer (:class:`StoreError`) ends the command
    with its message (exit 2)."""
    from ..ladder.queries import StoreError

    try:
        yield
    except StoreError as exc:
        raise _fail(str(exc)) from None


def open_db(db: str, hint: str = "") -> Engine:
    """The database ``db``, which must exist (:func:`need_db`, ``hint`` after its error)."""
    from ..ladder.queries import connect

    need_db(db, hint)
    with store_errors():
        return connect(db)


def open_ladder(db: str, name: str, hint: str = "") -> tuple[Engine, int]:
    """The database and the id of its ladder ``name``; an unknown name is an error that
    lists the ladders there are."""
    from ..ladder.queries import ladder_id

    engine = open_db(db, hint)
    with store_errors():
        return engine, ladder_id(engine, name, db)
