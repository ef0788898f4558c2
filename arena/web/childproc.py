"""Helper processes (the fit and hint pools) that never outlive the process that started
them: a pool's process waits on its work queue, and when its parent is killed outright
(SIGKILL, out of memory) nothing tells it to stop, so it would idle on as an orphan holding
the store's files open."""

from __future__ import annotations

import contextlib
import os
import threading
import time


def exit_with_parent(parent: int) -> None:
    """A pool's ``initializer`` (``initargs=(os.getpid(),)``): this process exits as soon as
    ``parent`` is no longer its parent."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


FIT_NICENESS = 10


def background_fitter(parent: int) -> None:
    """The fit pool's ``initializer``: :func:`exit_with_parent`, and a lower CPU priority —
    on a busy machine a page or a match's bot is served before a refit (minutes of CPU that
    nobody waits for: the pages show the last standings meanwhile)."""
    exit_with_parent(parent)
    with contextlib.suppress(OSError):
        os.nice(FIT_NICENESS)
