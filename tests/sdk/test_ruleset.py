"""RuleSet: presets as docs/rules.md §9, overrides, serialisation, clear errors."""

import json

import pytest

from bigtwo import OPTION_NAMES, PRESETS, RulesError, RuleSet

PRESET_TABLE = {
    # option: (hk, family, pusoy) — docs/rules.md §9, column by column
    "players": (4, 4, 4),
    "direction": ("clockwise", "counter-clockwise", "counter-clockwise"),
    "suit_order": ("DCHS", "DCHS", "CSHD"),
    "opening": ("card-holder-first-hand",) * 3,
    "allow_triples": (True, True, True),
    "five_card_hands": (True, True, True),
    "straights": ("no-two", "family", "no-two"),
    "lowest_straight_tops": (False, False, False),
    "flush_compare": ("ranks-then-suit", "top-card", "suit-then-ranks"),
    "bombs": ("five-card-only",) * 3,
    "pass_locks_out": (False, False, True),
    "alert_rule": (False, True, False),
    "no_pass_first_trick": (False, False, False),
    "revolution": (False, False, False),
    "no_lone_two_finish": (False, False, False),
    "scoring": ("hk", "family", "pusoy"),
    "twos_double_penalty": (False, False, False),
    "match_end": ("target", "threshold", "hands"),
    "match_end_value": (50, 100, 10),
    "teams": (False, False, False),
}


@pytest.mark.parametrize("column, name", list(enumerate(["hk", "family", "pusoy"])))
def test_presets_are_exactly_the_columns_of_the_table(column, name):
    rules = RuleSet.preset(name)
    assert set(PRESET_TABLE) == set(OPTION_NAMES)
    assert {k: v[column] for k, v in PRESET_TABLE.items()} == rules.to_dict()
    assert rules.preset_name == name


def test_replace_changes_one_option_and_keeps_the_rest():
    hk = RuleSet.preset("hk")
    bombs = hk.replace(bombs="anywhere")
    assert bombs.bombs == "anywhere" and hk.bombs == "five-card-only"
    assert {k: v for k, v in bombs.to_dict().items() if k != "bombs"} == {
        k: v for k, v in hk.to_dict().items() if k != "bombs"
    }
    assert bombs.preset_name is None
    assert bombs != hk and hash(bombs.replace(bombs="five-card-only")) == hash(hk)


@pytest.mark.parametrize("name", PRESETS)
def test_dict_and_json_round_trip(name):
    rules = RuleSet.preset(name).replace(players=3, revolution=True)
    assert RuleSet.from_dict(rules.to_dict()) == rules
    assert RuleSet.from_json(rules.to_json()) == rules
    assert json.loads(rules.to_json())["players"] == 3


def test_from_dict_with_preset_base():
    rules = RuleSet.from_dict({"preset": "pusoy", "bombs": "anywhere"})
    assert rules == RuleSet.preset("pusoy").replace(bombs="anywhere")


def test_flags_accept_on_off_words():
    rules = RuleSet.preset("hk").replace(alert_rule="on", teams="off", revolution="true")
    assert rules.alert_rule is True and rules.teams is False and rules.revolution is True


@pytest.mark.parametrize(
    "changes, fragment",
    [
        ({"bomb": "anywhere"}, "unknown rule option 'bomb' (did you mean 'bombs'?)"),
        ({"bombs": "everywhere"}, "rule option 'bombs': 'everywhere'"),
        ({"players": 5}, "rule option 'players': 5"),
        ({"players": True}, "rule option 'players'"),
        ({"suit_order": "SHCD"}, "rule option 'suit_order'"),
        ({"alert_rule": "maybe"}, "rule option 'alert_rule': 'maybe'"),
        ({"match_end_value": 0}, "match_end_value"),
        ({"match_end_value": "lots"}, "match_end_value"),
        ({"teams": True, "players": 3}, "'teams' needs players = 4"),
        ({"scoring": "family"}, "'target' needs a scoring"),
    ],
)
def test_bad_options_are_clear_errors_naming_them(changes, fragment):
    with pytest.raises(RulesError) as err:
        RuleSet.preset("hk").replace(**changes)
    assert fragment in str(err.value)


def test_unknown_preset_and_bad_json_are_clear_errors():
    with pytest.raises(RulesError, match="unknown preset 'uno'"):
        RuleSet.preset("uno")
    with pytest.raises(RulesError, match="not valid JSON"):
        RuleSet.from_json("{nope")
    with pytest.raises(RulesError, match="mapping"):
        RuleSet.from_dict(["hk"])  # type: ignore[arg-type]
    with pytest.raises(RulesError, match="unknown preset"):
        RuleSet.from_dict({"preset": "nope"})


def test_rule_sets_are_immutable():
    rules = RuleSet.preset("hk")
    with pytest.raises(AttributeError):
        rules.bombs = "anywhere"  # type: ignore[misc]
