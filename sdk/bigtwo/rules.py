"""The rule set: every option of docs/rules.md §1–§7, the three presets of §9, and the
stateless core that bots and the game share (classify, beats, legal_plays).

A ``RuleSet`` is an immutable value.  Change an option with ``replace``; the result is a new
rule set, checked as a whole.  ``to_dict``/``from_dict`` give a plain, JSON-ready dict that
names every option, so the rules in force can travel with every match record.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .cards import CARDS, Card, CardParseError, parse_cards
from .combos import Combination, Tables
from .jsontext import loads_bounded
from .legality import beats

_SUIT_ID = {suit: i for i, suit in enumerate("DCHS")}  # a card's id is 4 * rank + this


class RulesError(ValueError):
    """An unknown option, a bad value or a contradictory mix; the message names it."""


_CHOICES: dict[str, tuple[Any, ...]] = {
    "players": (2, 3, 4),
    "direction": ("clockwise", "counter-clockwise"),
    "suit_order": ("DCHS", "CSHD", "CSDH"),
    "opening": ("card-holder-first-hand", "card-holder-every-hand"),
    "straights": ("no-two", "no-two+circular", "family"),
    "flush_compare": ("ranks-then-suit", "top-card", "suit-then-ranks"),
    "bombs": ("five-card-only", "anywhere"),
    "scoring": ("hk", "family", "flat", "pusoy"),
    "match_end": ("hands", "target", "threshold"),
}
_FLAGS = (
    "allow_triples",
    "five_card_hands",
    "lowest_straight_tops",
    "pass_locks_out",
    "alert_rule",
    "no_pass_first_trick",
    "revolution",
    "no_lone_two_finish",
    "twos_double_penalty",
    "teams",
)
_TRUE = {"on", "true", "yes", "1"}
_FALSE = {"off", "false", "no", "0"}


@dataclass(frozen=True)
class RuleSet:
    """Every rule option of docs/rules.md.  The defaults are the ``hk`` preset.

    ``match_end`` is how a match ends: ``hands`` (after ``match_end_value`` hands),
    ``target`` (when a player's cumulative score reaches ``match_end_value``) or
    ``threshold`` (when a player's cumulative penalty points exceed ``match_end_value``).
    """

    players: int = 4
    direction: str = "clockwise"
    suit_order: str = "DCHS"
    opening: str = "card-holder-first-hand"
    allow_triples: bool = True
    five_card_hands: bool = True
    straights: str = "no-two"
    lowest_straight_tops: bool = False
    flush_compare: str = "ranks-then-suit"
    bombs: str = "five-card-only"
    pass_locks_out: bool = False
    alert_rule: bool = False
    no_pass_first_trick: bool = False
    revolution: bool = False
    no_lone_two_finish: bool = False
    scoring: str = "hk"
    twos_double_penalty: bool = False
    match_end: str = "target"
    match_end_value: int = 50
    teams: bool = False
    _tables: Tables = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        for name in _FLAGS:
            object.__setattr__(self, name, _coerce_flag(name, getattr(self, name)))
        for name, choices in _CHOICES.items():
            value = getattr(self, name)
            if name == "players" and isinstance(value, str) and value.strip().isdigit():
                value = int(value)
                object.__setattr__(self, name, value)
            if isinstance(value, bool) or value not in choices:
                raise RulesError(
                    f"rule option {name!r}: {value!r} is not one of "
                    + ", ".join(repr(c) for c in choices)
                )
        v = self.match_end_value
        if isinstance(v, str) and v.strip().isdigit():
            v = int(v)
            object.__setattr__(self, "match_end_value", v)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise RulesError(f"rule option 'match_end_value': {v!r} is not a whole number ≥ 1")
        if self.teams and self.players != 4:
            raise RulesError("rule option 'teams' needs players = 4")
        if self.match_end == "target" and self.scoring == "family" and not self.teams:
            raise RulesError(
                "rule option 'match_end': 'target' needs a scoring where the winner gains "
                "points (hk, flat, pusoy); family scoring only gives points to losers — "
                "use match_end='threshold'"
            )
        object.__setattr__(self, "_tables", Tables(self))

    # ----- construction -----------------------------------------------------------------
    @classmethod
    def preset(cls, name: str) -> RuleSet:
        """``hk`` (Big Two), ``family`` (Chor Dai Di) or ``pusoy`` (Pusoy Dos)."""
        try:
            return cls(**PRESETS[name])
        except KeyError:
            raise RulesError(
                f"unknown preset {name!r}; known presets: {', '.join(PRESETS)}"
            ) from None

    def replace(self, **changes: Any) -> RuleSet:
        """A copy with some options changed: ``RuleSet.preset("hk").replace(bombs="anywhere")``."""
        _check_names(changes)
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Every option by name, JSON-ready."""
        return {name: getattr(self, name) for name in OPTION_NAMES}

    def to_json(self) -> str:
        """Every option as JSON with sorted keys: the same rules always give the same text."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RuleSet:
        """Rules from a dict of options.  A ``preset`` entry names the base (default
        ``hk``); every other entry overrides that option."""
        if not isinstance(data, Mapping):
            raise RulesError(f"rules must be a mapping of option names to values, got {data!r}")
        data = dict(data)
        base = data.pop("preset", "hk")
        return cls.preset(base).replace(**data)

    @classmethod
    def from_json(cls, text: str) -> RuleSet:
        """The rule set of a JSON text (``arena rules`` output, a ``--rules`` file); the text is
        parsed with bounded depth and size, since it may come from someone else."""
        try:
            data = loads_bounded(text)
        except ValueError as exc:
            raise RulesError(f"rules are not valid JSON: {exc}") from None
        return cls.from_dict(data)

    @property
    def preset_name(self) -> str | None:
        """The preset these rules equal, if any."""
        for name in PRESETS:
            if RuleSet.preset(name) == self:
                return name
        return None

    @property
    def tables(self) -> Tables:
        """This rule set's lookup tables (:class:`bigtwo.combos.Tables`), built once when
        the rules are made: each card's ``strength``, ``classify`` on card ids, every
        combination of a hand (``groups``, ``fives``).  The engine reads them; so may a
        search bot that needs them at speed (they are shared: never change them)."""
        return self._tables

    # ----- cards ------------------------------------------------------------------------
    def strength(self, card: int) -> int:
        """0 (weakest) … 51 (strongest): rank first, then suit in this rule set's order."""
        return self._tables.strength[card]

    def sort_cards(self, cards: Iterable[int]) -> list[Card]:
        """Cards weakest first."""
        return sorted([CARDS[c] for c in cards], key=self._tables.strength.__getitem__)

    @property
    def lowest_card(self) -> Card:
        """The lowest card of the deck under this suit order (3♦ or 3♣)."""
        return CARDS[_SUIT_ID[self.suit_order[0]]]  # rank 3 is rank 0: card id = its suit's

    @property
    def highest_card(self) -> Card:
        """The highest card of the deck under this suit order (2♠, 2♦ or 2♥).  (Read at
        every pusoy hand's end of every play-out: an index, not a parse.)"""
        return CARDS[4 * 12 + _SUIT_ID[self.suit_order[-1]]]

    @property
    def hand_size(self) -> int:
        """Cards dealt to each seat: 13, or 17 with three players (51 cards dealt, one left
        face down, docs/rules.md §1); the action encoding's size depends on it."""
        return 17 if self.players == 3 else 13

    # ----- combinations -----------------------------------------------------------------
    def classify(self, cards: str | Iterable[Any]) -> Combination | None:
        """The combination ``cards`` form under these rules, or ``None`` when they form
        none (wrong size, not a valid hand, a card twice)."""
        ids = _ids(cards)
        return self._tables.classify(ids)

    def beats(self, challenger: Combination, current: Combination, reversed: bool = False) -> bool:
        """Whether ``challenger`` may be played on ``current`` (docs/rules.md §4.2, §4.6,
        §4.9): :func:`bigtwo.legality.beats` for combinations made under any rules.

        ``reversed`` is whether a revolution is in force."""
        return beats(self, self._own(challenger), self._own(current), reversed)

    def legal_plays(
        self,
        hand: str | Iterable[Any],
        to_beat: Combination | str | Iterable[Any] | None = None,
        must_include: Card | str | int | None = None,
        reversed: bool = False,
    ) -> list[Combination]:
        """Every combination from ``hand`` that may be played on ``to_beat`` (or led, when
        ``None``), each containing ``must_include`` when given.  Weakest first within each
        size; singles, then pairs, triples and five-card hands."""
        ids = _ids(hand)
        if len(set(ids)) != len(ids):
            raise RulesError("hand holds a card twice")
        groups = self._tables.groups(list(ids))
        if to_beat is None:
            plays = [c for g in groups for c in g]
        else:
            current = to_beat if isinstance(to_beat, Combination) else self.classify(to_beat)
            if current is None:
                raise RulesError(f"to_beat is not a valid combination: {to_beat!r}")
            plays = [c for g in groups for c in g if self.beats(c, current, reversed)]
        if must_include is not None:
            bit = 1 << Card(must_include if isinstance(must_include, str) else int(must_include))
            plays = [c for c in plays if c.mask & bit]
        return plays

    def _own(self, combo: Combination) -> Combination:
        """``combo`` as these rules classify it (a combination made under other rules is
        classified again; one that is invalid here is an error)."""
        if combo.rules is self or combo.rules == self:
            return combo
        again = self._tables.classify(tuple(int(c) for c in combo.cards))
        if again is None:
            raise RulesError(f"{combo} is not a valid combination under these rules")
        return again


def _ids(cards: str | Iterable[Any]) -> tuple[int, ...]:
    if isinstance(cards, Combination):
        return tuple(int(c) for c in cards.cards)
    try:
        return tuple(int(c) for c in parse_cards(cards))
    except CardParseError as exc:
        raise RulesError(str(exc)) from None


def _coerce_flag(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        low = value.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
    raise RulesError(f"rule option {name!r}: {value!r} is not on/off (true/false)")


OPTION_NAMES: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(RuleSet) if not f.name.startswith("_")
)
"""Every rule option, in the order of docs/rules.md §9."""


def _check_names(changes: Mapping[str, Any]) -> None:
    for name in changes:
        if name not in OPTION_NAMES:
            close = difflib.get_close_matches(name, OPTION_NAMES, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise RulesError(
                f"unknown rule option {name!r}{hint}; options are: {', '.join(OPTION_NAMES)}"
            )


PRESETS: dict[str, dict[str, Any]] = {
    "hk": {},
    "family": {
        "direction": "counter-clockwise",
        "straights": "family",
        "flush_compare": "top-card",
        "alert_rule": True,
        "scoring": "family",
        "match_end": "threshold",
        "match_end_value": 100,
    },
    "pusoy": {
        "direction": "counter-clockwise",
        "suit_order": "CSHD",
        "flush_compare": "suit-then-ranks",
        "pass_locks_out": True,
        "scoring": "pusoy",
        "match_end": "hands",
        "match_end_value": 10,
    },
}
"""docs/rules.md §9: each preset's differences from the defaults (which are ``hk``)."""
