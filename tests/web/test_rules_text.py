"""The Rules page's text (arena/web/rules_text.py): every option and every value the RuleSet
accepts is described, in words that change with the value, citing a section that exists in
docs/rules.md (the one its §12 table names), and a few spot checks of meaning.

The options and values are read from the RuleSet's own validation (``bigtwo.rules._CHOICES``
and ``_FLAGS``), never listed here, so a new option or value fails these tests until it is
described."""

from __future__ import annotations

import contextlib
import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from arena.replay_view import rules_summary
from arena.web.rules_text import describe, nearest_preset
from bigtwo import OPTION_NAMES, PRESETS, RulesError, RuleSet
from bigtwo import rules as rules_module

RULES_MD = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
MATCH_END_VALUES = (1, 2, 10, 30, 50, 100)  # any whole number ≥ 1 is accepted


def allowed_values() -> dict[str, tuple[Any, ...]]:
    """Every option and the values its validation accepts (a sample for the one number)."""
    values: dict[str, tuple[Any, ...]] = dict(rules_module._CHOICES)
    values.update({name: (False, True) for name in rules_module._FLAGS})
    values["match_end_value"] = MATCH_END_VALUES
    return values


def text_of(rules: RuleSet, option: str) -> str:
    (entry,) = [e for e in describe(rules) if e["option"] == option]
    return str(entry["text"])


def variants(option: str, value: Any) -> list[tuple[str, RuleSet]]:
    """Each preset (by name) with ``option`` set to ``value``, where that mix is valid."""
    found = []
    for name in PRESETS:
        with contextlib.suppress(RulesError):
            found.append((name, RuleSet.preset(name).replace(**{option: value})))
    return found


def test_the_enumeration_covers_every_option_of_the_ruleset() -> None:
    assert set(allowed_values()) == set(OPTION_NAMES)
    with pytest.raises(RulesError):
        RuleSet(match_end_value=0)  # the sample of numbers above is what validation accepts


def test_every_option_once_in_reading_order_with_its_value() -> None:
    for rules in [RuleSet.preset(p) for p in PRESETS]:
        entries = describe(rules)
        assert sorted(e["option"] for e in entries) == sorted(OPTION_NAMES)
        assert [e["option"] for e in entries][:3] == ["players", "direction", "suit_order"]
        assert entries[-1]["option"] == "teams"
        for e in entries:
            assert set(e) >= {"option", "value", "section", "text", "preset_default"}
            assert e["value"] == rules.to_dict()[e["option"]]
            assert isinstance(e["text"], str) and isinstance(e["preset_default"], bool)


@pytest.mark.parametrize("option", OPTION_NAMES)
def test_every_value_has_its_own_nonempty_text(option: str) -> None:
    values = allowed_values()[option]
    by_base: dict[str, dict[Any, str]] = {}
    for value in values:
        rule_sets = variants(option, value)
        assert rule_sets, f"{option}={value!r} is valid with no preset"
        for base, rules in rule_sets:
            text = text_of(rules, option)
            assert text.strip(), f"{option}={value!r}: empty text"
            by_base.setdefault(base, {})[value] = text
    for texts in by_base.values():
        # on one base, each value reads differently
        for (v1, t1), (v2, t2) in itertools.combinations(texts.items(), 2):
            assert t1 != t2, f"{option}: {v1!r} and {v2!r} read the same: {t1}"


def _doc_sections() -> set[str]:
    heads = set()
    for line in RULES_MD.read_text(encoding="utf-8").splitlines():
        m = re.match(r"#{2,4} (\d+(?:\.\d+)*)\.?\s", line)
        if m:
            heads.add("§" + m.group(1))
    return heads


def _section_table() -> dict[str, str]:
    """docs/rules.md §12: option → section."""
    text = RULES_MD.read_text(encoding="utf-8")
    table = text[text.index("## 12.") :]
    found = {}
    for line in table.splitlines():
        m = re.match(r"\|\s*((?:`\w+`(?:,\s*)?)+)\s*\|\s*(§[\d.]+)\s*\|", line)
        if m:
            for name in re.findall(r"`(\w+)`", m.group(1)):
                found[name] = m.group(2)
    return found


def test_every_cited_section_is_a_heading_and_the_one_section_12_names() -> None:
    heads, table = _doc_sections(), _section_table()
    assert "§4.6" in heads and "§1" in heads  # the parser reads both heading styles
    for e in describe(RuleSet()):
        assert e["section"] in heads, f"{e['option']}: {e['section']} is no heading"
        assert table.get(e["option"]) == e["section"], e["option"]


@pytest.mark.parametrize("preset", list(PRESETS))
def test_a_preset_is_all_defaults(preset: str) -> None:
    rules = RuleSet.preset(preset)
    assert nearest_preset(rules) == preset
    assert all(e["preset_default"] for e in describe(rules))


