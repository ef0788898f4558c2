"""The fixed action and observation encodings of :mod:`bigtwo.env` (docs/env.md).

**Actions.**  A move is a subset of the mover's hand *as it is now*, sorted weakest first
under the rule set's suit order (``Observation.hand``, ``Game.hand(seat)``): a tuple of
positions ``0 … len(hand)-1``.  Index ``offset(k) + r`` is the ``r``-th tuple of
``itertools.combinations(range(H), k)`` for the sizes ``k`` = 1, 2, 3, 5 in that order,
where ``H`` is the rule set's largest hand (13, or 17 with 3 players); the last index is
the pass.  So 13 + 78 + 286 + 1,287 + 1 = 1,665 actions for 13 cards and 17 + 136 + 680 +
6,188 + 1 = 7,022 for 17.  Every legal move of any position is exactly one index; positions
past the end of the current hand are never legal.

**Observations.**  A float32 vector of :data:`OBS_SIZE` (the same for every rule set), built
only from what the seat may know — what the referee sends it over the wire (its own cards,
the public moves, card counts, the position fields of a turn request, the rules, the
scores).  Seats appear as *slots* relative to the observer: slot ``k`` is seat
``(me + k) % players`` (slot 0 is me, slot 1 plays next); slots past the player count are
zero.  Cards appear as 52-long planes indexed by strength under the rule set
(``rules.strength(card)``: 0 the weakest card, 51 the strongest).  :data:`LAYOUT` names
every block; :func:`observation_vector` builds it from a :class:`bigtwo.Observation`, the
definition the environment's incremental encoder is tested against.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations
from math import comb
from typing import Any, ClassVar

import numpy as np

from ..cards import Card
from ..combos import PASS, Category, Combination, Move
from ..observation import Observation
from ..rules import RuleSet

SIZES = (1, 2, 3, 5)
"""Combination sizes, in the order of the action blocks."""
SLOTS = 4
"""Seat slots in the observation (the most players a rule set allows)."""
MAX_HAND = 17
"""The largest hand of any rule set (3 players)."""


class ActionCodec:
    """The action encoding for hands of at most ``hand_size`` cards.

    ``encode(move, hand)`` / ``decode(index, hand)`` take the mover's current hand sorted
    weakest first (``Observation.hand``).  One codec per hand size is shared
    (:meth:`for_hand_size`): its tables are built once."""

    _cache: ClassVar[dict[int, ActionCodec]] = {}

    def __init__(self, hand_size: int) -> None:
        if not 1 <= hand_size <= MAX_HAND:
            raise ValueError(f"hand_size must be 1..{MAX_HAND}, got {hand_size}")
        self.hand_size = hand_size
        self.offsets: dict[int, int] = {}
        positions: list[tuple[int, ...]] = []
        for k in SIZES:
            self.offsets[k] = len(positions)
            positions.extend(combinations(range(hand_size), k))
        self.positions: tuple[tuple[int, ...], ...] = tuple(positions)
        """Index → the hand positions it plays (the pass index excluded)."""
        self.pass_index = len(positions)
        self.n = len(positions) + 1
        """The number of actions (the pass included)."""
        # position bit mask → index: the encoder's one look-up
        self._by_bits: dict[int, int] = {}
        for i, ps in enumerate(positions):
            bits = 0
            for p in ps:
                bits |= 1 << p
            self._by_bits[bits] = i
        # the positions as a padded array (-1 past a move's size), for vectorised policies
        pad = np.full((self.n, 5), -1, dtype=np.int16)
        for i, ps in enumerate(positions):
            pad[i, : len(ps)] = ps
        pad.setflags(write=False)
        self.padded = pad
        """``(n, 5)`` int16: each index's positions, ``-1``-padded; the pass row is all -1."""

    @classmethod
    def for_hand_size(cls, hand_size: int) -> ActionCodec:
        """The codec for hands of this size, built once per size and shared: building one lists
        every subset of the hand up to five cards."""
        codec = cls._cache.get(hand_size)
        if codec is None:
            codec = cls._cache[hand_size] = cls(hand_size)
        return codec

    @classmethod
    def for_rules(cls, rules: RuleSet) -> ActionCodec:
        """The codec a rule set needs (13 cards a hand, 17 with three players)."""
        return cls.for_hand_size(rules.hand_size)

    @classmethod
    def for_actions(cls, n: int) -> ActionCodec:
        """The codec with ``n`` actions (a policy knows the mask's length, not the rules)."""
        for h in range(1, MAX_HAND + 1):
            if sum(comb(h, k) for k in SIZES) + 1 == n:
                return cls.for_hand_size(h)
        raise ValueError(f"no hand size has {n} actions")

    def size_of(self, index: int) -> int:
        """The number of cards index ``index`` plays (0 for the pass)."""
        return 0 if index == self.pass_index else len(self.positions[index])

    def encode(self, move: Move | Any, hand: Sequence[int]) -> int:
        """The index of ``move`` (a Combination, PASS or cards) for a seat holding ``hand``
        (sorted weakest first).  ValueError when a card is not in ``hand``."""
        if move is PASS or getattr(move, "is_pass", False):
            return self.pass_index
        cards: Any = move.cards if isinstance(move, Combination) else move
        where = {int(c): i for i, c in enumerate(hand)}
        bits = 0
        for c in cards:
            p = where.get(int(c))
            if p is None:
                raise ValueError(f"{Card(int(c))} is not in the hand")
            bits |= 1 << p
        index = self._by_bits.get(bits)
        if index is None:
            raise ValueError(f"{len(cards)} cards are no combination size (1, 2, 3 or 5)")
        return index

    def encoder(self, hand: Sequence[int]) -> tuple[dict[int, int], dict[int, int]]:
        """``(bit of each card id, bits → index)`` for ``hand``: what :meth:`index_of`
        needs, made once per hand for encoding many moves."""
        return {int(c): 1 << i for i, c in enumerate(hand)}, self._by_bits

    def decode(self, index: int, hand: Sequence[Card], rules: RuleSet) -> Move | None:
        """The move index ``index`` stands for in a seat holding ``hand`` (sorted weakest
        first): PASS, a Combination of ``rules``, or ``None`` when those cards are no
        combination or lie past the end of the hand."""
        index = int(index)
        if index == self.pass_index:
            return PASS
        if not 0 <= index < self.pass_index:
            raise ValueError(f"action {index} is out of range 0..{self.n - 1}")
        ps = self.positions[index]
        if ps[-1] >= len(hand):
            return None
        return rules.classify([hand[p] for p in ps])


