"""Which moves are legal: every trick rule of docs/rules.md §4, each written once.

Each rule option that restricts a turn has one function here, its *home* (the table
"option → function" in docs/rules.md §12 lists them).  The move generator
(:func:`select_moves`, the list of legal moves) and the refusals (:func:`play_refusal`,
:func:`pass_refusal`, which say why a move is not legal) both call those functions, so the
two can only disagree through a bug in the calling code, which the property tests in
tests/sdk/test_properties.py look for on random games.

The game (which knows every hand) and a bot's client (which knows only its own hand and the
public position) describe the seat to move as a :class:`Turn` and share everything below.
A :class:`SeatCombinations` keeps one seat's combinations, made on first need and narrowed
as cards leave the hand.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from .cards import Card, cards_from_mask, format_cards
from .combos import (
    BOMBS,
    FOUR_OF_A_KIND,
    GROUP_OF_SIZE,
    PASS,
    Combination,
    Move,
    _key,
    reversed_key,
)

if TYPE_CHECKING:
    from .rules import RuleSet

_TWO_RANK = 12
_SIZE_NAMES = {1: "singles", 2: "pairs", 3: "triples", 5: "five-card hands"}


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

    def copy(self) -> SeatCombinations:
        """An independent copy (a cloned game's): narrowing one never narrows the other.
        The groups themselves are shared, since narrowing replaces a group, never edits it."""
        twin = SeatCombinations.__new__(SeatCombinations)
        twin._tables = self._tables
        twin._groups = None if self._groups is None else list(self._groups)
        twin._narrowed = list(self._narrowed)
        return twin

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
        """The strongest single in ``hand`` (under a revolution, the lowest rank)."""
        singles = self.group(0, hand)
        return max(singles, key=reversed_key) if reversed else singles[-1]


class Turn(Protocol):
    """The seat to move as the trick rules see it: its cards and the public position.

    :class:`bigtwo.Game` is one (it knows every hand) and so is a bot's :class:`Position`
    (it knows its own); the functions below read only these attributes, and only those a
    rule in force needs."""

    rules: RuleSet
    must_include: Card | None
    """The card the opening lead must hold (docs/rules.md §4.1), else ``None``."""
    reversed: bool
    """A revolution is in force."""
    first_trick: bool
    """This is the first trick of the hand."""

    @property
    def trick(self) -> Combination | None:
        """The play to beat; ``None`` when the seat leads."""

    @property
    def lone_two_lifted(self) -> bool:
        """Every seat holds a lone 2, so ``no_lone_two_finish`` is lifted (see
        :func:`lone_two_lifted`)."""

    @property
    def mover_mask(self) -> int:
        """The cards of the seat to move, as a mask."""

    @property
    def mover_combos(self) -> SeatCombinations:
        """The combinations of the seat to move (narrowed to ``mover_mask`` on reading)."""

    @property
    def next_seat(self) -> int:
        """The seat that plays after the seat to move."""

    @property
    def next_holds_one(self) -> bool:
        """The next seat holds exactly one card (the alert rule's trigger)."""


# ----- one home per rule ------------------------------------------------------------------
def beats(rules: RuleSet, combo: Combination, cur: Combination, reversed: bool) -> bool:
    """Whether ``combo`` may be played on ``cur`` (docs/rules.md §4.2): same size and
    stronger, or a bomb on a smaller trick (:func:`bombs_interrupt`).  Both are combinations
    made by ``rules``; ``RuleSet.beats`` is this function for combinations of any origin.

    Within one size the stronger has the higher ``key`` (docs/rules.md §3), or under a
    revolution (§4.9) the higher :func:`~bigtwo.combos.reversed_key`; :func:`stronger`
    applies the same order to a sorted list."""
    if len(combo.cards) != len(cur.cards):
        return combo.category in BOMBS and bombs_interrupt(rules, len(cur.cards))
    if reversed:
        return reversed_key(combo) > reversed_key(cur)
    return combo.key > cur.key


def stronger(group: list[Combination], cur: Combination, reversed: bool) -> list[Combination]:
    """The members of ``group`` (one size, sorted by key) that beat ``cur`` of the same size:
    :func:`beats`' order over a sorted list, a binary search without a revolution."""
    if reversed:
        ck = reversed_key(cur)
        return [c for c in group if reversed_key(c) > ck]
    return group[bisect_right(group, cur.key, key=_key) :]


def bombs_interrupt(rules: RuleSet, trick_size: int) -> bool:
    """``bombs`` (docs/rules.md §4.6): whether a bomb (four of a kind + kicker, straight
    flush) may be played on a trick of ``trick_size`` cards."""
    return trick_size < 5 and rules.bombs == "anywhere"


def opening_card_required(rules: RuleSet, hand_no: int, independent: bool) -> bool:
    """``opening`` (docs/rules.md §4.1): this hand's first lead is made by the holder of the
    lowest card dealt and must hold it (else the previous hand's winner leads anything).
    ``independent``: the hand is played like a first hand (duplicate play, §11.9)."""
    return hand_no == 0 or rules.opening == "card-holder-every-hand" or independent


def includes_opening_card(combo: Combination, must_include: Card | None) -> bool:
    """``opening`` (docs/rules.md §4.1): the lead holds the card it must hold, if any."""
    return must_include is None or bool(combo.mask >> must_include & 1)


def alert_single(t: Turn) -> Combination | None:
    """``alert_rule`` (docs/rules.md §4.7): the one single the seat may play — its strongest
    card — when the next seat holds one card, or ``None`` when singles are not restricted.
    The opening lead (which must hold the lowest card) is never restricted (§11.7)."""
    if t.rules.alert_rule and t.must_include is None and t.next_holds_one:
        return t.mover_combos.strongest(t.mover_mask, t.reversed)
    return None


def first_trick_forbids_pass(t: Turn, plays: list[Move] | None = None) -> bool:
    """``no_pass_first_trick`` (docs/rules.md §4.8): in the first trick a seat that has a
    play may not pass.  ``plays``: the seat's legal plays when known (pass aside), else
    they are generated."""
    if not (t.rules.no_pass_first_trick and t.first_trick):
        return False
    if plays is None:
        plays = select_moves(t)
    return any(m is not PASS for m in plays)


def is_lone_two(hand: int) -> bool:
    """The hand (a card mask) is exactly one card and it is a 2."""
    return hand != 0 and hand & (hand - 1) == 0 and (hand.bit_length() - 1) >> 2 == _TWO_RANK


def lone_two_lifted(rules: RuleSet, hands: list[int]) -> bool:
    """``no_lone_two_finish`` is in force but lifted: every seat's hand (masks) is a lone 2,
    so no one could ever lead and the hand would never end (docs/rules.md §11.8)."""
    return rules.no_lone_two_finish and all(is_lone_two(m) for m in hands)


def lone_two_blocks(t: Turn) -> bool:
    """``no_lone_two_finish`` (docs/rules.md §4.10): the seat leads holding only a 2, so it
    must hand the lead on with a pass."""
    return t.rules.no_lone_two_finish and not t.lone_two_lifted and is_lone_two(t.mover_mask)


def flips_order(rules: RuleSet, combo: Combination) -> bool:
    """``revolution`` (docs/rules.md §4.9): playing ``combo`` reverses the rank order."""
    return rules.revolution and combo.category is FOUR_OF_A_KIND


# ----- the generator and the refusals ---------------------------------------------------
def select_moves(t: Turn) -> list[Move]:
    """Every legal move of the seat to move, PASS included when legal.  Leading: singles,
    pairs, triples, five-card hands, each weakest first; following: the plays that beat the
    trick weakest first, then any bombs, then PASS.

    This runs at every turn of every simulated hand, so a rule's home is called only when
    its option is on (the option's flag is read first): a rule that is off costs nothing."""
    rules = t.rules
    group = t.mover_combos.group
    hand = t.mover_mask
    to_beat = t.trick
    if to_beat is None:
        if rules.no_lone_two_finish and lone_two_blocks(t):
            return [PASS]  # must hand the lead on
        top = alert_single(t) if rules.alert_rule else None
        moves = group(0, hand) if top is None else [top]
        moves = moves + group(1, hand) + group(2, hand) + group(3, hand)
        must_include = t.must_include
        if must_include is not None:
            moves = [c for c in moves if includes_opening_card(c, must_include)]
        return moves  # type: ignore[return-value]
    size = len(to_beat.cards)
    reversed = t.reversed
    top = alert_single(t) if size == 1 and rules.alert_rule else None
    if top is None:
        moves = stronger(group(GROUP_OF_SIZE[size], hand), to_beat, reversed)
        may_pass = True
    else:  # the strongest card, and no pass, when it beats the trick
        moves = [top] if beats(rules, top, to_beat, reversed) else []
        may_pass = not moves
    if size < 5 and bombs_interrupt(rules, size):
        moves += [c for c in group(3, hand) if c.category in BOMBS]
    if may_pass and not (rules.no_pass_first_trick and first_trick_forbids_pass(t, moves)):  # type: ignore[arg-type]
        moves.append(PASS)  # type: ignore[arg-type]
    return moves  # type: ignore[return-value]


def play_refusal(t: Turn, combo: Combination) -> str | None:
    """Why the seat may not play ``combo`` now (docs/rules.md §8), or ``None`` when it may."""
    missing = combo.mask & ~t.mover_mask
    if missing:
        return f"you do not hold {format_cards(cards_from_mask(missing))}"
    cur = t.trick
    if cur is None:
        if not includes_opening_card(combo, t.must_include):
            return f"the opening lead must include {t.must_include}"
        if t.rules.no_lone_two_finish and lone_two_blocks(t):
            return (
                "no_lone_two_finish: you may not win by leading a single 2 as your last "
                "card; pass the lead"
            )
    elif not beats(t.rules, combo, cur, t.reversed):
        if len(combo.cards) != len(cur.cards):
            n = len(cur.cards)
            return f"the trick is {_SIZE_NAMES[n]}: play {n} card{'s' if n > 1 else ''}"
        return f"{combo} does not beat {cur}"
    if t.rules.alert_rule and len(combo.cards) == 1:
        top = alert_single(t)
        if top is not None and combo.mask != top.mask:
            return (
                f"alert rule: seat {t.next_seat} has one card left, so a single "
                f"must be your strongest card ({top})"
            )
    return None


def pass_refusal(t: Turn) -> str | None:
    """Why the seat may not pass now (docs/rules.md §8), or ``None`` when it may."""
    cur = t.trick
    rules = t.rules
    if cur is None:
        if rules.no_lone_two_finish and lone_two_blocks(t):
            return None
        return "you lead this trick: passing is not allowed"
    top = alert_single(t) if rules.alert_rule and len(cur.cards) == 1 else None
    if top is not None and beats(rules, top, cur, t.reversed):
        return (
            f"alert rule: seat {t.next_seat} has one card left and your "
            f"strongest card beats {cur}: you must play it"
        )
    if rules.no_pass_first_trick and first_trick_forbids_pass(t):
        return "no_pass_first_trick: you hold a play that beats the trick"
    return None


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

    # the Turn protocol
    @property
    def trick(self) -> Combination | None:
        """The play to beat, as the :class:`Turn` protocol names it."""
        return self.to_beat

    @property
    def mover_mask(self) -> int:
        """My cards as a mask, as the :class:`Turn` protocol names it."""
        return self.hand

    @property
    def mover_combos(self) -> SeatCombinations:
        """My combinations, kept narrowed as cards leave my hand (the :class:`Turn` protocol), so
        listing legal moves is a search rather than a fresh enumeration."""
        return self.combos

    @property
    def next_seat(self) -> int:
        """The seat that plays after mine, whose card count the alert rule reads."""
        return (self.seat + 1) % len(self.cards_left)

    @property
    def next_holds_one(self) -> bool:
        """The next seat holds a single card: the alert rule then constrains my single."""
        return self.cards_left[self.next_seat] == 1

    def legal_moves(self) -> list[Move]:
        """My legal moves, computed by the same functions the referee uses, so what a bot
        is offered is exactly what the referee accepts."""
        return select_moves(self)

    def refusal(self, move: Move) -> str | None:
        """Why the referee would refuse ``move`` (a combination of these rules, or PASS),
        or ``None`` when it is legal (see :func:`play_refusal`)."""
        return pass_refusal(self) if move is PASS else play_refusal(self, move)  # type: ignore[arg-type]
