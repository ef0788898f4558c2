"""A person's seat (issue 12's groundwork): a seat of the referee like any bot's, relayed to
a browser.

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
from collections.abc import Sequence
from typing import Any

import grpc

from bigtwo import PASS, RuleSet
from bigtwo.client import MAX_MESSAGE_BYTES, SeatView
from bigtwo.v1 import referee_pb2 as pb
from bigtwo.v1 import referee_pb2_grpc as pb_grpc
from bigtwo.wire import PROTOCOL_VERSION

from ..sandbox.base import Credentials

NOT_YOUR_TURN = "it is not your turn (the referee may have played your time-out's move)"


def _cards(ids: Sequence[int], rules: RuleSet) -> list[str]:
    return [str(c) for c in rules.sort_cards(ids)]


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
            put({"type": "match_start", "seat": started.seat, "rules": started.rules.to_dict()})
            return None
        view = self._view
        if view is None:
            raise RuntimeError(f"referee sent {kind} before match_start")
        rules = view.rules
        if kind == "hand_start":
            view.hand_start(msg.hand_start)
            obs = view.observation()
            put({"type": "hand_start", "hand": obs.hand_no, "cards": [str(c) for c in obs.hand]})
        elif kind == "turn":
            self._turn = msg.turn
            obs = view.observation(msg.turn)
            put(
                {
                    "type": "turn",
                    "turn_id": msg.turn.turn_id,
                    "cards": [str(c) for c in obs.hand],
                    "to_beat": [str(c) for c in obs.trick.cards] if obs.trick else None,
                    "legal": [
                        "pass" if m is PASS else [str(c) for c in m.cards]  # type: ignore[union-attr]
                        for m in obs.legal_moves
                    ],
                    "cards_left": list(obs.cards_left),
                    "move_ms": msg.turn.move_ms_left,
                    "bank_ms": msg.turn.bank_ms_left,
                }
            )
        elif kind == "move":
            action = view.move(msg.move)
            if action.seat == self.seat:
                self._turn = None  # answered, or played by the referee for the time-out
            cards = (
                None
                if action.move is PASS
                else _cards(
                    [int(c) for c in action.move.cards],
                    rules,  # type: ignore[union-attr]
                )
            )
            put(
                {
                    "type": "move",
                    "seat": action.seat,
                    "cards": cards,
                    "by_referee": msg.move.by_referee,
                }
            )
        elif kind == "trick_won":
            view.trick_won(msg.trick_won)
            put({"type": "trick_won", "seat": msg.trick_won.seat})
        elif kind == "hand_end":
            result = view.hand_end(msg.hand_end)
            put({"type": "hand_end", "winner": result.winner, "scores": list(result.scores)})
        elif kind == "fault":
            f = msg.fault
            put({"type": "fault", "kind": f.kind, "detail": f.detail, "strikes": f.strikes})
        elif kind == "match_end":
            end = msg.match_end
            put({"type": "match_end", "scores": list(end.scores), "places": list(end.places)})
            return end
        return None

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
                return f"{' '.join(move) or 'nothing'} is not a combination under these rules"
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
