"""The rulebook's claims (docs/rules.md) that no other test checks: whole orders (every
five-card category, every no-two straight, the royal flush above every hand), boundaries
(a target reached, a threshold exceeded), corners of the options (circular and family
sequences suited, bombs that are not bombs, revolution with family straights and
lowest_straight_tops) and a stuck game once found.  Every test cites the section it checks.

The rest of the rulebook is tested with its subject: tests/sdk/test_cards.py (§2),
test_combinations.py (§3, §10), test_game.py (§1, §4–§8), test_ruleset.py (§9) and the
invariants of test_properties.py."""

import itertools

import pytest

from bigtwo import PASS, Card, Category, Game, RuleSet, deal
from bigtwo.scoring import penalty

HK = RuleSet.preset("hk")
FAMILY = RuleSet.preset("family")
PUSOY = RuleSet.preset("pusoy")
PRESETS = [HK, FAMILY, PUSOY]
PRESET_IDS = ["hk", "family", "pusoy"]

RANKS = "3456789TJQKA2"


def combo(rules, cards):
    c = rules.classify(cards)
    assert c is not None, cards
    return c


def beats(rules, a, b, reversed=False):
    return rules.beats(combo(rules, a), combo(rules, b), reversed)


def strictly_above(rules, a, b, reversed=False):
    return beats(rules, a, b, reversed) and not beats(rules, b, a, reversed)


def cat(rules, cards):
    c = rules.classify(cards)
    return None if c is None else c.category


def play(game, *moves):
    for m in moves:
        game.apply(m)


def cards(text):
    return [Card(t) for t in text.split()]


def mixed_run(ranks, suits="DCHSD"):
    return " ".join(r + s for r, s in zip(ranks, suits, strict=True))


# ----- §1 deck, players, deal ------------------------------------------------------------
def test_deal_is_reproducible_from_seed():
    # §1: dealing is driven by an explicit seed
    assert deal(HK, "abc", 3) == deal(HK, "abc", 3)
    assert deal(HK, "abc", 3) != deal(HK, "abc", 4)


@pytest.mark.parametrize("rules", [FAMILY, PUSOY], ids=["family", "pusoy"])
def test_direction_never_changes_turn_order(rules):
    # §1: turn order is always seat+1 (mod n), whatever `direction` says
    assert rules.direction == "counter-clockwise"
    g = Game.from_hands(rules, ["3D 3C 4D", "5D 6D", "7D 8D", "9D TD"], leader=0)
    g.apply("4D")
    assert g.turn == 1
    g.apply("5D")
    assert g.turn == 2


# ----- §2 card order -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "order, lowest, highest", [("DCHS", "3D", "2S"), ("CSHD", "3C", "2D"), ("CSDH", "3C", "2H")]
)
def test_suit_orders_lowest_and_highest(order, lowest, highest):
    # §2: lowest / highest card under each suit order
    rules = HK.replace(suit_order=order)
    assert str(rules.lowest_card) == lowest and str(rules.highest_card) == highest
    strengths = sorted(range(52), key=rules.strength)
    assert str(Card(strengths[0])) == lowest and str(Card(strengths[-1])) == highest
    suits = [s for s in order]
    for a, b in itertools.pairwise(suits):
        assert strictly_above(rules, "5" + b, "5" + a)


