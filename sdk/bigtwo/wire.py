"""Conversions between the engine's objects and the wire contract's messages.

Kept apart from the engine so that ``import bigtwo`` needs no protobuf; imported by the
client and the referee only."""

from __future__ import annotations

from collections.abc import Iterable

from .cards import CARDS, Card
from .combos import Combination
from .rules import OPTION_NAMES, RulesError, RuleSet
from .v1 import referee_pb2 as pb

PROTOCOL_VERSION = 1


def rules_to_pb(rules: RuleSet) -> pb.Rules:
    """The rules as a ``Rules`` message; every option travels, so the bot never assumes a
    default the referee does not use."""
    return pb.Rules(**rules.to_dict())


def rules_from_pb(msg: pb.Rules) -> RuleSet:
    """The rule set a MatchStart carries; every option must be present and valid."""
    data = {name: getattr(msg, name) for name in OPTION_NAMES}
    try:
        return RuleSet(**data)
    except (RulesError, TypeError) as exc:
        raise RulesError(f"match start carries invalid rules: {exc}") from None


def card_ids(cards: Iterable[int]) -> list[int]:
    """Cards as wire ids (``int``), since protobuf takes plain integers."""
    return [int(c) for c in cards]


def cards_from_ids(ids: Iterable[int]) -> list[Card]:
    """Cards from wire ids; an id outside 0..51 is a ValueError naming it."""
    out = []
    for i in ids:
        if not 0 <= i < 52:
            raise ValueError(f"card id {i} is not in 0..51")
        out.append(CARDS[i])
    return out


def category_name(combo: Combination | None) -> str:
    """A combination's category as wire text (``""`` for none), stable across versions."""
    return "" if combo is None else combo.category.label


def opt_card(card: Card | None) -> int:
    """An optional card as a wire id: ``-1`` stands for none, as proto3 has no null int."""
    return -1 if card is None else int(card)