def legal_indices(codec: ActionCodec, hand: Sequence[int], moves: Iterable[Move]) -> list[int]:
    """The index of each of ``moves`` (legal moves of a seat holding ``hand``), in order."""
    bit, by_bits = codec.encoder(hand)
    out = []
    for m in moves:
        if m is PASS:
            out.append(codec.pass_index)
            continue
        b = 0
        for c in m.cards:
            b |= bit[c]
        out.append(by_bits[b])
    return out


# ----- the observation layout --------------------------------------------------------
_CHOICES = (
    ("players", (2, 3, 4)),
    ("suit_order", ("DCHS", "CSHD", "CSDH")),
    ("opening", ("card-holder-every-hand",)),
    ("allow_triples", (True,)),
    ("five_card_hands", (True,)),
    ("straights", ("no-two", "no-two+circular", "family")),
    ("lowest_straight_tops", (True,)),
    ("flush_compare", ("ranks-then-suit", "top-card", "suit-then-ranks")),
    ("bombs", ("anywhere",)),
    ("pass_locks_out", (True,)),
    ("alert_rule", (True,)),
    ("no_pass_first_trick", (True,)),
    ("revolution", (True,)),
    ("no_lone_two_finish", (True,)),
    ("scoring", ("hk", "family", "flat", "pusoy")),
    ("twos_double_penalty", (True,)),
    ("match_end", ("hands", "target", "threshold")),
    ("teams", (True,)),
)
_RULE_FEATURES: list[tuple[str, Any]] = [
    (option, value) for option, values in _CHOICES for value in values
]

