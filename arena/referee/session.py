"""One match, as the referee runs it.

The session owns the :class:`bigtwo.Game`.  It writes each seat's messages in batches (see
:class:`Seat`) and reads the seat's actions from an inbox that the gRPC handler fills, so
the match loop never blocks on a slow or hostile client beyond the move's deadline.

Faults (docs/rules.md §8, §11.14; time control): a timeout, an illegal or malformed action, or an
error the bot reports is answered by the **default action** — pass when passing is legal,
otherwise the weakest legal move (when leading: the weakest single, holding any required
card) — and a strike.  At ``max_strikes`` strikes, or when the bot is gone (disconnect,
crash, never connected), the seat **forfeits**: a fallback policy (the weakest legal play,
passing only when it has none) plays it to the end, so the other seats' results stay
meaningful, and the result marks the forfeit.  Every fault is recorded with its reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from bigtwo import PASS, Game, IllegalMoveError, RuleSet
from bigtwo.cards import CARDS
from bigtwo.combos import Move
from bigtwo.v1 import referee_pb2 as pb
from bigtwo.wire import category_name, opt_card, rules_to_pb

from ..text import printable

INBOX_LIMIT = 32
"""Unread actions a seat may queue; more is flooding and disconnects the seat."""
DISCONNECTED = object()
"""Inbox marker: the seat's stream is gone."""


@dataclass(frozen=True)
class TimeControl:
    """Per-move allowance, a per-match bank spent when a move overruns it, the allowance
    from launch to Hello, and the strikes that forfeit a seat."""

    move_ms: int = 1000
    bank_ms: int = 10_000
    startup_ms: int = 15_000
    max_strikes: int = 3

    def __post_init__(self) -> None:
        for name in ("move_ms", "bank_ms", "startup_ms", "max_strikes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"time control {name} must be a whole number ≥ 0, got {value!r}")
        if self.move_ms == 0 or self.startup_ms == 0 or self.max_strikes == 0:
            raise ValueError("move_ms, startup_ms and max_strikes must be at least 1")

    def to_pb(self) -> pb.TimeControl:
        return pb.TimeControl(**asdict(self))


@dataclass
class SeatSpec:
    """Who sits in a seat: a public name (shown to every seat) and its secret token."""

    name: str
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    log: str | None = None  # where the seat's output is kept (arena match --logs), if it is


@dataclass
class Fault:
    kind: str  # timeout | illegal | protocol | crash | disconnect
    seat: int
    hand: int | None
    turn: int | None
    detail: str
    strike: bool = False  # it counted towards max_strikes (the bot was not gone for good)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "hand": self.hand,
            "turn": self.turn,
            "detail": self.detail,
            "strike": self.strike,
        }


class Seat:
    """The referee's side of one seat.

    Writes: messages queue in ``pending`` and go out as one batch.  The batch that asks the
    seat to act is written by the match loop itself (no task hop on the hot path); other
    batches (hand end, faults) are written by a chain of background tasks, so a bot that
    stops reading can never stall the match.  Reads: the gRPC handler's reader task fills
    ``inbox``; the match loop takes from it under the move's deadline."""

    def __init__(self, index: int, spec: SeatSpec, bank_ms: int) -> None:
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
        self.gone = False  # the bot is gone for good
        self.strikes = 0
        self.forfeited = False
        self.forfeit_hand: int | None = None  # the hand in which the fallback took over
        self.bank_ms = bank_ms
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


def default_move(legal: list[Move]) -> Move:
    """Pass when legal; otherwise the weakest legal move (legal_moves() lists weakest
    first, singles before bigger plays)."""
    return PASS if PASS in legal else legal[0]


def fallback_move(legal: list[Move]) -> Move:
    """A forfeited seat's policy: the weakest legal play; pass only when there is none."""
    for m in legal:
        if m is not PASS:
            return m
    return PASS


Recorder = Callable[[dict[str, Any]], None]


