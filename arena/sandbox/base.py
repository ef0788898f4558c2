"""The sandbox interface: start a bot that connects to a referee address with its seat's
credentials; report when it ends; stop everything at match end whatever happened."""

from __future__ import annotations

import abc
from dataclasses import dataclass

from ..bots import BotSpec


@dataclass(frozen=True)
class Credentials:
    address: str
    match_id: str
    seat: int
    token: str

    def env(self) -> dict[str, str]:
        return {
            "ARENA_ADDRESS": self.address,
            "ARENA_MATCH_ID": self.match_id,
            "ARENA_SEAT": str(self.seat),
            "ARENA_TOKEN": self.token,
        }


class BotHandle(abc.ABC):
    """A running bot."""

    output: bytes | None = None
    """What the bot wrote on stdout and stderr (capped, see arena.sandbox.output), set by
    ``stop`` when its sandbox's ``keep_output`` asked for it; None when not kept or not
    available (an ``inproc`` bot prints straight to the referee's own terminal)."""

    @abc.abstractmethod
    async def wait(self) -> tuple[str, bool]:
        """Wait until the bot ends: a one-line description of how, and whether it failed
        (a signal, an error code, the memory limit)."""

    @abc.abstractmethod
    async def stop(self) -> None:
        """End the bot and everything it started; idempotent."""

    def stderr_tail(self) -> str:
        return ""


class Sandbox(abc.ABC):
    name = "?"
    # a dead bot's stream breaks before its sandbox reports the exit; the referee waits up
    # to this long for the report so the fault names the cause (exit code, signal, OOM).
    # A container's exit takes two engine API calls, slow on a loaded machine.
    exit_grace_s = 1.0
    # how long a match that has ended waits for a start it cut off (the startup allowance
    # ran out, Ctrl-C) before cancelling it, to stop what it made; 0 for a sandbox whose
    # cancelled start removes what it makes by itself (docker: its engine may stall)
    late_start_s = 30.0
    # set before a match: each handle's stop() keeps the bot's output (``BotHandle.output``)
    keep_output = False

    async def prepare(self, bots: list[BotSpec]) -> None:  # noqa: B027 (optional hook)
        """Before the match's clock starts: build or fetch what the bots need."""

    def describe(self) -> dict:
        """The backend and its limits, for the match record."""
        return {"name": self.name, "limits": dict(getattr(self, "limits_dict", {}) or {})}

    @abc.abstractmethod
    async def start(self, bot: BotSpec, creds: Credentials, workdir: str) -> BotHandle:
        """Start ``bot`` so that it connects with ``creds``; ``workdir`` is the match's
        private folder (the sandbox may make per-seat folders inside it)."""


class SandboxUnavailable(RuntimeError):
    """The backend asked for cannot run here (e.g. no Docker engine answers)."""
