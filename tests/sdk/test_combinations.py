"""Combinations and their order: docs/rules.md §2, §3 and every worked example of §10."""

import itertools

import pytest

from bigtwo import Category, RulesError, RuleSet

HK = RuleSet.preset("hk")
FAMILY = RuleSet.preset("family")
PUSOY = RuleSet.preset("pusoy")


def beats(rules, a, b, reversed=False):
    ca, cb = rules.classify(a), rules.classify(b)
    assert ca is not None, a
    assert cb is not None, b
    return rules.beats(ca, cb, reversed)


def cat(rules, cards):
    combo = rules.classify(cards)
    return None if combo is None else combo.category


# ----- docs/rules.md §10, line by line ------------------------------------------------------
def test_hk_examples_singles_and_pairs():
    assert beats(HK, "2S", "2H") and not beats(HK, "2H", "2S")
    assert beats(HK, "2S 2D", "2H 2C")
    assert beats(HK, "KS KC", "KH KD")


def test_hk_examples_straights():
    top = "TH JS QD KC AD"
    assert cat(HK, top) is Category.STRAIGHT
    for lo in range(7):  # every other non-flush straight of no-two
        ranks = "3456789TJQKA"[lo : lo + 5]
        other = " ".join(r + s for r, s in zip(ranks, "SDCHS", strict=True))
        assert beats(HK, top, other)
    assert HK.classify("2C 3D 4H 5S 6D") is None


def test_hk_example_flush_by_ranks():
    assert beats(HK, "3H 5H 8H JH AH", "4S 6S 8S JS KS")


def test_family_example_special_straights():
    chain = ["JC QD KH AD 2S", "AD 2D 3C 4H 5S", "2H 3D 4C 5D 6S", "TS JS QH KH AS"]
    for hi, lo in itertools.pairwise(chain):
        assert beats(FAMILY, hi, lo) and not beats(FAMILY, lo, hi)


def test_family_examples_flush_top_card_and_full_house():
    assert beats(FAMILY, "3D 4D 6D JD 2D", "5H JH QH KH AH")
    assert beats(FAMILY, "5D 5C 5H 3C 3S", "4D 4C 4H AC AS")


def test_pusoy_examples_suits():
    assert str(PUSOY.lowest_card) == "3C" and str(PUSOY.highest_card) == "2D"
    assert beats(PUSOY, "3D 5D 7D 9D JD", "4H 6H 8H TH AH")  # any ♦ flush beats any ♥ flush


@pytest.mark.parametrize("rules", [HK, FAMILY, PUSOY], ids=["hk", "family", "pusoy"])
def test_every_preset_category_order_and_no_bomb_on_single(rules):
    four = rules.classify("3D 3C 3H 3S 4D")
    full = rules.classify("2D 2C 2H AD AC")
    sflush = rules.classify("4C 5C 6C 7C 8C")
    assert four.category is Category.FOUR_OF_A_KIND and sflush.category is Category.STRAIGHT_FLUSH
    assert rules.beats(four, full) and not rules.beats(full, four)
    assert rules.beats(sflush, rules.classify("2D 2C 2H 2S 3D"))
    assert not rules.beats(four, rules.classify("3D"))
    bombs = rules.replace(bombs="anywhere")
    assert bombs.beats(bombs.classify("3D 3C 3H 3S 4D"), bombs.classify("2S"))


# ----- classification ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "cards, expected",
    [
        ("3D", Category.SINGLE),
        ("3D 3S", Category.PAIR),
        ("3D 4D", None),
        ("3D 3S 3H", Category.TRIPLE),
        ("3D 3S 4H", None),
        ("3D 3S 4H 4D", None),  # no two-pair, no four alone
        ("3D 3S 3H 3C", None),
        ("3D 4S 5H 6C 7D", Category.STRAIGHT),
        ("3D 5D 7D 9D JD", Category.FLUSH),
        ("3D 3S 3H 9C 9D", Category.FULL_HOUSE),
        ("3D 3S 3H 3C 9D", Category.FOUR_OF_A_KIND),
        ("3D 4D 5D 6D 7D", Category.STRAIGHT_FLUSH),
        ("3D 3S 4H 4C 5D", None),
        ("3D 4S 5H 6C 8D", None),
        ("3D 4S 5H 6C 7D 8D", None),
        ("3D 3D", None),  # a card twice
        ("", None),
        ("QS KD AH 2C 3D", None),
    ],
)
def test_classify(cards, expected):
    assert cat(HK, cards) is expected


