"""Each seat's log of a match — what its bot wrote on stdout and stderr — kept in a folder
the operator chose (``arena match --logs DIR``) as ``seat<N>-<name>.log``.

A bot's name is its author's choice: it is reduced to letters, digits, ``.``, ``_`` and
``-`` (no ``/``, no ``..``, no control character can reach a file name), and the seat
number keeps two seats of the same bot apart.  A log is created when the match starts
(empty: the bot printed nothing) and filled as each of the seat's bot instances stops,
with what its sandbox kept (capped: see :mod:`arena.sandbox.output`).  A seat whose bot
runs elsewhere (``remote``) or inside the referee (``inproc``: its output goes to the
referee's own terminal) has no log."""

from __future__ import annotations

import os
import re
from pathlib import Path

NAME_LIMIT = 40
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def log_name(seat: int, bot: str) -> str:
    """``seat<N>-<bot>.log`` with the bot's name made safe for a file name."""
    safe = _UNSAFE.sub("_", bot).strip("._-")[:NAME_LIMIT].strip("._-")
    return f"seat{seat}-{safe or 'bot'}.log"


class SeatLogs:
    """The log files of one match's seats (None for a seat without one)."""

    def __init__(self, folder: Path, names: list[str], kept: list[bool]) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.paths: list[Path | None] = []
        self.instances = [0] * len(names)
        for seat, (name, keep) in enumerate(zip(names, kept, strict=True)):
            if not keep:
                self.paths.append(None)
                continue
            path = folder.resolve() / log_name(seat, name)
            os.close(self._open(path, truncate=True))
            self.paths.append(path)

    @staticmethod
    def _open(path: Path, truncate: bool = False) -> int:
        # never through a symlink someone planted in a shared folder
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
        return os.open(path, flags | (os.O_TRUNC if truncate else 0), 0o644)

    def path(self, seat: int) -> str | None:
        found = self.paths[seat]
        return None if found is None else str(found)

    def append(self, seat: int, output: bytes, label: str | None = None) -> None:
        """Add what one instance of the seat's bot wrote (``label`` heads it when the
        seat is played by several instances in turn)."""
        path = self.paths[seat]
        if path is None:
            return
        self.instances[seat] += 1
        fd = self._open(path)
        try:
            if label is not None:
                os.write(fd, f"=== {label} ===\n".encode())
            view = memoryview(output)
            while view:
                view = view[os.write(fd, view) :]
            if output and not output.endswith(b"\n"):
                os.write(fd, b"\n")
        finally:
            os.close(fd)