LAYOUT: tuple[tuple[str, int], ...] = (
    ("hand", 52),  # my cards
    ("played", SLOTS * 52),  # cards each slot played in this hand
    ("unseen", 52),  # neither mine nor played: the others' cards and any undealt
    ("trick", 52),  # the play to beat (zero when the seat to move leads)
    ("trick_category", 9),  # one-hot: Category 1..8 at 0..7; 8 = no trick (a lead)
    ("trick_owner", SLOTS),  # one-hot slot of the play to beat's owner
    ("cards_left", SLOTS * (MAX_HAND + 1)),  # per slot, one-hot card count 0..17
    ("locked_out", SLOTS),  # slots locked out of this trick (pass_locks_out)
    ("passed", SLOTS),  # slots that passed since the play to beat was made
    ("to_move", SLOTS),  # one-hot slot of the seat to move
    ("flags", 3),  # revolution in force, opening lead (must_include set), first trick
    ("scores", SLOTS),  # tanh(cumulative score / 100) per slot (match episodes)
    ("rules", len(_RULE_FEATURES)),  # the rule set's options, see RULE_FEATURES
)
"""Every block of the observation vector in order: ``(name, length)``."""
RULE_FEATURES: tuple[str, ...] = tuple(
    option if value is True else f"{option}={value}" for option, value in _RULE_FEATURES
)
"""The ``rules`` block, one 0/1 entry each: an option that is on, or has that value."""
OFFSETS: dict[str, int] = {}
_at = 0
for _name, _size in LAYOUT:
    OFFSETS[_name] = _at
    _at += _size
OBS_SIZE = _at
"""Length of the observation vector."""
del _at, _name, _size

_HAND = OFFSETS["hand"]
_PLAYED = OFFSETS["played"]
_UNSEEN = OFFSETS["unseen"]
_TRICK = OFFSETS["trick"]
_CAT = OFFSETS["trick_category"]
_OWNER = OFFSETS["trick_owner"]
_LEFT = OFFSETS["cards_left"]
_LOCKED = OFFSETS["locked_out"]
_PASSED = OFFSETS["passed"]
_TO_MOVE = OFFSETS["to_move"]
_FLAGS = OFFSETS["flags"]
_SCORES = OFFSETS["scores"]
_RULES = OFFSETS["rules"]


def rules_block(rules: RuleSet) -> np.ndarray:
    """The ``rules`` block for ``rules``."""
    return np.array(
        [float(getattr(rules, option) == value) for option, value in _RULE_FEATURES],
        dtype=np.float32,
    )


class PublicState:
    """What every seat knows of the hand being played beyond its own cards, kept move by
    move from the public actions (as a bot's client keeps it from the referee's
    messages): the cards each seat played and which seats passed since the play to beat.

    Kept as bytes (0/1) laid out as the observation's blocks, so that building an
    observation is a few slice copies."""

    __slots__ = ("_strength", "passed", "played", "players", "unplayed")

    def __init__(self, rules: RuleSet) -> None:
        self.players = rules.players
        self._strength = rules.tables.strength
        self.played = bytearray(2 * self.players * 52)
        """Byte ``52 * seat + strength`` is 1 for each card ``seat`` played in this hand;
        the rows are there twice (seat and seat + players), so every rotation is a slice."""
        self.unplayed = bytearray(b"\x01" * 52)
        """Byte ``strength`` is 1 for each card not played in this hand."""
        self.passed = 0
        """Bit ``seat``: passed since the play to beat was made."""

    def start_hand(self) -> None:
        """Forget the previous hand's plays and passes: the observation describes one hand."""
        self.played[:] = bytes(len(self.played))
        self.unplayed[:] = b"\x01" * 52
        self.passed = 0

    def apply(self, seat: int, move: Move, trick_over: bool) -> None:
        """``seat`` made ``move``; ``trick_over``: no play is left to beat after it (the
        trick was won, as the referee's TrickWon says, or the lead was handed on)."""
        if move is PASS:
            self.passed = 0 if trick_over else self.passed | 1 << seat
            return
        strength = self._strength
        played = self.played
        unplayed = self.unplayed
        a = 52 * seat
        b = 52 * (seat + self.players)
        for c in move.cards:
            k = strength[c]
            played[a + k] = 1
            played[b + k] = 1
            unplayed[k] = 0
        self.passed = 0