def test_classify_reports_cards_kind_and_key():
    combo = HK.classify("9S 9D")
    assert [str(c) for c in combo.cards] == ["9D", "9S"]
    assert combo.kind == "pair" and combo.size == 2 and isinstance(combo.key, int)
    assert str(combo) == "9D 9S" and combo.describe() == "pair of 9s (9D 9S)"
    assert HK.classify("5C 5H 5D 8S 8C").describe() == "full house, 5s over 8s (5D 5C 5H 8C 8S)"


def test_classify_with_bad_text_is_a_rules_error():
    with pytest.raises(RulesError, match="not a card: 'XX'"):
        HK.classify("XX")


def test_triples_and_five_card_hands_can_be_switched_off():
    no_triples = HK.replace(allow_triples=False)
    assert no_triples.classify("3D 3S 3H") is None
    assert no_triples.classify("3D 3S 3H 4D 4S").category is Category.FULL_HOUSE
    casual = HK.replace(five_card_hands=False)
    for five in ("3D 4S 5H 6C 7D", "3D 5D 7D 9D JD", "3D 3S 3H 9C 9D", "3D 4D 5D 6D 7D"):
        assert casual.classify(five) is None
    assert casual.classify("3D 3S 3H").category is Category.TRIPLE


# ----- straights ------------------------------------------------------------------------------
TWO_SEQS = [
    "2C 3D 4H 5S 6D",
    "AC 2D 3H 4S 5D",
    "JC QD KH AS 2D",
    "QC KD AH 2S 3D",
    "KC AD 2H 3S 4D",
]


def test_no_two_straights_never_hold_a_two():
    assert [cat(HK, s) for s in TWO_SEQS] == [None] * 5


def test_circular_adds_only_two_to_six_above_everything():
    circ = HK.replace(straights="no-two+circular")
    assert [cat(circ, s) for s in TWO_SEQS] == [Category.STRAIGHT, None, None, None, None]
    assert beats(circ, "2C 3D 4H 5S 6D", "TS JS QH KH AS")
    # deciding card is the 2
    assert beats(circ, "2S 3D 4H 5S 6D", "2H 3C 4C 5C 6S")
    assert not beats(circ, "2H 3S 4S 5S 6S", "2S 3D 4H 5S 6D")


def test_family_straights_and_deciding_card():
    assert [cat(FAMILY, s) for s in TWO_SEQS] == [Category.STRAIGHT] * 3 + [None, None]
    # same sequence: the 2 decides
    assert beats(FAMILY, "AD 2S 3D 4D 5D", "AS 2H 3S 4S 5S")
    # no 2: the top of the run decides (its suit)
    assert beats(FAMILY, "9D TD JD QD KS", "9S TS JS QS KH")


def test_no_two_straights_compare_top_card_rank_then_suit():
    assert beats(HK, "4D 5D 6D 7D 8S", "3S 4S 5S 6S 7H") is True  # higher sequence
    assert beats(HK, "3D 4D 5D 6D 7S", "3S 4S 5S 6S 7H")  # 7S > 7H
    assert not beats(HK, "3S 4S 5S 6S 7H", "3D 4D 5D 6D 7S")


def test_lowest_straight_tops_house_rule():
    rules = PUSOY.replace(lowest_straight_tops=True)
    assert beats(rules, "3C 4S 5H 6D 7C", "TC JS QH KD AD")
    assert not beats(PUSOY, "3C 4S 5H 6D 7C", "TC JS QH KD AD")
    # only among non-flush straights: a flush still beats it
    assert beats(rules, "4C 6C 8C TC QC", "3C 4S 5H 6D 7D")


def test_straight_flushes_compare_like_straights():
    assert beats(HK, "4C 5C 6C 7C 8C", "3S 4S 5S 6S 7S")
    assert beats(HK, "TS JS QS KS AS", "TH JH QH KH AH")
    assert beats(FAMILY, "JC QC KC AC 2C", "TS JS QS KS AS")
    assert cat(FAMILY, "JC QC KC AC 2C") is Category.STRAIGHT_FLUSH


