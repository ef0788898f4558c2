"""Property tests over random seeds, random legal play, every preset and random option mixes.

- 52 cards conserved, no card in two places, at every step;
- every hand ends with exactly one winner; zero-sum scorings sum to zero;
- ``legal_moves()`` is exactly the set of moves ``apply`` accepts (every combination the
  hand can make is either listed and accepted or unlisted and refused; random junk is
  refused; a refused move leaves the state untouched);
- a bot's client, knowing only its own hand and the public position (``Position``), lists
  the same legal moves and gives the same refusals as the game;
- ``beats`` is a strict order within a size (irreflexive, antisymmetric, transitive).
"""

import random

from game_state import snapshot
from hypothesis import given
from hypothesis import strategies as st

from bigtwo import CARDS, PASS, Game, IllegalMoveError, RuleSet
from bigtwo.legality import Position
from bigtwo.rules import _CHOICES, _FLAGS, PRESETS


@st.composite
def rule_sets(draw):
    """A preset, or a preset with a random mix of options changed."""
    base = draw(st.sampled_from(sorted(PRESETS)))
    if draw(st.booleans()):
        return RuleSet.preset(base)
    changes = {}
    for name in _FLAGS:
        if draw(st.booleans()):
            changes[name] = draw(st.booleans())
    for name, choices in _CHOICES.items():
        if name != "match_end" and draw(st.booleans()):
            changes[name] = draw(st.sampled_from(choices))
    if changes.get("teams"):
        changes["players"] = 4
    scoring = changes.get("scoring", RuleSet.preset(base).scoring)
    changes["match_end"] = "threshold" if scoring == "family" else "hands"
    changes["match_end_value"] = draw(st.integers(1, 3)) if scoring != "family" else 60
    return RuleSet.preset(base).replace(**changes)


def check_cards(g):
    held = [set(h) for h in g.hands]
    played = [c for a in g.history if a.hand == g.hand_no for c in a.move.cards]
    assert len(played) == len(set(played))
    everything = set(played)
    for h in held:
        assert not (h & everything)
        everything |= h
    assert sum(len(h) for h in held) + len(played) == len(everything)
    dealt = g.rules.hand_size * g.players
    assert len(everything) == dealt <= 52
    assert [len(h) for h in held] == list(g.counts)


def check_legality(g, rng):
    legal = g.legal_moves()
    assert legal, "a seat to play always has a move"
    masks = {m.mask for m in legal if m is not PASS}
    assert len(masks) == len([m for m in legal if m is not PASS])  # no duplicates
    for m in legal:
        assert g.refusal(m) is None, (m, g.refusal(m))
    if PASS not in legal:
        assert g.refusal(PASS) is not None
    hand = g.hand(g.turn)
    every = g.rules.legal_plays(hand)  # every combination the hand can make
    for combo in every:
        if combo.mask in masks:
            assert g.refusal(combo) is None
            assert g.refusal(list(combo.cards)) is None  # same move given as cards
        else:
            assert g.refusal(combo) is not None, (combo, g.trick)
    assert masks <= {c.mask for c in every}
    check_client_agrees(g, legal, every)
    before = snapshot(g)
    for _ in range(3):  # random junk: sizes 1..6 from the whole deck
        junk = rng.sample(CARDS, rng.randint(1, 6))
        combo = g.rules.classify(junk)
        if combo is None or combo.mask not in masks:
            try:
                g.apply(junk)
            except IllegalMoveError:
                pass
            else:
                raise AssertionError(f"accepted {junk} not in legal_moves()")
            assert snapshot(g) == before


def check_client_agrees(g, legal, every):
    """The seat's own view (its cards and what the referee's turn request says) judges
    every move as the game does: the generator and the refusals of bigtwo.legality run on
    both, so they must agree move for move."""
    seat = g.turn
    pos = Position(
        g.rules,
        seat,
        sum(1 << c for c in g.hand(seat)),
        list(g.cards_left),
        to_beat=g.trick,
        must_include=g.must_include,
        reversed=g.reversed,
        first_trick=g.first_trick,
        lone_two_lifted=g.lone_two_lifted,
    )
    mine = pos.legal_moves()
    assert sorted(m.mask for m in mine) == sorted(m.mask for m in legal)
    assert (PASS in mine) == (PASS in legal)
    assert pos.refusal(PASS) == g.refusal(PASS)
    for combo in every:
        assert pos.refusal(combo) == g.refusal(combo), combo