# ----- §3 combinations ---------------------------------------------------------------------
@pytest.mark.parametrize("rules", PRESETS, ids=PRESET_IDS)
def test_five_card_category_order(rules):
    # §3: straight < flush < full house < four + kicker < straight flush
    hands = [
        "TH JS QD KC AD",  # straight (highest no-two straight)
        "3H 5H 7H 9H JH",  # flush
        "3D 3C 3H 4C 4S",  # full house
        "3D 3C 3H 3S 4D",  # four of a kind
        "3S 4S 5S 6S 7S",  # straight flush
    ]
    expected = [
        Category.STRAIGHT,
        Category.FLUSH,
        Category.FULL_HOUSE,
        Category.FOUR_OF_A_KIND,
        Category.STRAIGHT_FLUSH,
    ]
    assert [cat(rules, h) for h in hands] == expected
    # lowest of each category still beats the highest of the one below
    assert strictly_above(rules, "3D 4D 5D 6D 8D", "TH JS QD KC AD")
    assert strictly_above(rules, "3D 3C 3H 4C 4S", "9S JS QS KS AS")
    assert strictly_above(rules, "3D 3C 3H 3S 4D", "2D 2C 2H AC AS")
    assert strictly_above(rules, "3D 4D 5D 6D 7D", "2D 2C 2H 2S AS")


# --- straights, no-two ---
def test_no_two_straights_valid_set_and_order():
    # §3 straights=no-two: 3-4-5-6-7 … T-J-Q-K-A, ordered by the top, no 2 ever
    runs = [RANKS[lo : lo + 5] for lo in range(8)]
    hands = [mixed_run(r) for r in runs]
    for h in hands:
        assert cat(HK, h) is Category.STRAIGHT, h
    for lo, hi in itertools.pairwise(hands):
        assert strictly_above(HK, hi, lo)
    for bad in (
        "JD QC KH AS 2D",
        "AD 2C 3H 4S 5D",
        "2C 3D 4H 5S 6D",
        "QD KC AH 2S 3D",
        "KD AC 2H 3S 4D",
    ):
        assert HK.classify(bad) is None, bad


def test_circular_straight():
    # §3 no-two+circular: 2-3-4-5-6 ranks above every other straight; its deciding card is 2
    rules = HK.replace(straights="no-two+circular")
    assert cat(rules, "2C 3D 4H 5S 6D") is Category.STRAIGHT
    assert strictly_above(rules, "2D 3C 4H 5S 6D", "TS JS QS KS AH")
    assert strictly_above(rules, "2S 3D 4D 5D 6D", "2H 3S 4S 5S 6S")
    assert rules.classify("AD 2C 3H 4S 5D") is None
    assert rules.classify("JD QC KH AS 2D") is None
    assert cat(rules, "2S 3S 4S 5S 6S") is Category.STRAIGHT_FLUSH
    assert strictly_above(rules, "2D 3D 4D 5D 6D", "TS JS QS KS AS")


# --- straights, family ---
def test_family_only_three_sequences_with_a_two():
    # §3 family: no other sequence with a 2 (e.g. Q-K-A-2-3)
    for bad in ("QD KC AH 2S 3D", "KD AC 2H 3S 4D"):
        assert FAMILY.classify(bad) is None
    # suited, they are plain flushes
    assert cat(FAMILY, "QD KD AD 2D 3D") is Category.FLUSH
    assert cat(FAMILY, "JD QD KD AD 2D") is Category.STRAIGHT_FLUSH
    assert cat(FAMILY, "AD 2D 3D 4D 5D") is Category.STRAIGHT_FLUSH
    assert cat(FAMILY, "2D 3D 4D 5D 6D") is Category.STRAIGHT_FLUSH


def test_lowest_straight_tops():
    # §3 lowest_straight_tops: 3-4-5-6-7 beats every other non-flush straight
    rules = HK.replace(lowest_straight_tops=True)
    assert strictly_above(rules, "3D 4C 5H 6S 7D", "TS JS QS KS AH")
    assert strictly_above(rules, "3D 4C 5H 6S 7S", "3S 4D 5D 6D 7H")  # deciding card: the 7
    # but it is still a straight: any flush / straight flush beats it
    assert strictly_above(rules, "3H 5H 7H 9H JH", "3D 4C 5H 6S 7D")
    # straight flushes are not affected
    assert strictly_above(rules, "4D 5D 6D 7D 8D", "3S 4S 5S 6S 7S")
    family = FAMILY.replace(lowest_straight_tops=True)
    assert strictly_above(family, "3D 4C 5H 6S 7D", "JC QD KH AD 2S")


