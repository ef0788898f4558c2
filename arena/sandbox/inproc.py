"""The ``inproc`` backend: trusted bots as asyncio tasks in the referee's own process, still
speaking real gRPC to the referee.  For tests and benchmarks only — no isolation at all."""

from __future__ import annotations

import asyncio
import contextlib

from bigtwo.loader import load_bot_class

from ..bots import BotSpec
from .base import BotHandle, Credentials, Sandbox


class InprocHandle(BotHandle):
    def __init__(self, task: asyncio.Task) -> None:
        self.task = task

    async def wait(self) -> tuple[str, bool]:
        try:
            await asyncio.shield(self.task)
        except asyncio.CancelledError:
            return "task cancelled", True
        except Exception as exc:
            return f"task failed: {type(exc).__name__}: {exc}"[:300], True
        return "task ended", False

    async def stop(self) -> None:
        self.task.cancel()
        with contextlib.suppress(BaseException):
            await self.task


class InprocSandbox(Sandbox):
    name = "inproc"

    async def start(self, bot: BotSpec, creds: Credentials, workdir: str) -> BotHandle:
        from bigtwo.client import play_match

        instance = load_bot_class(bot.runner_spec)()
        task = asyncio.create_task(
            play_match(instance, creds.address, creds.match_id, creds.seat, creds.token)
        )
        return InprocHandle(task)
