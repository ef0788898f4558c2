"""What the referee tells the seats and the record, built side by side.

Each thing that happens in a match is described once — a move as a :class:`PlayedTurn`, a
fault as its :class:`~.seat.Fault`, a hand's end as the engine's ``HandResult``, the match's
end as the game and its seats — and from that one description come both the seats'
protobuf message (``proto/bigtwo/v1/referee.proto``) and the record's event (whose format
:mod:`bigtwo.record` owns), so the wire and the record cannot tell two stories.  The session
(:mod:`.session`) decides what happens; this module only writes it down.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from bigtwo import PASS, Game, RuleSet
from bigtwo.combos import Move
from bigtwo.game import HandResult
from bigtwo.record import aborted_event, deal_event, hand_end_event, header, match_end_event
from bigtwo.record import fault_event as _fault_event
from bigtwo.record import turn_event as _turn_event
from bigtwo.v1 import referee_pb2 as pb
from bigtwo.wire import category_name, opt_card, rules_to_pb

from .seat import Fault, Seat, SeatSpec
from .time_control import TimeControl

__all__ = [
    "PlayedTurn",
    "aborted_event",
    "deal_event",
    "fault_event",
    "fault_message",
    "hand_end_event",
    "hand_end_message",
    "hand_start",
    "match_end_event",
    "match_end_message",
    "match_header",
    "match_start",
    "trick_won",
    "turn_request",
]


# ----- the match's start ---------------------------------------------------------------
def match_header(
    match_id: str,
    rules: RuleSet,
    seed: int | str,
    seats: list[SeatSpec],
    tc: TimeControl,
    sandbox: dict[str, Any],
    explicit: bool,
) -> dict[str, Any]:
    """The record's ``match`` event (``explicit``: the deals are given, not the seed's)."""
    listed = [
        {"seat": i, "bot": s.name}
        | ({"log": s.log} if s.log else {})
        | ({"time_control": asdict(s.time_control)} if s.time_control else {})
        for i, s in enumerate(seats)
    ]
    return header(match_id, rules, seed, listed, sandbox, explicit, time_control=asdict(tc))


def match_start(
    match_id: str, seat: int, rules: RuleSet, tc: TimeControl, names: list[str]
) -> pb.RefereeMessage:
    """A seat's first message, once its Hello is accepted."""
    return pb.RefereeMessage(
        match_start=pb.MatchStart(
            match_id=match_id,
            seat=seat,
            players=rules.players,
            rules=rules_to_pb(rules),
            time_control=tc.to_pb(),
            seat_names=names,
        )
    )


# ----- a hand ----------------------------------------------------------------------------
def hand_start(game: Game, seat: int) -> pb.RefereeMessage:
    """The hand as ``seat`` is told it: its own cards only (the record's ``deal`` event,
    :func:`deal_event`, holds every seat's)."""
    return pb.RefereeMessage(
        hand_start=pb.HandStart(
            hand=game.hand_no,
            cards=[int(c) for c in game.hand(seat)],
            cards_left=game.counts,
            leader=game.turn,
            must_include=opt_card(game.must_include),
        )
    )


def turn_request(game: Game, turn_id: int, move_ms: int, bank_ms: int) -> pb.RefereeMessage:
    """Ask the seat to move: everything it needs to choose, and its clock."""
    return pb.RefereeMessage(
        turn=pb.TurnRequest(
            turn_id=turn_id,
            hand=game.hand_no,
            move_ms_left=move_ms,
            bank_ms_left=bank_ms,
            to_beat=[] if game.trick is None else [int(c) for c in game.trick.cards],
            must_include=opt_card(game.must_include),
            cards_left=game.counts,
            reversed=game.reversed,
            first_trick=game.first_trick,
            lone_two_lifted=game.lone_two_lifted,
            locked_out=sorted(game.locked_out),
        )
    )


@dataclass(frozen=True, slots=True)
class PlayedTurn:
    """One move as it was played: the description that both every seat's ``MoveEvent`` and
    the record's ``turn`` event are made from."""

    hand: int
    turn: int  # the turn id (counted over the match, from 1)
    seat: int
    move: Move
    lead: bool  # the move opened a trick
    by_referee: bool  # the referee chose it (a fault, or a forfeited seat)
    ms: float  # from the turn's start to the move chosen

    def message(self) -> pb.RefereeMessage:
        """The ``MoveEvent`` every seat is shown."""
        move = self.move
        played = None if move is PASS else move
        return pb.RefereeMessage(
            move=pb.MoveEvent(
                hand=self.hand,
                seat=self.seat,
                cards=[] if played is None else [int(c) for c in played.cards],
                lead=self.lead,
                category=category_name(played),  # type: ignore[arg-type]
                by_referee=self.by_referee,
                **{"pass": played is None},
            )
        )

    def event(self) -> dict[str, Any]:
        """The record's ``turn`` event."""
        return _turn_event(self.hand, self.turn, self.seat, self.move, self.by_referee, self.ms)


def trick_won(hand: int, seat: int) -> pb.RefereeMessage:
    """Everyone passed after ``seat``'s play: it leads the next trick."""
    return pb.RefereeMessage(trick_won=pb.TrickWon(hand=hand, seat=seat))


# ----- faults ----------------------------------------------------------------------------
def fault_event(fault: Fault, seat: Seat) -> dict[str, Any]:
    """The record's ``fault`` event, with the seat's strikes and forfeit after it."""
    return _fault_event(fault.seat, fault.to_dict(), seat.strikes, seat.forfeited)


def fault_message(fault: Fault, seat: Seat) -> pb.RefereeMessage:
    """The ``Fault`` message that tells the seat (turn id 0: no turn asked yet)."""
    return pb.RefereeMessage(
        fault=pb.Fault(
            turn_id=fault.turn or 0,
            kind=fault.kind,
            detail=fault.detail,
            strikes=seat.strikes,
            forfeited=seat.forfeited,
        )
    )


# ----- ends ------------------------------------------------------------------------------
def hand_end_message(result: HandResult) -> pb.RefereeMessage:
    """A hand's result as every seat is told it (the record's is :func:`hand_end_event`)."""
    return pb.RefereeMessage(
        hand_end=pb.HandEnd(
            hand=result.hand,
            winner=result.winner,
            cards_left=result.cards_left,
            penalties=result.penalties,
            scores=result.scores,
            cumulative=result.cumulative,
        )
    )


def match_end_message(game: Game, seats: list[Seat]) -> pb.RefereeMessage:
    """The last message of every seat: scores, places, who forfeited (the record's
    :func:`match_end_event` is made from the session's summary)."""
    return pb.RefereeMessage(
        match_end=pb.MatchEnd(
            scores=game.scores,
            places=game.places(),
            forfeited=[s.forfeited for s in seats],
        )
    )
