"""Where a match keeps its sockets: a private folder whose paths fit a Unix socket.

A Unix socket's path holds at most 108 bytes (``sun_path``), and a match's deepest socket
is ``<temp>/arena-XXXXXXXX/sockK.I/referee.sock``.  A deep temporary folder — a CI job's,
a test runner's per-test folder, a user's ``TMPDIR`` under a long home path — would make
every match fail with "socket path too long".  So the match folder is made in the first of
the temporary folder, ``/tmp`` and ``/dev/shm`` whose paths fit, and only when none does is
it an error (naming the fix).  :func:`match_folders` lists them in every such place, for
the clean-up of folders left by a killed referee (``arena sandbox gc``) and for tests.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

PREFIX = "arena-"
SOCKET_PATH_MAX = 100
"""Bytes a socket path may take (``sun_path`` is 108 with its NUL; a margin kept)."""
DEEPEST = len("/arena-XXXXXXXX/sock999.99/referee.sock")
"""The longest path a match puts below its folder's parent (a socket per seat and
segment; ``tempfile.mkdtemp`` names are 8 characters)."""
FALLBACKS = ("/tmp", "/dev/shm")


def bases() -> list[Path]:
    """The folders a match folder may be made in, in order of preference."""
    return [Path(p) for p in dict.fromkeys((tempfile.gettempdir(), *FALLBACKS))]


def _fits(base: Path) -> bool:
    return (
        len(os.fsencode(base)) + DEEPEST <= SOCKET_PATH_MAX
        and base.is_dir()
        and os.access(base, os.W_OK | os.X_OK)
    )


def new_match_folder() -> Path:
    """A new private folder (mode 0700) for one match's sockets and seats."""
    for base in bases():
        if _fits(base):
            return Path(tempfile.mkdtemp(prefix=PREFIX, dir=base))
    raise OSError(
        f"no temporary folder short enough for a match's Unix sockets ({tempfile.gettempdir()} "
        f"is {len(os.fsencode(tempfile.gettempdir()))} bytes; at most "
        f"{SOCKET_PATH_MAX - DEEPEST} fit, and /tmp is not writable): set TMPDIR to a "
        "shorter folder"
    )


def match_folders() -> set[Path]:
    """Every match folder that exists now, wherever it was made."""
    return {f for base in bases() for f in base.glob(PREFIX + "*") if f.is_dir()}


def socket_path(folder: Path) -> Path:
    """Where a match's socket lives in ``folder``; refused when the path could not be
    bound (Unix socket paths hold 108 bytes)."""
    path = folder / "referee.sock"
    if len(os.fsencode(path)) > SOCKET_PATH_MAX:
        raise OSError(f"socket path too long for a Unix socket: {path}")
    return path