@pytest.mark.parametrize(
    ("preset", "changes"),
    [
        ("hk", {"bombs": "anywhere"}),
        ("pusoy", {"teams": True, "match_end_value": 3}),
        ("family", {"players": 3, "revolution": True}),
    ],
)
def test_changed_options_are_not_preset_defaults(preset: str, changes: dict[str, Any]) -> None:
    rules = RuleSet.preset(preset).replace(**changes)
    assert nearest_preset(rules) == preset
    assert rules_summary(rules).startswith(f"{preset} with ")  # the name arena replay shows
    off = {e["option"] for e in describe(rules) if not e["preset_default"]}
    assert off == set(changes)


# ----- what the words say -----------------------------------------------------------------
def test_players_says_how_many_cards_are_dealt() -> None:
    three = text_of(RuleSet(players=3), "players")
    assert "17 cards each" in three and "one card left over is set aside" in three
    two = text_of(RuleSet(players=2), "players")
    assert "13 cards each" in two and "26" in two
    assert "whole deck" in text_of(RuleSet(players=4), "players")
    for n in (2, 3, 4):
        assert f"{RuleSet(players=n).hand_size} cards each" in text_of(
            RuleSet(players=n), "players"
        )


@pytest.mark.parametrize("order", rules_module._CHOICES["suit_order"])
def test_suit_order_lowest_to_highest_as_the_engine_ranks_them(order: str) -> None:
    rules = RuleSet(suit_order=order)
    symbols = dict(zip("DCHS", "♦♣♥♠", strict=True))
    # cards 0..3 are the four 3s, in suit-number order D C H S
    by_strength = sorted(range(4), key=rules.strength)
    chain = " < ".join(symbols["DCHS"[s]] for s in by_strength)
    text = text_of(rules, "suit_order")
    assert chain in text
    assert rules.lowest_card.symbol in text and rules.highest_card.symbol in text
    assert rules.lowest_card.symbol in text_of(rules, "opening")


def test_pusoy_suit_order_and_its_highest_card_in_scoring() -> None:
    pusoy = RuleSet.preset("pusoy")
    assert "♣ < ♠ < ♥ < ♦" in text_of(pusoy, "suit_order")
    assert "♣ < ♠ < ♥ < ♦" in text_of(pusoy, "flush_compare")
    assert "(2♦)" in text_of(pusoy, "scoring")
    assert "(2♠)" in text_of(pusoy.replace(suit_order="DCHS"), "scoring")


def test_scoring_words() -> None:
    family = text_of(RuleSet.preset("family"), "scoring")
    assert "lowest total wins" in family and "winner takes none" in family
    hk = text_of(RuleSet(), "scoring")
    assert "4 per card for 13;" in hk and "winner gains" in hk
    assert "13 or more" in text_of(RuleSet(players=3), "scoring")  # §11.3
    assert "no multiplier" in text_of(RuleSet(scoring="flat"), "scoring")
    assert "fewest points wins" in text_of(RuleSet.preset("family"), "match_end")
    assert "highest total score wins" in text_of(RuleSet(), "match_end")
    # family scoring in teams: the match is won on the teams' signed scores (§7, §11.1)
    teams = RuleSet.preset("family").replace(teams=True)
    assert "lowest total" not in text_of(teams, "scoring")
    assert "losing pair pays" in text_of(teams, "scoring")
    assert "highest total score wins" in text_of(teams, "match_end")


def test_match_end_interpolates_its_number() -> None:
    assert "lasts 7 hands" in text_of(RuleSet(match_end="hands", match_end_value=7), "match_end")
    assert "lasts 1 hand." in text_of(RuleSet(match_end="hands", match_end_value=1), "match_end")
    assert "reaches 30" in text_of(RuleSet(match_end_value=30), "match_end")
    threshold = RuleSet.preset("family").replace(match_end_value=80)
    assert "goes over 80" in text_of(threshold, "match_end")
    assert "more than 80 points" in text_of(threshold, "match_end_value")


def test_option_spot_checks() -> None:
    anywhere = text_of(RuleSet(bombs="anywhere"), "bombs")
    assert "single, pair or triple as well as on a five-card hand" in anywhere
    assert "never on a single" in text_of(RuleSet(), "bombs")
    assert "2-3-4-5-6" in text_of(RuleSet(straights="no-two+circular"), "straights")
    assert "J-Q-K-A-2" in text_of(RuleSet.preset("family"), "straights")
    assert "never part of a straight" in text_of(RuleSet(), "straights")
    assert "out of the trick" in text_of(RuleSet.preset("pusoy"), "pass_locks_out")
    assert "Every hand" in text_of(RuleSet(opening="card-holder-every-hand"), "opening")
    assert "lowest card dealt" in text_of(RuleSet(players=3), "opening")
    assert "seats 0 and 2" in text_of(RuleSet(teams=True), "teams")
    assert "pays double" in text_of(RuleSet(twos_double_penalty=True), "twos_double_penalty")
    # options about five-card hands say they do nothing when those are not played
    no_fives = RuleSet(five_card_hands=False, bombs="anywhere")
    for option in ("straights", "flush_compare", "bombs", "lowest_straight_tops"):
        assert "no effect" in text_of(no_fives, option)
    assert "only singles, pairs and triples" in text_of(no_fives, "five_card_hands")
