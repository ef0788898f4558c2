"""The referee's two accounts of a match — each seat's protobuf messages and the record's
events — are built from one description each (arena.referee.messages): they must agree."""

import random

from arena.referee.messages import PlayedTurn, fault_event, fault_message
from arena.referee.seat import Fault, Seat, SeatSpec
from arena.referee.time_control import TimeControl
from bigtwo import PASS, Game, RuleSet
from bigtwo.cards import parse_cards
from bigtwo.judge import default_move, fallback_move


def test_a_played_turn_tells_the_wire_and_the_record_the_same_move():
    rules = RuleSet.preset("hk")
    rng = random.Random(3)
    for seed in range(4):
        game = Game(rules, seed=seed)
        turn = 0
        while not game.hand_over:
            turn += 1
            move = rng.choice(game.legal_moves())
            played = PlayedTurn(game.hand_no, turn, game.turn, move, game.trick is None, False, 1.5)
            game.apply(move)
            event, wire = played.event(), played.message().move
            assert (event["hand"], event["seat"], event["by_referee"]) == (
                wire.hand,
                wire.seat,
                wire.by_referee,
            )
            assert event["turn"] == turn and event["type"] == "turn"
            assert getattr(wire, "pass") == (event["move"] == "pass") == (move is PASS)
            if move is not PASS:
                assert [int(c) for c in parse_cards(event["move"])] == list(wire.cards)
                assert wire.category == rules.classify(list(wire.cards)).category.label


def test_a_fault_tells_the_seat_what_the_record_keeps():
    seat = Seat(2, SeatSpec("bot"), TimeControl(bank_ms=0))
    seat.strikes, seat.forfeited = 3, True
    fault = Fault("illegal", 2, 1, 17, "7S 8S: not a combination", strike=True)
    event = fault_event(fault, seat)
    # the record's field order is part of its bytes
    assert list(event.items()) == [
        ("type", "fault"),
        ("seat", 2),
        ("kind", "illegal"),
        ("hand", 1),
        ("turn", 17),
        ("detail", "7S 8S: not a combination"),
        ("strike", True),
        ("strikes", 3),
        ("forfeited", True),
    ]
    wire = fault_message(fault, seat).fault
    assert (wire.turn_id, wire.kind, wire.detail, wire.strikes, wire.forfeited) == (
        17,
        "illegal",
        "7S 8S: not a combination",
        3,
        True,
    )
    before_any_turn = Fault("disconnect", 2, None, None, "never connected")
    assert fault_message(before_any_turn, seat).fault.turn_id == 0


def test_the_referee_plays_the_sdks_default_and_fallback_moves():
    from arena.referee import session

    assert session.default_move is default_move and session.fallback_move is fallback_move
    game = Game(RuleSet.preset("hk"), seed=1)
    legal = game.legal_moves()
    assert default_move(legal) == fallback_move(legal) == legal[0]  # leading: no pass
    game.apply(legal[0])
    following = game.legal_moves()
    assert following[-1] is PASS
    assert default_move(following) is PASS
    assert fallback_move(following) == (following[0] if len(following) > 1 else PASS)
