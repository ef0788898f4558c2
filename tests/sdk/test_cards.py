"""Card notation and ids (docs/rules.md, "Notation")."""

import pickle

import pytest

from bigtwo import CARDS, Card, CardParseError, RuleSet, format_cards, parse_cards


def test_ids_are_rank_times_four_plus_suit_in_letter_order():
    assert [int(c) for c in parse_cards("3D 3C 3H 3S 4D 2S")] == [0, 1, 2, 3, 4, 51]
    assert all(int(CARDS[i]) == i for i in range(52))
    assert len({str(c) for c in CARDS}) == 52


@pytest.mark.parametrize(
    "text, expected",
    [
        ("3D", "3D"),
        ("10H", "TH"),
        ("th", "TH"),
        ("♠A", "AS"),
        ("A♠", "AS"),
        ("2♦", "2D"),
        ("♣10", "TC"),
        (" qs ", "QS"),
    ],
)
def test_parse_accepts_every_documented_notation(text, expected):
    assert str(Card(text)) == expected


@pytest.mark.parametrize("bad", ["", "1D", "3X", "11H", "DD", "3", "♠", "ZZZ"])
def test_parse_errors_name_the_token(bad):
    with pytest.raises(CardParseError) as err:
        parse_cards([bad])
    assert repr(bad) in str(err.value)


@pytest.mark.parametrize("bad", [-1, 52, 3.0, True, None])
def test_card_ids_out_of_range_are_refused(bad):
    with pytest.raises(CardParseError):
        Card(bad)


def test_parse_cards_text_list_and_round_trip():
    cards = parse_cards("3D, 10H  ♠A")
    assert [str(c) for c in cards] == ["3D", "TH", "AS"]
    assert format_cards(cards) == "3D TH AS"
    assert format_cards(cards, symbols=True) == "3♦ T♥ A♠"
    assert parse_cards(cards) == cards
    assert parse_cards([0, "4D"]) == [Card("3D"), Card("4D")]
    assert pickle.loads(pickle.dumps(cards)) == cards


def test_parse_keeps_duplicates_so_callers_can_report_them():
    assert parse_cards("3D 3D") == [Card("3D"), Card("3D")]


@pytest.mark.parametrize(
    "preset, lowest, highest, order",
    [
        ("hk", "3D", "2S", "3D 3C 3H 3S"),
        ("pusoy", "3C", "2D", "3C 3S 3H 3D"),
    ],
)
def test_strength_depends_on_suit_order(preset, lowest, highest, order):
    rules = RuleSet.preset(preset)
    assert str(rules.lowest_card) == lowest
    assert str(rules.highest_card) == highest
    assert format_cards(rules.sort_cards(parse_cards("3S 3H 3D 3C"))) == order
    strengths = sorted(rules.strength(c) for c in CARDS)
    assert strengths == list(range(52))


def test_csdh_order_makes_two_of_hearts_highest():
    rules = RuleSet.preset("pusoy").replace(suit_order="CSDH")
    assert str(rules.highest_card) == "2H"
    assert str(rules.lowest_card) == "3C"
    # rank first, then suit: any 4 beats any 3
    assert rules.strength(Card("4C")) > rules.strength(Card("3H"))