def round_trip_stats(times_ms: list[float]) -> dict[str, float]:
    """Count, median and 99th percentile of turn round trips, in ms."""
    times = sorted(times_ms)
    if not times:
        return {"n": 0}
    return {
        "n": len(times),
        "median_ms": round(times[len(times) // 2], 3),
        "p99_ms": round(times[min(len(times) - 1, int(len(times) * 0.99))], 3),
    }


class MatchSession:
    """Runs one match between the seats that connect to it."""

    def __init__(
        self,
        rules: RuleSet,
        seats: list[SeatSpec],
        seed: int | str,
        time_control: TimeControl | None = None,
        match_id: str | None = None,
        record: Recorder | None = None,
        on_hand_end: Callable[[MatchSession, Any], None] | None = None,
        sandbox: dict[str, Any] | None = None,
        deals: list[list[list[int]]] | None = None,
        all_must_start: bool = False,
    ) -> None:
        """``deals``: play exactly these deals (each a list of per-seat hands), in order,
        each as an independent hand under the first-hand opening rule — duplicate play.
        The rules' match end is then replaced by that number of hands.

        ``all_must_start``: a seat whose bot never says Hello (it ended first, or the
        startup allowance ran out) ends the match before the first hand (``aborted`` in the
        result) instead of being played by the fallback — a bot that cannot start is its
        author's error to show, not a result."""
        if len(seats) != rules.players:
            raise ValueError(f"{len(seats)} seats for a {rules.players}-player game")
        if deals is not None:
            if not deals:
                raise ValueError("an explicit deal list is empty")
            rules = rules.replace(match_end="hands", match_end_value=len(deals))
        self.deals = deals
        self.rules = rules
        self.seed = seed
        self.tc = time_control or TimeControl()
        self.match_id = match_id or secrets.token_hex(8)
        self.seats = [Seat(i, s, self.tc.bank_ms) for i, s in enumerate(seats)]
        self.game = (
            Game(rules, seed=seed) if deals is None else Game.from_hands(rules, deals[0], seed=seed)
        )
        self.turn_id = 0
        self.finished = False
        self.record = record or (lambda _event: None)
        self.on_hand_end = on_hand_end
        self.turn_times_ms: list[float] = []
        self.started = asyncio.Event()
        self.all_must_start = all_must_start
        self.aborted: str | None = None
        # the header goes first, before anything (even a bot dying at start) is recorded
        self.record(
            {
                "type": "match",
                "match_id": self.match_id,
                "rules": self.rules.to_dict(),
                "seed": self.seed,
                "seats": [
                    {"seat": s.index, "bot": s.spec.name}
                    | ({"log": s.spec.log} if s.spec.log else {})
                    for s in self.seats
                ],
                "time_control": asdict(self.tc),
                "sandbox": sandbox or {"name": "unknown"},
                "deals": "seed" if deals is None else "explicit",
                "started_at": time.time(),
            }
        )

    # ----- connection side (called by the gRPC handler) -------------------------------
    def attach(self, seat: Seat, bot_name: str, stream: Any) -> None:
        seat.stream = stream
        seat.connected_at = time.perf_counter()
        seat.live = True
        seat.bot_name = printable(bot_name, 100)  # the bot's words: see arena.text
        seat.connected.set()
        seat.send(
            pb.RefereeMessage(
                match_start=pb.MatchStart(
                    match_id=self.match_id,
                    seat=seat.index,
                    players=self.rules.players,
                    rules=rules_to_pb(self.rules),
                    time_control=self.tc.to_pb(),
                    seat_names=[s.spec.name for s in self.seats],
                )
            )
        )
        seat.flush()

    def detach(self, seat: Seat, reason: str) -> None:
        """The seat's stream ended (or was cut): the bot is gone for good."""
        if seat.live or seat.stream is not None:
            seat.live = False
            seat.stream = None
            seat.inbox.put_nowait((DISCONNECTED, reason))

    def deliver(self, seat: Seat, msg: pb.BotMessage) -> bool:
        """An incoming message; False when the seat is flooding (the caller cuts it)."""
        if seat.inbox.qsize() >= INBOX_LIMIT:
            return False
        seat.inbox.put_nowait(msg)
        return True

    def process_exited(self, index: int, detail: str, failed: bool = True) -> None:
        """The sandbox saw the bot end (``failed``: by a signal, an error code or the memory
        limit).  Recorded at once, with the sandbox's reason, unless the match is over."""
        seat = self.seats[index]
        seat.exited.set()
        if self.finished:
            return
        if not seat.connected.is_set():
            self._fault(seat, "crash", f"the bot ended before connecting: {detail}", gone=True)
            seat.connected.set()  # stop waiting for it
        elif not seat.gone:
            kind = "crash" if failed else "disconnect"
            self._fault(seat, kind, f"the bot ended during the match: {detail}", gone=True)

    # ----- faults -----------------------------------------------------------------------
    def _fault(self, seat: Seat, kind: str, detail: str, gone: bool = False) -> None:
        """Record a fault.  ``gone``: the bot is gone for good (it forfeits at once);
        otherwise the fault is a strike, and ``max_strikes`` strikes forfeit."""
        hand = None if self.finished or not self.started.is_set() else self.game.hand_no
        turn = self.turn_id or None
        # a detail may quote the bot (its stderr tail, its exception's message): made
        # harmless here, once, for every place it goes (results, record, terminal)
        strike = not (gone or kind == "disconnect")
        fault = Fault(kind, seat.index, hand, turn, printable(detail, 500), strike)
        seat.faults.append(fault)
        if not strike:
            seat.gone = True
            seat.forfeited = True
        else:
            seat.strikes += 1
            if seat.strikes >= self.tc.max_strikes:
                seat.forfeited = True
        if seat.forfeited and seat.forfeit_hand is None:
            if hand is None:  # before the first hand, or after the last one
                hand = self.game.hand_no if self.started.is_set() else 0
            seat.forfeit_hand = hand
        self.record(
            {
                "type": "fault",
                "seat": seat.index,
                **fault.to_dict(),
                "strikes": seat.strikes,
                "forfeited": seat.forfeited,
            }
        )
        if not seat.gone:
            seat.send(
                pb.RefereeMessage(
                    fault=pb.Fault(
                        turn_id=self.turn_id,
                        kind=kind,
                        detail=fault.detail,
                        strikes=seat.strikes,
                        forfeited=seat.forfeited,
                    )
                )
            )
            seat.flush()

    # ----- the match ---------------------------------------------------------------------
    def broadcast(self, msg: pb.RefereeMessage, flush: bool = False) -> None:
        for seat in self.seats:
            seat.send(msg)
            if flush:
                seat.flush()

    async def wait_for_seats(self) -> None:
        deadline = self.tc.startup_ms / 1000

        async def one(seat: Seat) -> None:
            try:  # a bot that ends first sets it too (process_exited): no waiting it out
                await asyncio.wait_for(seat.connected.wait(), deadline)
            except TimeoutError:
                self._fault(
                    seat,
                    "disconnect",
                    f"never connected within the startup allowance ({self.tc.startup_ms} ms)",
                )

        await asyncio.gather(*(one(s) for s in self.seats))

    async def run(self) -> dict[str, Any]:
        """Play the whole match; returns the result summary."""
        try:
            await self.wait_for_seats()
            missing = [s for s in self.seats if s.connected_at is None]  # no Hello
            if self.all_must_start and missing:
                return self._abort(missing)
            gc.freeze()  # long-lived objects out of the collector's scans: shorter pauses
            self.started.set()
            game = self.game
            while True:
                self._start_hand()
                while not game.hand_over:
                    await self._one_turn()
                result = game.results[-1]
                self.record({"type": "hand_end", **result.to_dict()})
                self.broadcast(
                    pb.RefereeMessage(
                        hand_end=pb.HandEnd(
                            hand=result.hand,
                            winner=result.winner,
                            cards_left=result.cards_left,
                            penalties=result.penalties,
                            scores=result.scores,
                            cumulative=result.cumulative,
                        )
                    ),
                    flush=True,
                )
                if self.on_hand_end:
                    self.on_hand_end(self, result)
                if game.match_over:
                    break
                if self.deals is None:
                    game.next_hand()
                else:
                    game.next_hand(self.deals[game.hand_no + 1], independent=True)
            summary = self.summary()
            self.broadcast(
                pb.RefereeMessage(
                    match_end=pb.MatchEnd(
                        scores=game.scores,
                        places=game.places(),
                        forfeited=[s.forfeited for s in self.seats],
                    )
                ),
                flush=True,
            )
            self.record({"type": "match_end", **{k: summary[k] for k in ("hands", "seats")}})
            return summary
        finally:
            gc.unfreeze()  # a long-lived referee process must not keep them out for ever
            self.finished = True
            for seat in self.seats:
                await seat.drain()
                seat.close()

    def _abort(self, missing: list[Seat]) -> dict[str, Any]:
        """End the match before its first hand: these seats' bots never started."""
        names = ", ".join(f"seat {s.index} {s.spec.name}" for s in missing)
        self.aborted = f"not every bot started ({names}): no hand was played"
        summary = {**self.summary(), "aborted": self.aborted}
        self.broadcast(
            pb.RefereeMessage(
                match_end=pb.MatchEnd(
                    scores=self.game.scores,
                    places=self.game.places(),
                    forfeited=[s.forfeited for s in self.seats],
                )
            ),
            flush=True,
        )
        self.record({"type": "aborted", "reason": self.aborted})
        return summary

    def _start_hand(self) -> None:
        g = self.game
        for seat in self.seats:
            seat.send(
                pb.RefereeMessage(
                    hand_start=pb.HandStart(
                        hand=g.hand_no,
                        cards=[int(c) for c in g.hand(seat.index)],
                        cards_left=g.counts,
                        leader=g.turn,
                        must_include=opt_card(g.must_include),
                    )
                )
            )
        self.record(
            {
                "type": "deal",
                "hand": g.hand_no,
                "leader": g.turn,
                "hands": [[str(c) for c in g.hand(s)] for s in range(g.players)],
            }
        )

    async def _one_turn(self) -> None:
        g = self.game
        seat = self.seats[g.turn]
        self.turn_id += 1
        turn_id = self.turn_id
        by_referee = False
        t0 = time.perf_counter()
        if seat.forfeited:
            move: Move = fallback_move(g.legal_moves())
            by_referee = True
        else:
            chosen = await self._ask(seat, turn_id)
            if chosen is None:
                legal = g.legal_moves()
                move = fallback_move(legal) if seat.forfeited else default_move(legal)
                by_referee = True
            else:
                move = chosen
        elapsed_ms = (time.perf_counter() - t0) * 1000
        lead = g.trick is None
        hand_no = g.hand_no
        g.apply(move)
        self.record(
            {
                "type": "turn",
                "hand": hand_no,
                "turn": turn_id,
                "seat": seat.index,
                "move": str(move),
                "by_referee": by_referee,
                "ms": round(elapsed_ms, 3),
            }
        )
        cards = [] if move is PASS else [int(c) for c in move.cards]
        self.broadcast(
            pb.RefereeMessage(
                move=pb.MoveEvent(
                    hand=hand_no,
                    seat=seat.index,
                    cards=cards,
                    lead=lead,
                    category=category_name(None if move is PASS else move),  # type: ignore[arg-type]
                    by_referee=by_referee,
                    **{"pass": move is PASS},
                )
            )
        )
        if g.trick is None and not g.hand_over and move is PASS and not lead:
            self.broadcast(pb.RefereeMessage(trick_won=pb.TrickWon(hand=hand_no, seat=g.turn)))

    async def _ask(self, seat: Seat, turn_id: int) -> Move | None:
        """The seat's move, or None after recording a fault (caller plays the default)."""
        g = self.game
        seat.send(
            pb.RefereeMessage(
                turn=pb.TurnRequest(
                    turn_id=turn_id,
                    hand=g.hand_no,
                    move_ms_left=self.tc.move_ms,
                    bank_ms_left=seat.bank_ms,
                    to_beat=[] if g.trick is None else [int(c) for c in g.trick.cards],
                    must_include=opt_card(g.must_include),
                    cards_left=g.counts,
                    reversed=g.reversed,
                    first_trick=g.first_trick,
                    lone_two_lifted=g.lone_two_lifted,
                    locked_out=sorted(g.locked_out),
                )
            )
        )
        start = time.perf_counter()
        budget = (self.tc.move_ms + seat.bank_ms) / 1000
        try:
            async with asyncio.timeout(budget):  # cheaper than wait_for: no new task
                await seat.flush_now()
        except TimeoutError:
            seat.bank_ms = 0
            seat.overdue.add(turn_id)
            self._fault(seat, "timeout", "the bot does not read its messages")
            return None
        except Exception as exc:
            self._fault(seat, "disconnect", f"stream broke: {type(exc).__name__}")
            return None
        while True:
            remaining = budget - (time.perf_counter() - start)
            try:
                if remaining <= 0:
                    raise TimeoutError
                async with asyncio.timeout(remaining):
                    msg = await seat.inbox.get()
            except TimeoutError:
                seat.bank_ms = 0
                seat.overdue.add(turn_id)  # its answer may still come, once
                self._fault(
                    seat, "timeout", f"no action within {self.tc.move_ms} ms plus the time bank"
                )
                return None
            if isinstance(msg, tuple) and msg[0] is DISCONNECTED:
                # a bot that died takes its stream with it: give the sandbox a moment to
                # say how it ended, so the fault names the cause (exit code, OOM, signal)
                if seat.exit_grace_s > 0:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(seat.exit_grace_s):
                            await seat.exited.wait()
                if not seat.gone:
                    self._fault(seat, "disconnect", msg[1])
                return None
            elapsed_ms = (time.perf_counter() - start) * 1000
            kind = msg.WhichOneof("msg")
            if kind != "action":
                self._fault(seat, "protocol", f"unexpected {kind or 'empty'} message in play")
                if seat.forfeited:
                    return None
                continue
            action = msg.action
            if action.turn_id != turn_id:
                if action.turn_id in seat.overdue:  # the answer to a turn that timed out
                    seat.overdue.discard(action.turn_id)
                    seat.late_answers += 1
                    continue
                # anything else out of turn (an answer twice, to a turn never asked of this
                # seat, to a future one) is a strike: late floods are not free
                if action.turn_id < turn_id:
                    why = f"a late action for turn {action.turn_id}, which awaits none"
                else:
                    why = f"an action for turn {action.turn_id}"
                self._fault(seat, "protocol", f"{why}, but the turn asked is {turn_id}")
                if seat.forfeited:
                    return None
                continue
            # round trips are measured for answers to the turn asked only
            self.turn_times_ms.append(elapsed_ms)
            if elapsed_ms > self.tc.move_ms:
                seat.bank_ms = max(0, seat.bank_ms - int(elapsed_ms - self.tc.move_ms))
            return self._judge(seat, action)

    def _judge(self, seat: Seat, action: pb.Action) -> Move | None:
        if action.error == pb.BOT_ERROR_EXCEPTION:
            self._fault(seat, "crash", f"the bot's act() raised: {action.error_detail}")
            return None
        if action.error == pb.BOT_ERROR_INVALID_RETURN:
            self._fault(seat, "illegal", f"the bot returned no play: {action.error_detail}")
            return None
        if action.error:
            self._fault(seat, "protocol", f"unknown error code {action.error}")
            return None
        if getattr(action, "pass"):
            if action.cards:
                self._fault(seat, "protocol", "an action that both passes and plays cards")
                return None
            move: Any = PASS
        else:
            bad = [i for i in action.cards if i >= 52]
            if bad:
                self._fault(seat, "protocol", f"card id {bad[0]} is not in 0..51")
                return None
            move = [CARDS[i] for i in action.cards]
        try:
            return self.game.validate(move)
        except IllegalMoveError as exc:
            shown = "pass" if move is PASS else " ".join(str(c) for c in move)
            self._fault(seat, "illegal", f"{shown}: {exc.reason}")
            return None

    # ----- results -----------------------------------------------------------------------
    def turn_stats(self) -> dict[str, float]:
        """Round trip per bot move (turn request queued → action received), in ms."""
        return round_trip_stats(self.turn_times_ms)

    def summary(self) -> dict[str, Any]:
        g = self.game
        places = g.places()
        return {
            "turn_round_trip": self.turn_stats(),
            "match_id": self.match_id,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "match_over": g.match_over,
            "hands": [
                {k: v for k, v in r.to_dict().items() if k != "remaining"} for r in g.results
            ],
            "seats": [
                {
                    "seat": s.index,
                    "bot": s.spec.name,
                    "score": g.scores[s.index],
                    "penalty_points": g.penalty_totals[s.index],
                    "place": places[s.index],
                    "forfeit": s.forfeited,
                    "forfeit_hand": s.forfeit_hand,
                    "strikes": s.strikes,
                    "faults": [f.to_dict() for f in s.faults],
                    # a Hello was accepted: the bot started (whatever it did after)
                    "connected": s.connected_at is not None,
                }
                | ({"log": s.spec.log} if s.spec.log else {})
                for s in self.seats
            ],
        }
