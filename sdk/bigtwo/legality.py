"""Which moves are legal in a position: one function that the game (which knows every
hand) and a bot's client (which knows only its own hand and the public position) share.

A :class:`SeatCombinations` keeps one seat's combinations, made on first need and narrowed
as cards leave the hand; :func:`select_moves` picks the legal ones for a position.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from .cards import Card, cards_from_mask
from .combos import BOMBS, GROUP_OF_SIZE, PASS, Combination, Move, _key, reversed_key
from .rules import RuleSet

_TWO_RANK = 12


class SeatCombinations:
    """One seat's combinations, by size group (singles, pairs, triples, five-card hands).

    Singles, pairs and triples are made on first need; five-card hands (the costly part)
    only when first asked for, from the cards held then.  Narrowing is lazy too: a group is
    filtered only when it is next read, so a seat's five-card list is not touched while the
    tricks are pairs."""

    __slots__ = ("_groups", "_narrowed", "_tables")

    def __init__(self, rules: RuleSet) -> None:
        self._tables = rules._tables
        self._groups: list[list[Combination]] | None = None
        self._narrowed = [0, 0, 0, -1]

    def group(self, index: int, hand: int) -> list[Combination]:
        """Combinations of group ``index`` (see GROUP_OF_SIZE) within ``hand`` (a card mask
        that only ever loses cards), weakest first."""
        groups = self._groups
        if groups is None:
            groups = self._groups = [*self._tables.groups(cards_from_mask(hand), False), []]
            self._narrowed = [hand, hand, hand, -1]
        narrowed = self._narrowed
        if narrowed[index] != hand:
            if narrowed[index] == -1:
                groups[3] = self._tables.fives(cards_from_mask(hand))
            else:
                gone = narrowed[index] & ~hand
                groups[index] = [c for c in groups[index] if not c.mask & gone]
            narrowed[index] = hand
        return groups[index]

    def strongest(self, hand: int, reversed: bool) -> Combination:
        singles = self.group(0, hand)
        return max(singles, key=reversed_key) if reversed else singles[-1]


def beats_in_play(rules: RuleSet, combo: Combination, cur: Combination, reversed: bool) -> bool:
    """``rules.beats`` for two combinations made by ``rules`` (no re-classification)."""
    if len(combo.cards) != len(cur.cards):
        return rules._tables.bombs_anywhere and combo.category in BOMBS and len(cur.cards) < 5
    if reversed:
        return reversed_key(combo) > reversed_key(cur)
    return combo.key > cur.key


def is_lone_two(hand: int) -> bool:
    """The hand is exactly one card and it is a 2."""
    return hand != 0 and hand & (hand - 1) == 0 and (hand.bit_length() - 1) >> 2 == _TWO_RANK


def select_moves(
    rules: RuleSet,
    combos: SeatCombinations,
    hand: int,
    to_beat: Combination | None,
    must_include: int | None,
    next_holds_one: bool,
    reversed: bool,
    first_trick: bool,
    lone_two_lifted: bool,
) -> list[Move]:
    """Every legal move of the seat holding ``hand`` (a card mask), PASS included when legal.

    ``next_holds_one``: the next seat in turn holds one card (alert rule);
    ``lone_two_lifted``: every seat holds a lone 2, so ``no_lone_two_finish`` is lifted."""
    alert = rules.alert_rule and next_holds_one
    if to_beat is None:
        if rules.no_lone_two_finish and not lone_two_lifted and is_lone_two(hand):
            return [PASS]  # must hand the lead on (RULES.md §4.10)
        singles = combos.group(0, hand)
        if alert and must_include is None:  # the opening lead is never restricted
            singles = [combos.strongest(hand, reversed)]
        moves = singles + combos.group(1, hand) + combos.group(2, hand) + combos.group(3, hand)
        if must_include is not None:
            bit = 1 << must_include
            moves = [c for c in moves if c.mask & bit]
        return moves
    size = len(to_beat.cards)
    grp = combos.group(GROUP_OF_SIZE[size], hand)
    if reversed:
        ck = reversed_key(to_beat)
        moves = [c for c in grp if reversed_key(c) > ck]
    else:
        moves = grp[bisect_right(grp, to_beat.key, key=_key) :]
    may_pass = True
    if alert and size == 1:
        top = combos.strongest(hand, reversed)
        top_beats = beats_in_play(rules, top, to_beat, reversed)
        moves = [top] if top_beats else []
        may_pass = not top_beats
    if size < 5 and rules._tables.bombs_anywhere:
        moves += [c for c in combos.group(3, hand) if c.category in BOMBS]
    if may_pass and rules.no_pass_first_trick and first_trick and moves:
        may_pass = False
    if may_pass:
        moves.append(PASS)
    return moves


@dataclass
class Position:
    """The public position plus one seat's hand: enough to list that seat's legal moves
    without knowing any other hand.  A bot's client keeps one, updated from the referee's
    messages."""

    rules: RuleSet
    seat: int
    hand: int
    """My cards as a mask."""
    cards_left: list[int]
    to_beat: Combination | None = None
    must_include: Card | None = None
    reversed: bool = False
    first_trick: bool = True
    lone_two_lifted: bool = False
    combos: SeatCombinations = field(init=False)

    def __post_init__(self) -> None:
        self.combos = SeatCombinations(self.rules)

    def legal_moves(self) -> list[Move]:
        n = len(self.cards_left)
        return select_moves(
            self.rules,
            self.combos,
            self.hand,
            self.to_beat,
            self.must_include,
            self.cards_left[(self.seat + 1) % n] == 1,
            self.reversed,
            self.first_trick,
            self.lone_two_lifted,
        )
