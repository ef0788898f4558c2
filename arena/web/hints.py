"""The Play page's hints, computed in a small pool of processes of their own: a sample
bot's ``act`` (the expert's search takes 100 ms and more) run in a thread of the web server
held its interpreter lock, and with it every page, for that long.

A bounded queue (``HINT_WORKERS`` busy plus ``HINT_QUEUE`` waiting; beyond that a hint is
refused as busy at once, never queued without end) and a per-hint timeout (``HINT_SECONDS``:
a pool whose process overran is replaced, so one stuck hint never holds the next).  Each pool
process keeps one instance per sample bot, as a table kept one before.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any

from .childproc import exit_with_parent

HINT_WORKERS = 2
HINT_QUEUE = 8
HINT_SECONDS = 5.0

_BOTS: dict[str, Any] = {}


def hint_move(runner_spec: str, observation: Any) -> Any:
    """In a pool process: what the sample bot at ``runner_spec`` plays here."""
    bot = _BOTS.get(runner_spec)
    if bot is None:
        from bigtwo.loader import load_bot_class

        bot = _BOTS[runner_spec] = load_bot_class(runner_spec)()
    return bot.act(observation)


class HintBusy(RuntimeError):
    """Too many hints asked at once."""


class HintPool:
    def __init__(
        self, workers: int = HINT_WORKERS, queue: int = HINT_QUEUE, timeout: float = HINT_SECONDS
    ) -> None:
        self.workers, self.queue, self.timeout = workers, queue, timeout
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._in_flight = 0

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    self.workers,
                    mp_context=get_context("spawn"),
                    initializer=exit_with_parent,
                    initargs=(os.getpid(),),
                )
            return self._pool

    def _recycle(self, pool: ProcessPoolExecutor) -> None:
        """Replace a pool whose process overran or died (its work is lost, not awaited)."""
        with self._lock:
            if self._pool is pool:
                self._pool = None
        _kill(pool)

    async def ask(self, runner_spec: str, observation: Any) -> Any:
        """The bot's move; :class:`HintBusy` when the queue is full, ``TimeoutError`` after
        ``timeout`` seconds, the bot's own exception if it raised one."""
        if self._in_flight >= self.workers + self.queue:
            raise HintBusy("hints are busy: try again in a moment")
        self._in_flight += 1
        try:
            pool = self._executor()
            try:
                future: Future[Any] = pool.submit(hint_move, runner_spec, observation)
            except (BrokenProcessPool, RuntimeError):
                self._recycle(pool)
                pool = self._executor()
                future = pool.submit(hint_move, runner_spec, observation)
            try:
                return await asyncio.wait_for(asyncio.wrap_future(future), self.timeout)
            except TimeoutError:
                self._recycle(pool)
                raise
            except BrokenProcessPool:
                self._recycle(pool)
                raise RuntimeError("the hint's process died") from None
        finally:
            self._in_flight -= 1

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            _kill(pool)


def _kill(pool: ProcessPoolExecutor) -> None:
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()


POOL = HintPool()
"""The web process's pool (started at the first hint)."""
atexit.register(POOL.close)