# ----- flushes ------------------------------------------------------------------------------
def test_flush_ranks_then_suit():
    assert beats(HK, "3S 5S 8S JS AS", "3H 5H 8H JH AH")  # all five ranks tie: suit
    assert beats(HK, "4D 5D 8D JD AD", "3S 5S 8S JS AS")  # lowest card decides last
    assert beats(HK, "2C 4C 6C 8C TC", "3D 6D 8D JD KD")  # the 2 is the highest rank


def test_flush_top_card():
    assert beats(FAMILY, "3S 4S 6S 8S AS", "9H JH QH KH AH")  # AS > AH
    assert not beats(FAMILY, "9H JH QH KH AH", "3S 4S 6S 8S AS")


def test_flush_suit_then_ranks():
    # CSHD: ♣ < ♠ < ♥ < ♦
    assert beats(PUSOY, "3S 4S 6S 8S 9S", "9C JC QC KC 2C")
    assert beats(PUSOY, "4D 5D 7D 9D 2D", "3D 5D 7D 9D AD") is True


def test_full_house_and_four_compare_by_the_group_rank_only():
    assert beats(HK, "5D 5C 5H 3C 3S", "4D 4C 4H 2C 2S")
    assert beats(HK, "5D 5C 5H 5S 3S", "4D 4C 4H 4S 2S")


def test_revolution_reverses_ranks_not_suits_or_categories():
    rev = HK.replace(revolution=True)
    assert beats(rev, "3D", "2S", reversed=True)
    assert beats(rev, "3S", "3D", reversed=True)  # suit order unchanged
    assert beats(rev, "4D 4S", "5D 5S", reversed=True)
    assert beats(rev, "3D 4D 5D 6D 7S", "TS JS QH KH AS", reversed=True)
    assert beats(rev, "3D 5D 7D 9D JD", "4S 6S 8S JS KS", reversed=True)
    assert beats(rev, "3D 3C 3H 3S 4D", "2D 2C 2H 2S 3S", reversed=True)
    assert beats(rev, "3D 5D 7D 9D JD", "TS JS QH KH AS", reversed=True)  # categories keep order
    assert beats(rev, "4D 4C 4H 9C 9D", "5D 5C 5H 3C 3S", reversed=True)


# ----- legal_plays ------------------------------------------------------------------------------
def test_legal_plays_lead_follow_and_must_include():
    hand = "3D 3C 4H 5S 6D 7C 9H 9S 9D 2S"
    leads = HK.legal_plays(hand)
    kinds = {c.category for c in leads}
    assert kinds == {
        Category.SINGLE,
        Category.PAIR,
        Category.TRIPLE,
        Category.STRAIGHT,
        Category.FULL_HOUSE,
    }
    singles = [c for c in leads if c.kind == "single"]
    assert len(singles) == 10
    assert len([c for c in leads if c.kind == "pair"]) == 4  # 3D3C, and three 9-pairs
    with_3d = HK.legal_plays(hand, must_include="3D")
    assert with_3d and all(any(str(x) == "3D" for x in c.cards) for c in with_3d)
    on_pair = HK.legal_plays(hand, to_beat="8D 8S")
    assert sorted(str(c) for c in on_pair) == ["9D 9H", "9D 9S", "9H 9S"]
    assert HK.legal_plays(hand, to_beat="2H") == [HK.classify("2S")]
    assert HK.legal_plays(hand, to_beat="AS AH") == []


def test_legal_plays_are_exactly_the_combinations_that_beat():
    from itertools import combinations

    hand = "3D 4D 5D 6D 7D 8S 8H 9S TS JH QH KH AH 2C"
    current = HK.classify("4C 5C 6S 7S 8D")
    expected = set()
    ids = HK.legal_plays(hand)
    cards = sorted({c for combo in ids for c in combo.cards})
    for size in (1, 2, 3, 5):
        for sub in combinations(cards, size):
            combo = HK.classify(list(sub))
            if combo and HK.beats(combo, current):
                expected.add(combo.mask)
    assert {c.mask for c in HK.legal_plays(hand, current)} == expected


def test_legal_plays_refuses_bad_input():
    with pytest.raises(RulesError, match="twice"):
        HK.legal_plays("3D 3D 4S")
    with pytest.raises(RulesError, match="to_beat"):
        HK.legal_plays("3D 4S", to_beat="3D 4S")