# --- straight flushes vs flushes ---
def test_straight_flush_vs_flush_under_no_two():
    # §3: a 2 can never be in a straight, so suited 2-3-4-5-6 is a flush under no-two
    assert cat(HK, "2D 3D 4D 5D 6D") is Category.FLUSH
    assert cat(HK, "AD 2D 3D 4D 5D") is Category.FLUSH
    assert cat(HK, "TS JS QS KS AS") is Category.STRAIGHT_FLUSH
    assert strictly_above(HK, "3D 4D 5D 6D 7D", "2S 3S 4S 5S 6S")


@pytest.mark.parametrize("rules", [HK, PUSOY], ids=["hk", "pusoy"])
def test_royal_flush_of_top_suit_is_highest_hand(rules):
    # §3: with no-two the highest is T-J-Q-K-A of the top suit
    top = rules.suit_order[-1]
    royal = " ".join(r + top for r in "TJQKA")
    deck = [c for c in range(52) if str(Card(c)) not in royal.split()]
    others = [c for c in rules.legal_plays(deck) if len(c) == 5]
    assert others
    assert all(beats(rules, royal, o.cards) for o in others)


# ----- §4.6 bombs --------------------------------------------------------------------------
def test_bombs_anywhere():
    # §4.6 anywhere: four + kicker or straight flush on a single/pair/triple; the trick
    # becomes a five-card trick
    rules = HK.replace(bombs="anywhere")
    assert beats(rules, "3D 3C 3H 3S 4D", "2S")
    assert beats(rules, "3D 4D 5D 6D 7D", "2S 2H")
    assert beats(rules, "3D 3C 3H 3S 4D", "2S 2H 2C")
    assert not beats(rules, "3D 4C 5H 6S 7D", "2S")  # a straight is no bomb
    assert not beats(rules, "3D 3C 3H 4C 4S", "2S")  # nor a full house
    assert not beats(rules, "3D 5D 7D 9D JD", "2S")  # nor a flush
    g = Game.from_hands(
        rules, ["9D 9H 3D", "4D 4C 4H 4S 5C KS", "5D 6S 7S 8S 9S TS", "AD AH"], leader=0
    )
    g.apply("9D 9H")
    assert "4D 4C 4H 4S 5C" in {str(m) for m in g.legal_moves()}
    g.apply("4D 4C 4H 4S 5C")
    assert len(g.trick.cards) == 5
    assert {str(m) for m in g.legal_moves()} >= {"6S 7S 8S 9S TS", "pass"}
    assert g.refusal("5D") is not None
    g.apply(PASS)
    assert g.refusal("AD AH") is not None  # pair cannot answer a five-card trick


# ----- §4.9 revolution ----------------------------------------------------------------------
def test_revolution_comparisons():
    # §4.9: rank' = 12 - rank everywhere; suits and categories unchanged
    assert beats(HK, "3D", "2S", reversed=True)
    assert beats(HK, "3S", "3D", reversed=True)  # suit order unchanged
    assert beats(HK, "3D 3S", "3C 3H", reversed=True)
    assert beats(HK, "4D 4C 4H", "5D 5C 5H", reversed=True)
    assert beats(HK, "3D 3C 3H 2C 2S", "4D 4C 4H 5S 5H", reversed=True)
    assert beats(HK, "3D 3C 3H 3S 2D", "4D 4C 4H 4S 2S", reversed=True)
    # straight sequence order negated
    assert beats(HK, "3D 4C 5H 6S 7D", "TS JS QS KS AH", reversed=True)
    assert beats(FAMILY, "TS JS QH KH AS", "JC QD KH AD 2S", reversed=True)
    # flush rank lists reversed (ranks-then-suit): the lowest top rank is best
    assert beats(HK, "3H 4H 6H 7H 9H", "3S 4S 6S 7S TS", reversed=True)
    assert beats(FAMILY, "3D 5D 7D 9D JD", "4S 6S 8S TS 2S", reversed=True)
    # categories keep their order
    assert beats(HK, "3D 5D 7D 9D JD", "3C 4C 5H 6S 7D", reversed=True)
    assert beats(HK, "4D 5D 6D 7D 8D", "3C 3H 3S 3D 4C", reversed=True)
    # validity unchanged: 2-3-4-5-6 is still no straight under no-two
    assert HK.classify("2C 3D 4H 5S 6D") is None


