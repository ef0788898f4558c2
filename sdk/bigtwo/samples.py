"""The sample bots shipped with the SDK, by name: ``random``, ``greedy``, ``heuristic``,
``expert`` — each a folder holding ``bot.py`` (and a README) under ``bigtwo/sample_bots/``,
installed with the SDK as package data.

They are part of the SDK, not of the repository around it, so that ``pip install
bigtwo-sdk`` has them too: the Gymnasium wrapper's opponents, ``arena.bots.resolve("greedy")``
and a bot author's copy of ``sample_bots/greedy/bot.py`` all find the same files, installed
or in a checkout (whose ``sample_bots/`` at the top links here).  A sample bot's folder is
as a user's: runnable with ``python -m bigtwo.run``, never imported as a module of the SDK.
Pure standard library."""

from __future__ import annotations

import re
from pathlib import Path

FOLDER = Path(__file__).resolve().parent / "sample_bots"
"""Where the sample bots' folders are (the real path: a bot's file is compared to it)."""

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,99}")
"""A sample bot's name: a folder's name, never a path (no dot, no slash)."""


def names() -> list[str]:
    """The sample bots' names, sorted (none when the folder is missing)."""
    if not FOLDER.is_dir():
        return []
    return sorted(p.name for p in FOLDER.iterdir() if _NAME.fullmatch(p.name) and _has_bot(p))


def path(name: str) -> Path | None:
    """The ``bot.py`` of the sample bot ``name``, or None when there is no such sample bot
    (a name is never a path: ``../x`` or ``greedy/..`` names nothing)."""
    if not _NAME.fullmatch(name) or not _has_bot(FOLDER / name):
        return None
    return FOLDER / name / "bot.py"


def is_sample(file: str | Path) -> bool:
    """Whether ``file`` (once its links are resolved) is one of the sample bots' files."""
    return Path(file).resolve().is_relative_to(FOLDER)


def _has_bot(folder: Path) -> bool:
    return (folder / "bot.py").is_file() and not (folder / "bot.py").is_symlink()
