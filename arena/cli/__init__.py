"""The ``arena`` command.  One entry point, a subcommand per job, ``--help`` everywhere.

A package of small modules: :mod:`.common` (the command groups, the checks of shared
options, how a command fails), :mod:`.options` (the shared options), :mod:`.match` (demo,
rules, match), :mod:`.tools` (replay, bot build, sandbox gc), :mod:`.compare`,
:mod:`.ladder` (ladder run, add), :mod:`.ladder_view` (ladder show, export),
:mod:`.ladder_final` (ladder final) and :mod:`.admin` (ladder list, faults, retire, plot).
Importing each registers its commands on :data:`app`, in the order ``--help`` lists them.
What the ladder commands ask of the database is in :mod:`arena.ladder.queries`, shared with
any other front end."""

from __future__ import annotations

import importlib
import sys

import typer

from bigtwo import OPTION_NAMES, RuleSet

from ..text import printable
from .common import _fail, _labelled, _shown, app, ladder_app

# registered in this order, the order `--help` lists them in
for _module in (
    "match",
    "tools",
    "compare",
    "ladder",
    "ladder_view",
    "ladder_final",
    "admin",
    "serve",
    "worker",
    "play",
):
    importlib.import_module(f".{_module}", __name__)


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


__all__ = [
    "OPTION_NAMES",
    "RuleSet",
    "_fail",
    "_labelled",
    "_shown",
    "app",
    "ladder_app",
    "main",
]
