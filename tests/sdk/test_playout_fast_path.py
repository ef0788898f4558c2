"""The engine's fast path for a search's play-outs: ``Game.clone(history=False)`` (a
play-out copy that keeps no history) and ``Game.apply_legal`` (a move known legal, played
without checking it again).  The fast path must play exactly the game the checked path
plays: the same states, legal moves, results and scores, under every preset and option
mix (tests/sdk/test_properties.py's ``rule_sets``), hand after hand."""

import random

import pytest
from game_state import snapshot
from hypothesis import given, settings
from hypothesis import strategies as st
from test_clone_resample import advance
from test_properties import rule_sets

from bigtwo import PASS, PRESETS, Game, IllegalMoveError, RuleSet


def state(g: Game) -> tuple:  # type: ignore[type-arg]
    """Everything of the position but the history (a play-out copy keeps none)."""
    return (*snapshot(g)[:5], *snapshot(g)[6:], g.winner, g.match_over, g.hand_no,
            tuple(g.penalty_totals), g.mover_mask, g.next_seat)  # fmt: skip


def check_same_play(rules: RuleSet, seed: int, before: int) -> None:
    g = Game(rules, seed=seed)
    advance(g, random.Random(seed), before)
    fast = g.clone(history=False)
    assert state(fast) == state(g) and fast.history == []
    rng = random.Random(seed + 1)
    for _ in range(300):
        if g.match_over:
            break
        if g.hand_over:
            g.next_hand()
            fast.next_hand()
        legal = g.legal_moves()
        assert fast.legal_moves() == legal
        move = rng.choice(legal)
        recorded = len(g.history)
        g.apply(move)  # the checked path
        fast.apply_legal(move)  # the fast path, on the same move
        assert state(fast) == state(g)
        assert len(g.history) == recorded + 1 and fast.history == []
        assert fast.results == g.results and fast.scores == g.scores
    assert fast.places() == g.places() and fast.penalty_totals == g.penalty_totals
    strength = rules.tables.strength
    for h in [*fast.hands, *(r for res in fast.results for r in res.remaining)]:
        assert list(h) == sorted(h, key=strength.__getitem__)  # weakest first


@settings(max_examples=60, deadline=None)
@given(rules=rule_sets(), seed=st.integers(0, 10**6), before=st.integers(0, 120))
def test_the_fast_path_plays_exactly_the_checked_game(rules, seed, before):
    check_same_play(rules, seed, before)


@pytest.mark.parametrize("preset", sorted(PRESETS))
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), before=st.integers(0, 60))
def test_the_fast_path_plays_exactly_the_checked_game_under_each_preset(preset, seed, before):
    check_same_play(RuleSet.preset(preset), seed, before)


@settings(max_examples=30, deadline=None)
@given(rules=rule_sets(), seed=st.integers(0, 10**6), before=st.integers(0, 120))
def test_a_play_out_copy_leaves_the_original_and_its_history_alone(rules, seed, before):
    g = Game(rules, seed=seed)
    advance(g, random.Random(seed), before)
    kept, history = state(g), list(g.history)
    fast = g.clone(history=False)
    rng = random.Random(seed)
    while not fast.hand_over:
        fast.apply_legal(rng.choice(fast.legal_moves()))
    assert state(g) == kept and g.history == history
    assert fast.clone().history == []  # a copy of a play-out copy keeps none either


def test_apply_legal_refuses_what_would_break_the_state_and_apply_still_checks():
    rules = RuleSet.preset("hk")
    g = Game(rules, seed=3).clone(history=False)
    other = next(s for s in range(4) if s != g.turn)
    theirs = rules.classify([g.hand(other)[0]])
    with pytest.raises(IllegalMoveError, match="holds"):
        g.apply_legal(theirs)  # not the seat's cards: refused, state untouched
    foreign = RuleSet.preset("pusoy").classify([g.hand(g.turn)[0]])
    with pytest.raises(IllegalMoveError):
        g.apply_legal(foreign)  # a combination of other rules
    for junk in ("3D", [0], None):
        with pytest.raises(IllegalMoveError):
            g.apply_legal(junk)  # not PASS nor a combination: apply is the way for text
    with pytest.raises(IllegalMoveError):
        g.apply(PASS)  # the checked path still refuses a pass on the opening lead
    with pytest.raises(ValueError, match="no observation"):
        g.observation(0)  # without a history an observation would be wrong: none
    while not g.hand_over:
        g.apply_legal(g.legal_moves()[0])
    with pytest.raises(IllegalMoveError, match="over"):
        g.apply_legal(PASS)


@pytest.mark.parametrize("suit_order", ["DCHS", "CSHD", "CSDH"])
def test_the_highest_and_lowest_card_are_the_parsed_ones(suit_order):
    """``RuleSet.highest_card`` (read at every pusoy hand's end) is an index, not a parse:
    the same card as the text names."""
    from bigtwo.cards import Card

    rules = RuleSet.preset("pusoy").replace(suit_order=suit_order)
    assert rules.highest_card == Card("2" + suit_order[-1])
    assert str(rules.highest_card) == "2" + suit_order[-1]
    assert str(rules.lowest_card) == "3" + suit_order[0]