class Encoder:
    """Builds observation vectors for one rule set (the parts that never change are
    made once)."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.players = rules.players
        self._strength = rules.tables.strength
        template = bytearray(OBS_SIZE)
        template[_RULES:] = bytes(int(x) for x in rules_block(rules))
        self.template = bytes(template)

    def vector(
        self,
        public: PublicState,
        seat: int,
        hand: Iterable[int],
        trick: Combination | None,
        trick_owner: int | None,
        cards_left: Sequence[int],
        locked_out: Iterable[int],
        turn: int,
        reversed: bool,
        must_include: Any,
        first_trick: bool,
        scores: Sequence[int],
    ) -> np.ndarray:
        """The observation of ``seat`` from public facts and its own ``hand``."""
        n = self.players
        strength = self._strength
        o = bytearray(self.template)
        o[_PLAYED : _PLAYED + n * 52] = public.played[52 * seat : 52 * (seat + n)]
        o[_UNSEEN : _UNSEEN + 52] = public.unplayed
        for c in hand:
            k = strength[c]
            o[k] = 1
            o[_UNSEEN + k] = 0
        if trick is None:
            o[_CAT + 8] = 1
        else:
            for c in trick.cards:
                o[_TRICK + strength[c]] = 1
            o[_CAT + trick.category - 1] = 1
            if trick_owner is not None:
                o[_OWNER + (trick_owner - seat) % n] = 1
        passed = public.passed
        at = _LEFT
        for k in range(n):
            s = seat + k
            if s >= n:
                s -= n
            o[at + cards_left[s]] = 1
            at += MAX_HAND + 1
            if passed >> s & 1:
                o[_PASSED + k] = 1
        for s in locked_out:
            o[_LOCKED + (s - seat) % n] = 1
        if turn >= 0:
            o[_TO_MOVE + (turn - seat) % n] = 1
        if reversed:
            o[_FLAGS] = 1
        if must_include is not None:
            o[_FLAGS + 1] = 1
        if first_trick:
            o[_FLAGS + 2] = 1
        vec = np.frombuffer(o, dtype=np.uint8).astype(np.float32)
        if any(scores):
            rot = [(seat + k) % n for k in range(n)]
            vec[_SCORES : _SCORES + n] = np.tanh(np.asarray(scores, dtype=np.float32)[rot] / 100)
        return vec


def first_trick_of(observation: Observation) -> bool:
    """Whether the first trick of the hand is still being played, from the public history
    (the referee's TurnRequest says it too): no trick has been won yet, i.e. no lead after
    the hand's opening lead and a play still to beat once play began."""
    actions = [a for a in observation.history if a.hand == observation.hand_no]
    if not actions:
        return True
    if observation.trick is None:
        return False
    return not any(a.lead for a in actions[1:])


def public_state_of(observation: Observation) -> PublicState:
    """The :class:`PublicState` of the hand being played, from the observation's history."""
    public = PublicState(observation.rules)
    actions = [a for a in observation.history if a.hand == observation.hand_no]
    for i, a in enumerate(actions):
        nxt = actions[i + 1] if i + 1 < len(actions) else None
        # a trick is won when the next action leads, or (at the end of the list) when no
        # play is left to beat
        over = nxt.lead if nxt is not None else observation.trick is None
        public.apply(a.seat, a.move, over)
    return public


def observation_vector(observation: Observation) -> np.ndarray:
    """The observation vector of :class:`bigtwo.Observation` (see :data:`LAYOUT`): the
    definition, used by :class:`bigtwo.env.PolicyBot` in a match and by the tests to check
    the environment's own faster encoder."""
    return Encoder(observation.rules).vector(
        public_state_of(observation),
        observation.seat,
        observation.hand,
        observation.trick,
        observation.trick_owner,
        observation.cards_left,
        observation.locked_out,
        observation.turn,
        observation.reversed,
        observation.must_include,
        first_trick_of(observation),
        observation.scores,
    )


def action_mask(observation: Observation) -> np.ndarray:
    """The action mask of ``observation``: 1 at the index of each legal move (int8)."""
    codec = ActionCodec.for_rules(observation.rules)
    mask = np.zeros(codec.n, dtype=np.int8)
    if observation.legal_moves:
        mask[legal_indices(codec, observation.hand, observation.legal_moves)] = 1
    return mask


def category_name(index: int) -> str:
    """The ``trick_category`` entry ``index`` in words."""
    return "none" if index == 8 else Category(index + 1).label
