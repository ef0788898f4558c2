"""One seat of a match, as the referee sees it: who sits there, the faults it committed, and
its channel — the messages queued for it and the actions it sent.

The match loop (:mod:`.session`) decides; a :class:`Seat` only carries.  Its writes go out
in batches, so a seat that is not on turn is not woken for every move and a bot that stops
reading can never stall the match; its reads come from an inbox that the gRPC handler
(:mod:`.service`) fills, so the match loop never blocks on a slow or hostile client beyond
the move's deadline.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import asdict, dataclass, field
from typing import Any

from bigtwo.judge import Standing
from bigtwo.v1 import referee_pb2 as pb

INBOX_LIMIT = 32
"""Unread actions a seat may queue; more is flooding and disconnects the seat."""
DISCONNECTED = object()
"""Inbox marker: the seat's stream is gone."""


@dataclass
class SeatSpec:
    """Who sits in a seat: a public name (shown to every seat) and its secret token."""

    name: str
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    log: str | None = None  # where the seat's output is kept (arena match --logs), if it is
    time_control: Any = None
    """This seat's own TimeControl (a person's seat thinks in seconds, a bot's in ms);
    None: the match's.  Its startup allowance is the match's whatever it says."""


@dataclass
class Fault:
    """A fault the referee recorded against a seat: the one description from which the
    result, the record's ``fault`` event and the seat's ``Fault`` message are made."""

    kind: str  # timeout | illegal | protocol | crash | disconnect
    seat: int
    hand: int | None
    turn: int | None
    detail: str
    strike: bool = False  # it counted towards max_strikes (the bot was not gone for good)

    def to_dict(self) -> dict[str, Any]:
        """Its fields but the seat (the result lists faults per seat), in field order."""
        return {k: v for k, v in asdict(self).items() if k != "seat"}


class Seat(Standing):
    """The referee's side of one seat: its state in the match (its strikes and forfeit, a
    :class:`bigtwo.judge.Standing` kept by the judge's rules) and its channel.

    Writes: messages queue in ``pending`` and go out as one batch.  The batch that asks the
    seat to act is written by the match loop itself (no task hop on the hot path); other
    batches (hand end, faults) are written by a chain of background tasks, so a bot that
    stops reading can never stall the match.  Reads: the gRPC handler's reader task fills
    ``inbox``; the match loop takes from it under the move's deadline."""

    def __init__(self, index: int, spec: SeatSpec, tc: Any) -> None:
        """``tc``: the TimeControl this seat is held to (its own, or the match's)."""
        super().__init__(tc.max_strikes)
        self.index = index
        self.spec = spec
        self.connected = asyncio.Event()
        self.closed = asyncio.Event()  # the session is done with this seat's stream
        self.exited = asyncio.Event()  # the sandbox saw the bot end
        # how long a broken stream waits for the sandbox to say how the bot ended; set by
        # whoever watches the bot's process (0: nobody does, e.g. a remote seat)
        self.exit_grace_s = 0.0
        self.connected_at: float | None = None  # perf_counter() of its Hello
        self.stream: Any = None  # the gRPC servicer context while attached
        self.inbox: asyncio.Queue[Any] = asyncio.Queue()
        self.live = False  # a stream is attached now
        self.tc = tc
        self.bank_ms: int = tc.bank_ms
        self.faults: list[Fault] = []
        self.bot_name = ""
        self.late_answers = 0  # answers to turns that had timed out (expected, ignored)
        self.overdue: set[int] = set()  # turns that timed out: one late answer each is fine
        self.pending: list[pb.RefereeMessage] = []
        self._writes: asyncio.Task[None] | None = None

    def send(self, msg: pb.RefereeMessage) -> None:
        """Queue a message; it goes out with the seat's next batch (see flush)."""
        if not self.gone:
            self.pending.append(msg)

    def _batch(self) -> pb.RefereeBatch | None:
        batch = None
        if self.pending and self.live and not self.gone:
            batch = pb.RefereeBatch(messages=self.pending)
        self.pending = []
        return batch

    def flush(self) -> None:
        """Send everything queued, in the background (at hand and match end, with a
        fault): a seat that is not on turn is not woken for every move."""
        batch = self._batch()
        if batch is not None:
            self._writes = asyncio.create_task(self._write_after(self._writes, batch))

    async def _write_after(self, before: asyncio.Task[None] | None, batch: pb.RefereeBatch) -> None:
        if before is not None:
            await before
        if self.live:
            try:
                await self.stream.write(batch)
            except Exception:  # the stream broke: the reader task reports the disconnect
                self.live = False

    async def flush_now(self) -> None:
        """Send everything queued and wait until it is written (the turn request)."""
        batch = self._batch()
        if self._writes is not None:
            await self._writes
            self._writes = None
        if batch is not None and self.live:
            await self.stream.write(batch)

    async def drain(self) -> None:
        """Wait for background writes (bounded: used at match end)."""
        if self._writes is not None:
            try:
                async with asyncio.timeout(2):
                    await self._writes
            except (TimeoutError, Exception):
                pass

    def close(self) -> None:
        self.closed.set()