def test_revolution_negates_lowest_straight_tops_order():
    # §3 lowest_straight_tops + §4.9: the order of straight sequences is negated, so the
    # top sequence (3-4-5-6-7 under this house rule) becomes the lowest
    # (was wrong at commit a9ed077: 3-4-5-6-7 stayed on top under a revolution)
    rules = HK.replace(lowest_straight_tops=True)
    assert strictly_above(rules, "TS JS QS KS AH", "3D 4C 5H 6S 7D", reversed=True)
    assert strictly_above(rules, "4D 5C 6H 7S 8D", "TS JS QS KS AH", reversed=True)
    # the straight flush 3-4-5-6-7 is untouched by the house rule: lowest sequence, so top
    assert strictly_above(rules, "3S 4S 5S 6S 7S", "TH JH QH KH AH", True)


# ----- §5 scoring --------------------------------------------------------------------------
def test_pusoy_bonuses():
    # §5 pusoy: +1 for the highest card (2♦ under CSHD); +4 more for all four 2s
    assert penalty(PUSOY, cards("2D")) == 2
    assert penalty(PUSOY, cards("2S")) == 1
    assert penalty(PUSOY, cards("2C 2S 2H 2D")) == 4 + 1 + 4
    csdh = PUSOY.replace(suit_order="CSDH")
    assert penalty(csdh, cards("2H")) == 2 and penalty(csdh, cards("2D")) == 1


# ----- §6 match ---------------------------------------------------------------------------
def test_match_end_target_reaches():
    # §6: hk target: match ends when a cumulative score reaches the target
    rules = HK.replace(match_end_value=10)
    g = Game.from_hands(rules, ["3D 4D", "5D 6D 7D 8D 9D 3S", "TD JD", "QD KD"])
    play(g, "3D", PASS, PASS, PASS, "4D")
    assert g.scores[0] == 10 and g.match_over
    rules = HK.replace(match_end_value=11)
    g = Game.from_hands(rules, ["3D 4D", "5D 6D 7D 8D 9D 3S", "TD JD", "QD KD"])
    play(g, "3D", PASS, PASS, PASS, "4D")
    assert not g.match_over


def test_match_end_threshold_exceeds():
    # §6: family threshold: when a player's cumulative points exceed the threshold
    hands = ["3D 3C", "5D 6D 7D 8D 9D 3S", "TD JD", "QD KD"]
    for value, over in ((6, False), (5, True)):
        g = Game.from_hands(FAMILY.replace(match_end_value=value), hands)
        g.apply("3D 3C")
        assert g.penalty_totals == [0, 6, 2, 2]
        assert g.match_over is over
        assert g.places()[0] == 1


# ----- robustness ------------------------------------------------------------------------
def test_leader_always_has_a_move_opening_plus_alert():
    # §4.1 requires the lead to contain 3♦; §4.7 requires a led single to be the strongest
    # card; leading is never a pass. With no pair/triple/five holding 3♦ nothing is legal.
    # The engine resolves it for the opening rule: the opening lead is not restricted by
    # the alert rule (at commit a9ed077 legal_moves() was [] here: a stuck game).
    g = Game.from_hands(FAMILY, ["3D 4D 5D", "6D", "9C TC JC", "QC KC AC"])
    assert g.turn == 0
    assert [str(m) for m in g.legal_moves()] == ["3D"]
    g.apply("3D")
    assert g.turn == 1
