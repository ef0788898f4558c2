"""A person's seat: a seat of the referee like any bot's, relayed to a browser.

The referee does not know a person sits there: the seat is a ``remote`` seat of
:func:`arena.match.run_match`, and :class:`HumanSeat` is its client, in the web server's
process, speaking the same gRPC stream a bot speaks.  So legality, time control, faults,
scoring and the record are the referee's, exactly as for a bot.  What the referee says
becomes plain JSON updates (``updates``, a queue the page's connection drains); what the
person chooses comes back through :meth:`HumanSeat.answer`, which first asks the engine
(the seat's own :class:`bigtwo.legality.Position`, the functions the referee judges with)
and, when the move is not legal, returns the engine's reason and sends nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import grpc

from bigtwo import PASS, Observation, RuleSet
from bigtwo.cards import format_cards, parse_cards
from bigtwo.client import MAX_MESSAGE_BYTES, SeatView
from bigtwo.v1 import referee_pb2 as pb
from bigtwo.v1 import referee_pb2_grpc as pb_grpc
from bigtwo.wire import PROTOCOL_VERSION

from ..sandbox.base import Credentials

NOT_YOUR_TURN = "it is not your turn (the referee may have played your time-out's move)"


def epoch_ms() -> float:
    """Wall-clock ms: what the page compares with its own clock (countdowns, latency)."""
    return round(time.time() * 1000, 1)


def _move_json(move: Any) -> dict[str, Any]:
    """A move as the page gets it: its cards (None for a pass) and its words."""
    if move is PASS:
        return {"cards": None, "label": "pass"}
    return {"cards": [str(c) for c in move.cards], "label": move.describe()}


def _shown(rules: RuleSet, cards: Sequence[str]) -> str:
    try:
        return format_cards(rules.sort_cards(parse_cards(" ".join(cards))))
    except ValueError:
        return " ".join(cards)


class HumanSeat:
    """One person's seat.  ``play`` runs the seat's stream until the match ends (or the
    person leaves: cancelling it closes the stream, a disconnect the referee handles as it
    handles a bot's); ``updates`` carries what the page shows; ``answer`` takes a move."""

    def __init__(self, name: str = "you") -> None:
        self.name = name
        self.updates: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.seat = -1
        self.rules: RuleSet | None = None
        self._view: SeatView | None = None
        self._call: Any = None
        self._turn: pb.TurnRequest | None = None

    async def play(self, creds: Credentials) -> pb.MatchEnd | None:
        try:
            return await self._play(creds)
        except asyncio.CancelledError:  # the person left: whoever reads updates is told
            self.updates.put_nowait({"type": "closed"})
            raise

    async def _play(self, creds: Credentials) -> pb.MatchEnd | None:
        options = [
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ]
        async with grpc.aio.insecure_channel(creds.address, options=options) as channel:
            call = self._call = pb_grpc.RefereeStub(channel).Play()
            hello = pb.Hello(
                match_id=creds.match_id,
                seat=creds.seat,
                token=creds.token,
                bot_name=self.name,
                bot_version="human",
                protocol_version=PROTOCOL_VERSION,
            )
            await call.write(pb.BotMessage(hello=hello))
            while True:
                batch = await call.read()
                if batch is grpc.aio.EOF:
                    self.updates.put_nowait({"type": "closed"})
                    return None
                for msg in batch.messages:
                    end = self._relay(msg)
                    if end is not None:
                        await call.done_writing()
                        return end

    def _relay(self, msg: pb.RefereeMessage) -> pb.MatchEnd | None:
        kind = msg.WhichOneof("msg")
        put = self.updates.put_nowait
        if kind == "match_start":
            started = self._view = SeatView(msg.match_start)
            self.seat, self.rules = started.seat, started.rules
            tc = msg.match_start.time_control
            put(
                {
                    "type": "match_start",
                    "seat": started.seat,
                    "names": list(started.seat_names),
                    "rules": started.rules.to_dict(),
                    "move_ms": tc.move_ms,
                    "bank_ms": tc.bank_ms,
                    "max_strikes": tc.max_strikes,
                }
            )
            return None
        view = self._view
        if view is None:
            raise RuntimeError(f"referee sent {kind} before match_start")
        if kind == "hand_start":
            view.hand_start(msg.hand_start)
            obs = view.observation()
            must = view.opening_card
            put(
                {
                    "type": "hand_start",
                    "hand": obs.hand_no,
                    "cards": [str(c) for c in obs.hand],
                    "cards_left": list(obs.cards_left),
                    "leader": view.leader,
                    "must_include": str(must) if must is not None else None,
                }
            )
        elif kind == "turn":
            self._turn = msg.turn
            obs = view.observation(msg.turn)
            trick = obs.trick
            put(
                {
                    "type": "turn",
                    "turn_id": msg.turn.turn_id,
                    "hand": obs.hand_no,
                    "cards": [str(c) for c in obs.hand],
                    "to_beat": [str(c) for c in trick.cards] if trick else None,
                    "to_beat_label": trick.describe() if trick else None,
                    "legal": [_move_json(m) for m in obs.legal_moves],
                    "must_include": str(obs.must_include) if obs.must_include else None,
                    "locked_out": sorted(obs.locked_out),
                    "reversed": obs.reversed,
                    "cards_left": list(obs.cards_left),
                    "move_ms": msg.turn.move_ms_left,
                    "bank_ms": msg.turn.bank_ms_left,
                    "sent": epoch_ms(),
                }
            )
        elif kind == "move":
            action = view.move(msg.move)
            if action.seat == self.seat:
                self._turn = None  # answered, or played by the referee for the time-out
            put(
                {
                    "type": "move",
                    "hand": action.hand,
                    "seat": action.seat,
                    "lead": action.lead,
                    "by_referee": msg.move.by_referee,
                    "cards_left": list(view.cards_left),
                    "t": epoch_ms(),
                }
                | _move_json(action.move)
            )
        elif kind == "trick_won":
            view.trick_won(msg.trick_won)
            put({"type": "trick_won", "seat": msg.trick_won.seat})
        elif kind == "hand_end":
            result = view.hand_end(msg.hand_end)
            put(
                {
                    "type": "hand_end",
                    "hand": result.hand,
                    "winner": result.winner,
                    "cards_left": list(result.cards_left),
                    "penalties": list(result.penalties),
                    "scores": list(result.scores),
                    "cumulative": list(result.cumulative),
                }
            )
        elif kind == "fault":
            f = msg.fault
            put({"type": "fault", "kind": f.kind, "detail": f.detail, "strikes": f.strikes})
        elif kind == "match_end":
            end = msg.match_end
            put(
                {
                    "type": "match_end",
                    "scores": list(end.scores),
                    "places": list(end.places),
                    "forfeited": list(end.forfeited),
                }
            )
            return end
        return None

    def check(self, cards: Sequence[str]) -> dict[str, Any]:
        """A selection in the engine's words, whether it is the person's turn or not:
        ``label`` (``pair of 9s (9D 9S)``, ``not a combination``), ``playable`` (it may be
        played now) and ``why`` it may not (the refusal the referee would give)."""
        view = self._view
        if view is None:
            return {"label": "", "playable": False, "why": "the match has not started yet"}
        if not cards:
            return {"label": "", "playable": False, "why": "choose cards"}
        text = " ".join(cards)
        try:
            combo = view.rules.classify(text)
        except ValueError as exc:
            return {"label": "not cards", "playable": False, "why": str(exc)}
        if combo is None:
            why = f"{_shown(view.rules, cards)} is not a combination under these rules"
            return {"label": "not a combination", "playable": False, "why": why}
        label = combo.describe()
        if self._turn is None:
            return {"label": label, "playable": False, "why": "wait for your turn"}
        refused = view.position.refusal(combo)
        return {"label": label, "playable": not refused, "why": refused or None}

    def observation(self) -> Observation | None:
        """The person's observation at their turn (None when it is not their turn): what a
        bot would be given, for a hint.  Its history is a copy (the relay goes on)."""
        if self._turn is None or self._view is None:
            return None
        obs = self._view.observation(self._turn)
        return dataclasses.replace(obs, history=tuple(obs.history))

    async def answer(self, turn_id: int, move: Sequence[str] | str) -> str | None:
        """Play ``move`` (card texts such as ``["3D", "3S"]``, or ``"pass"``) for turn
        ``turn_id``.  Returns why it is refused — the engine's words, nothing sent — or None
        once it is on its way to the referee."""
        turn, view = self._turn, self._view
        if turn is None or view is None or turn.turn_id != turn_id:
            return NOT_YOUR_TURN
        if isinstance(move, str) and move.strip().lower() == "pass":
            why = view.position.refusal(PASS)
            cards: list[int] = []
        else:
            if isinstance(move, str) or not all(isinstance(c, str) for c in move):
                return "choose cards, or pass"
            try:
                combo = view.rules.classify(" ".join(move))
            except ValueError as exc:
                return str(exc)
            if combo is None:
                shown = _shown(view.rules, move) or "nothing"
                return f"{shown} is not a combination under these rules"
            why = view.position.refusal(combo)
            cards = [int(c) for c in combo.cards]
        if why:
            return why
        self._turn = None
        flags: dict[str, Any] = {"pass": not cards}
        await self._call.write(
            pb.BotMessage(action=pb.Action(turn_id=turn_id, cards=cards, **flags))
        )
        return None
