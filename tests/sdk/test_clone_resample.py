"""The engine as a search bot uses it: ``Game.clone()`` and ``Game.from_observation`` /
``Game.resample`` (OpenSpiel's ``Clone`` and ``ResampleFromInfostate``).

- a clone plays identically to the original (same legal moves, same states, same
  results, hand after hand), and moves applied to one never reach the other;
- a resampled game agrees with the observation it was made from: the same own hand, the
  same history, the same counts of the others' cards, the same position and legal moves —
  and it plays on under the engine's rules to the end of the hand.
"""

import dataclasses
import random

import pytest
from game_state import snapshot
from hypothesis import given, settings
from hypothesis import strategies as st
from test_properties import rule_sets

from bigtwo import Game, RuleSet


def advance(g: Game, rng: random.Random, steps: int) -> None:
    """Play ``steps`` random legal moves (dealing the next hand when one ends)."""
    for _ in range(steps):
        if g.match_over:
            return
        if g.hand_over:
            g.next_hand()
        g.apply(rng.choice(g.legal_moves()))


@settings(max_examples=30, deadline=None)
@given(rules=rule_sets(), seed=st.integers(0, 10**6), before=st.integers(0, 120))
def test_a_clone_plays_identically_to_the_original(rules, seed, before):
    g = Game(rules, seed=seed)
    rng = random.Random(seed)
    advance(g, rng, before)
    twin = g.clone()
    assert snapshot(twin) == snapshot(g) and twin.history == g.history
    # a move on the original does not reach the clone (and the other way round)
    if not g.hand_over:
        kept = snapshot(twin)
        probe = g.clone()
        probe.apply(probe.legal_moves()[-1])
        assert snapshot(g) == snapshot(twin) == kept
    a, b = random.Random(seed + 1), random.Random(seed + 1)
    for _ in range(250):  # on into the next hands (not always to the match's end: time)
        if g.match_over:
            break
        if g.hand_over:
            g.next_hand()
            twin.next_hand()
        legal = g.legal_moves()
        assert twin.legal_moves() == legal
        g.apply(a.choice(legal))
        twin.apply(b.choice(twin.legal_moves()))
        assert snapshot(twin) == snapshot(g)
        assert twin.observation(twin.turn) == g.observation(g.turn)
    assert twin.results == g.results and twin.places() == g.places()
    assert twin.match_over == g.match_over
    assert twin.penalty_totals == g.penalty_totals


@settings(max_examples=40, deadline=None)
@given(rules=rule_sets(), seed=st.integers(0, 10**6), before=st.integers(0, 150))
def test_a_resampled_game_agrees_with_the_observation(rules, seed, before):
    g = Game(rules, seed=seed)
    rng = random.Random(seed)
    advance(g, rng, before)
    if g.hand_over:
        return  # an observation given to act is taken in a hand in play
    obs = g.observation(g.turn)
    sample = Game.resample(obs, random.Random(seed + 7))
    me = obs.seat
    assert sample.hand(me) == obs.hand  # the same own hand
    assert tuple(sample.history) == tuple(obs.history)  # the same history
    assert sample.cards_left == obs.cards_left  # the same counts of the others' cards
    assert set().union(*map(set, sample.hands)).isdisjoint(set(obs.played_cards()))
    assert sample.observation(me) == obs  # the same position, as the seat sees it
    assert sample.legal_moves() == g.legal_moves()
    assert (sample.first_trick, sample.lone_two_lifted is not None) == (g.first_trick, True)
    # the true deal is one of the deals it can make: the same game, state for state
    truth = Game.from_observation(obs, g.hands)
    assert snapshot(truth) == snapshot(g)
    assert truth.scores == g.scores and truth.penalty_totals == g.penalty_totals
    # and a resampled game plays on under the rules to the end of the hand
    while not sample.hand_over:
        sample.apply(rng.choice(sample.legal_moves()))
    assert sample.results[-1].hand == obs.hand_no


def test_from_observation_refuses_a_deal_the_observation_excludes():
    g = Game(RuleSet.preset("hk"), seed=5)
    g.apply(g.legal_moves()[0])  # the opening lead: its card is seen
    obs = g.observation(g.turn)
    hands = [list(h) for h in g.hands]
    led = obs.history[-1].move.cards[0]
    other = next(s for s in range(4) if s != obs.seat)
    wrong = [*hands[other][1:], led]
    with pytest.raises(ValueError, match="a card that is seen"):
        Game.from_observation(obs, [wrong if s == other else h for s, h in enumerate(hands)])
    with pytest.raises(ValueError, match="holds"):
        Game.from_observation(obs, [h[1:] if s == other else h for s, h in enumerate(hands)])
    with pytest.raises(ValueError, match="own hand"):
        Game.from_observation(obs, [hands[other] if s == obs.seat else h for s, h in
                                    enumerate(hands)])  # fmt: skip
    with pytest.raises(ValueError, match="no hand in play"):
        Game.from_observation(dataclasses.replace(obs, turn=-1, hand=()), hands)


def test_rule_set_tables_are_public():
    rules = RuleSet.preset("pusoy")
    t = rules.tables
    assert t is rules.tables  # built once
    assert [t.strength[c] for c in range(52)] == [rules.strength(c) for c in range(52)]
    assert t.classify((0, 1)) == rules.classify("3D 3C")
