"""``arena serve --play``'s worker: ``arena worker`` as a child process of the server,
restarted when it dies (with a growing pause, the reason logged), stopped with the server.

Why a child process and not a thread: the worker fits the leaderboard, starts bots and runs
entry checks; in the server's interpreter each of these held pages (the interpreter lock).
The child gets ``ARENA_WORKER_PARENT`` (the server's pid) and stops by itself if the server
is gone, so even a server killed outright leaves no orphan playing on.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time

from .contest import WebConfig

log = logging.getLogger("arena.web.supervisor")
RESTART_FIRST, RESTART_MAX = 1.0, 60.0
STEADY = 60.0
"""A worker that ran this long before it died restarts after the first pause again."""


def worker_command(config: WebConfig) -> list[str]:
    """The ``arena worker`` command line for this server's contest and options."""
    cmd = [sys.executable, "-m", "arena", "worker", "--ladder", config.ladder]  # --db: env
    cmd += ["--data", str(config.data_dir()), "--jobs", str(config.jobs)]
    cmd += ["--executor", config.executor]
    if config.ray_address:
        cmd += ["--ray-address", config.ray_address]
    if config.sandbox in ("auto", "docker", "process"):  # the contest's is in its settings
        cmd += ["--sandbox", config.sandbox]
    cmd += ["--matches" if config.matches else "--no-matches"]
    cmd += ["--check-slots", str(config.check_slots)]
    cmd += ["--check-cap", str(config.check_cap), "--check-budget", str(config.check_budget)]
    return cmd


class WorkerProcess:
    """Start, watch and stop the child; ``pid`` is the running child's (None between)."""

    def __init__(self, config: WebConfig) -> None:
        self.config = config
        self.pid: int | None = None
        self.restarts = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._watch, name="arena-worker-watch", daemon=True)
        self._thread.start()

    def _spawn(self) -> subprocess.Popen[bytes]:
        # the store's URL (it may hold a password) in the environment, not the process list
        env = {**os.environ, "ARENA_WORKER_PARENT": str(os.getpid()), "ARENA_DB": self.config.db}
        return subprocess.Popen(worker_command(self.config), env=env, stdin=subprocess.DEVNULL)

    def _watch(self) -> None:
        pause = RESTART_FIRST
        while not self._stopping.is_set():
            with self._lock:
                if self._stopping.is_set():
                    return
                proc: subprocess.Popen[bytes] | None = None
                try:
                    proc = self._proc = self._spawn()
                    self.pid = proc.pid
                except OSError as exc:
                    log.error("cannot start the worker: %s", exc)
            started = time.monotonic()
            code = proc.wait() if proc is not None else None
            self.pid = None
            if self._stopping.is_set():
                return
            if time.monotonic() - started >= STEADY:
                pause = RESTART_FIRST
            why = (
                "could not be started"
                if code is None
                else f"was killed by signal {-code}"
                if code < 0
                else f"exited with code {code}"
            )
            log.warning("the worker %s; restarting it in %.0f s", why, pause)
            print(f"arena serve: the worker {why}; restarting it in {pause:.0f} s", file=sys.stderr)
            self.restarts += 1
            if self._stopping.wait(pause):
                return
            pause = min(pause * 2, RESTART_MAX)

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM (the worker ends its matches in flight, keeps the finished ones), then,
        after ``timeout``, SIGKILL."""
        with self._lock:
            self._stopping.set()
            proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                log.warning("the worker did not stop within %.0f s: killing it", timeout)
                proc.kill()
                proc.wait(10)
        if self._thread is not None:
            self._thread.join(10)