@given(rules=rule_sets(), seed=st.integers(0, 10**9), move_seed=st.integers(0, 10**6))
def test_random_play_keeps_every_invariant(rules, seed, move_seed):
    rng = random.Random(move_seed)
    g = Game(rules, seed=seed)
    hands_played = 0
    while True:
        steps = 0
        while not g.hand_over:
            check_cards(g)
            if steps % 3 == 0:
                check_legality(g, rng)
            g.apply(rng.choice(g.legal_moves()))
            steps += 1
            assert steps < 2000, "a hand must end"
        check_cards(g)
        result = g.results[-1]
        assert [s for s in range(g.players) if g.counts[s] == 0] == [result.winner]
        if rules.scoring != "family" or rules.teams:
            assert sum(result.scores) == 0
        else:
            assert result.scores[result.winner] == 0 and all(x <= 0 for x in result.scores)
        assert g.legal_moves() == []
        hands_played += 1
        if g.match_over or hands_played >= 3:
            break
        g.next_hand()
    if g.match_over and rules.match_end == "hands":
        assert len(g.results) == rules.match_end_value


@st.composite
def same_size_triples(draw):
    rules = draw(rule_sets())
    rng = random.Random(draw(st.integers(0, 10**9)))
    pool = rules.legal_plays(rng.sample(CARDS, 20))
    size = draw(st.sampled_from(sorted({c.size for c in pool})))
    same = [c for c in pool if c.size == size]
    return rules, [same[draw(st.integers(0, len(same) - 1))] for _ in range(3)]


@given(data=same_size_triples(), reversed=st.booleans())
def test_beats_is_a_strict_order_within_a_size(data, reversed):
    rules, (a, b, c) = data
    for x in (a, b, c):
        assert not rules.beats(x, x, reversed)
    for x, y in ((a, b), (b, c), (a, c)):
        assert not (rules.beats(x, y, reversed) and rules.beats(y, x, reversed))
        if not x.mask & y.mask and x.size < 5:
            # disjoint singles/pairs/triples (as in play: one deck) are always comparable
            assert rules.beats(x, y, reversed) or rules.beats(y, x, reversed)
    if rules.beats(a, b, reversed) and rules.beats(b, c, reversed):
        assert rules.beats(a, c, reversed)
    if rules.beats(c, b, reversed) and rules.beats(b, a, reversed):
        assert rules.beats(c, a, reversed)


@given(rules=rule_sets(), seed=st.integers(0, 10**9))
def test_classify_agrees_with_generation(rules, seed):
    rng = random.Random(seed)
    hand = rng.sample(CARDS, 13)
    for combo in rules.legal_plays(hand):
        again = rules.classify(list(combo.cards))
        assert again == combo and again.key == combo.key
    for _ in range(30):
        sub = rng.sample(hand, rng.choice([1, 2, 3, 4, 5, 5, 5]))
        combo = rules.classify(sub)
        generated = {c.mask for c in rules.legal_plays(hand)}
        assert (combo is not None) == (sum(1 << c for c in sub) in generated)


# ----- no_lone_two_finish on small hands full of 2s (docs/rules.md §4.10) --------------------
_TWOS = [c for c in CARDS if c.rank == 12]
_NOT_TWOS = [c for c in CARDS if c.rank != 12]


@st.composite
def small_deals(draw, players):
    """``players`` hands of a few cards, mostly 2s (so that lone 2s, a 2 as the lowest card
    dealt and several lone-2 leaders in a row all happen), some seats maybe all 2s."""
    others = draw(st.lists(st.sampled_from(_NOT_TWOS), max_size=3, unique=True))
    pool = draw(st.permutations(_TWOS + others))
    used = draw(st.integers(players, len(pool)))
    cuts = sorted(
        draw(st.sets(st.integers(1, used - 1), min_size=players - 1, max_size=players - 1))
    )
    bounds = [0, *cuts, used]
    return [pool[bounds[i] : bounds[i + 1]] for i in range(players)]


@st.composite
def lone_two_tables(draw):
    rules = draw(rule_sets())
    players = 4 if rules.teams else draw(st.sampled_from([2, 3, 4]))
    rules = rules.replace(
        players=players,
        no_lone_two_finish=True,
        opening=draw(st.sampled_from(_CHOICES["opening"])),
        match_end="hands",
        match_end_value=2,
    )
    leader = draw(st.none() | st.integers(0, players - 1))
    return rules, leader, draw(small_deals(players)), draw(small_deals(players))


@given(table=lone_two_tables(), independent=st.booleans(), move_seed=st.integers(0, 10**6))
def test_lone_two_rule_never_leaves_a_seat_without_a_move(table, independent, move_seed):
    rules, leader, first, second = table
    rng = random.Random(move_seed)
    g = Game.from_hands(rules, first, leader=leader)
    for hand_no in range(2):
        if hand_no:
            g.next_hand(second, independent=independent)
        steps = 0
        while not g.hand_over:
            check_legality(g, rng)  # asserts, first of all, that there is a legal move
            if g.trick is None and g.must_include is not None:
                assert g.must_include in g.hand(g.turn)  # only its holder can be asked for it
            g.apply(rng.choice(g.legal_moves()))
            steps += 1
            assert steps < 200, "a hand must end"
        assert g.counts[g.winner] == 0
