"""One match, as the referee runs it.

The session owns the :class:`bigtwo.Game` and decides: whom to ask, what a seat's answer is
worth, what the referee plays, when a seat forfeits.  Each seat's channel is its
:class:`~.seat.Seat` (messages written in batches, actions read from an inbox that the gRPC
handler fills, so the match loop never blocks on a slow or hostile client beyond the move's
deadline); what the seats and the record are told is built by :mod:`.messages`, from one
description of each thing that happens.

Faults (docs/rules.md §8, §11.14; time control): a timeout, an illegal or malformed action, or an
error the bot reports is answered by the **default action** — pass when passing is legal,
otherwise the weakest legal move (when leading: the weakest single, holding any required
card) — and a strike.  At ``max_strikes`` strikes, or when the bot is gone (disconnect,
crash, never connected), the seat **forfeits**: a fallback policy (the weakest legal play,
passing only when it has none) plays it to the end, so the other seats' results stay
meaningful, and the result marks the forfeit.  Every fault is recorded with its reason.
Answers are judged, strikes counted and the referee's moves chosen by the SDK's judge
(:mod:`bigtwo.judge`), so :func:`bigtwo.play_local` judges and plays exactly as the referee.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import secrets
import time
from collections.abc import Callable
from typing import Any

from bigtwo import PASS, Game, RuleSet
from bigtwo.combos import Move
from bigtwo.judge import Answer, default_move, fallback_move, judge, referee_move
from bigtwo.v1 import referee_pb2 as pb

from ..text import printable
from . import messages as msgs
from .results import Fault as ResultFault
from .results import HandScore, MatchResult, SeatResult
from .seat import DISCONNECTED, INBOX_LIMIT, Fault, Seat, SeatSpec
from .time_control import TimeControl

# the seat's channel and the referee's moves, still importable from here
__all__ = [
    "DISCONNECTED",
    "INBOX_LIMIT",
    "Fault",
    "MatchSession",
    "Seat",
    "SeatSpec",
    "default_move",
    "fallback_move",
    "referee_move",
    "round_trip_stats",
]


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
        self.seats = [Seat(i, s, s.time_control or self.tc) for i, s in enumerate(seats)]
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
            msgs.match_header(
                self.match_id,
                self.rules,
                self.seed,
                seats,
                self.tc,
                sandbox or {"name": "unknown"},
                explicit=deals is not None,
            )
        )

    # ----- connection side (called by the gRPC handler) -------------------------------
    def attach(self, seat: Seat, bot_name: str, stream: Any) -> None:
        seat.stream = stream
        seat.connected_at = time.perf_counter()
        seat.live = True
        seat.bot_name = printable(bot_name, 100)  # the bot's words: see arena.text
        seat.connected.set()
        names = [s.spec.name for s in self.seats]
        seat.send(msgs.match_start(self.match_id, seat.index, self.rules, seat.tc, names))
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
        # a strike, or the bot gone for good; a forfeit made before the first hand, or after
        # the last one, counts from the hand then
        at = hand if hand is not None else self.game.hand_no if self.started.is_set() else 0
        strike = seat.charge(kind, at, gone)
        # a detail may quote the bot (its stderr tail, its exception's message): made
        # harmless here, once, for every place it goes (results, record, terminal)
        fault = Fault(kind, seat.index, hand, turn, printable(detail, 500), strike)
        seat.faults.append(fault)
        self.record(msgs.fault_event(fault, seat))
        if not seat.gone:
            seat.send(msgs.fault_message(fault, seat))
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

    async def run(self) -> MatchResult:
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
                self.record(msgs.hand_end_event(result))
                self.broadcast(msgs.hand_end_message(result), flush=True)
                if self.on_hand_end:
                    self.on_hand_end(self, result)
                if game.match_over:
                    break
                if self.deals is None:
                    game.next_hand()
                else:
                    game.next_hand(self.deals[game.hand_no + 1], independent=True)
            summary = self.summary()
            self.broadcast(msgs.match_end_message(game, self.seats), flush=True)
            self.record(msgs.match_end_event(summary.to_json()))
            return summary
        finally:
            gc.unfreeze()  # a long-lived referee process must not keep them out for ever
            self.finished = True
            for seat in self.seats:
                await seat.drain()
                seat.close()

    def _abort(self, missing: list[Seat]) -> MatchResult:
        """End the match before its first hand: these seats' bots never started."""
        names = ", ".join(f"seat {s.index} {s.spec.name}" for s in missing)
        self.aborted = f"not every bot started ({names}): no hand was played"
        summary = self.summary().replace(aborted=self.aborted)
        self.broadcast(msgs.match_end_message(self.game, self.seats), flush=True)
        self.record(msgs.aborted_event(self.aborted))
        return summary

    def _start_hand(self) -> None:
        for seat in self.seats:
            seat.send(msgs.hand_start(self.game, seat.index))
        self.record(msgs.deal_event(self.game))

    async def _one_turn(self) -> None:
        g = self.game
        seat = self.seats[g.turn]
        self.turn_id += 1
        turn_id = self.turn_id
        t0 = time.perf_counter()
        chosen = None if seat.forfeited else await self._ask(seat, turn_id)
        by_referee = chosen is None  # the seat has forfeited, or its answer was a fault
        move = seat.referee_move(g) if chosen is None else chosen
        elapsed_ms = (time.perf_counter() - t0) * 1000
        lead = g.trick is None
        hand_no = g.hand_no
        g.apply(move)
        played = msgs.PlayedTurn(hand_no, turn_id, seat.index, move, lead, by_referee, elapsed_ms)
        self.record(played.event())
        self.broadcast(played.message())
        if g.trick is None and not g.hand_over and move is PASS and not lead:
            self.broadcast(msgs.trick_won(hand_no, g.turn))

    async def _ask(self, seat: Seat, turn_id: int) -> Move | None:
        """The seat's move, or None after recording a fault (caller plays the default)."""
        tc = seat.tc
        seat.send(msgs.turn_request(self.game, turn_id, tc.move_ms, seat.bank_ms))
        start = time.perf_counter()
        budget = (tc.move_ms + seat.bank_ms) / 1000
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
                self._fault(seat, "timeout", f"no action within {tc.move_ms} ms plus the time bank")
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
            if elapsed_ms > tc.move_ms:
                seat.bank_ms = max(0, seat.bank_ms - int(elapsed_ms - tc.move_ms))
            return self._judge(seat, action)

    def _judge(self, seat: Seat, action: pb.Action) -> Move | None:
        """The seat's answer, judged (:func:`bigtwo.judge.judge`); None after a fault."""
        answer = Answer(
            passes=getattr(action, "pass"),  # a Python keyword: only by name
            cards=tuple(action.cards),
            error=action.error,
            error_detail=action.error_detail,
        )
        verdict = judge(self.game, answer)
        if verdict.fault is not None:
            self._fault(seat, verdict.fault, verdict.detail)
        return verdict.move

    # ----- results -----------------------------------------------------------------------
    def turn_stats(self) -> dict[str, float]:
        """Round trip per bot move (turn request queued → action received), in ms."""
        return round_trip_stats(self.turn_times_ms)

    def summary(self) -> MatchResult:
        g = self.game
        places = g.places()
        return MatchResult(
            turn_round_trip=self.turn_stats(),
            match_id=self.match_id,
            rules=self.rules.to_dict(),
            seed=self.seed,
            match_over=g.match_over,
            hands=tuple(HandScore.of(r) for r in g.results),
            seats=tuple(
                SeatResult(
                    seat=s.index,
                    bot=s.spec.name,
                    score=g.scores[s.index],
                    penalty_points=g.penalty_totals[s.index],
                    place=places[s.index],
                    forfeit=s.forfeited,
                    forfeit_hand=s.forfeit_hand,
                    strikes=s.strikes,
                    faults=tuple(ResultFault.from_json(f.to_dict()) for f in s.faults),
                    # a Hello was accepted: the bot started (whatever it did after)
                    connected=s.connected_at is not None,
                    log=s.spec.log or None,
                )
                for s in self.seats
            ),
        )
