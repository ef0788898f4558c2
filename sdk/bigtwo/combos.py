"""Combinations: what a set of cards is under a rule set, how two compare, and every
combination a hand can make.

Speed matters here (bots and the referee ask for legal moves at every turn), so each
combination carries one integer ``key``: within one size, ``a`` beats ``b`` exactly when
``a.key > b.key``.  Five-card keys put the category in the high bits, so a flush key is
above every straight key.  Keys are computed once, when the combination is made; under a
revolution (docs/rules.md §4.9) :func:`reversed_key` computes the mirrored key instead.

Key layout (ranks 0..12 for 3..2, suit positions 0..3 in the rule set's suit order,
strength = 4 * rank + suit position):

- single: strength of the card
- pair: strength of the stronger card (rank, then the stronger suit)
- triple: rank
- five-card: ``category << 24 | sub`` where ``sub`` is
  - straight / straight flush: ``sequence index << 2 | suit position of the deciding card``
  - flush ``ranks-then-suit``: five 4-bit ranks from the highest down, then the suit position
  - flush ``top-card``: strength of the highest card
  - flush ``suit-then-ranks``: suit position, then five 4-bit ranks from the highest down
  - full house: rank of the triple; four of a kind: rank of the four
"""

from __future__ import annotations

from enum import IntEnum
from itertools import combinations, product
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from .cards import CARDS, RANKS, format_cards

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from .rules import RuleSet


class Category(IntEnum):
    """What kind of combination; five-card categories are ordered low → high."""

    SINGLE = 1
    PAIR = 2
    TRIPLE = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8

    @property
    def label(self) -> str:
        """The category's name in records and on the wire (``full-house``): stable text, so a
        record or another language's bot never depends on the enum's numbering."""
        return self.name.lower().replace("_", "-")


SINGLE, PAIR, TRIPLE = Category.SINGLE, Category.PAIR, Category.TRIPLE
STRAIGHT, FLUSH, FULL_HOUSE = Category.STRAIGHT, Category.FLUSH, Category.FULL_HOUSE
FOUR_OF_A_KIND, STRAIGHT_FLUSH = Category.FOUR_OF_A_KIND, Category.STRAIGHT_FLUSH
BOMBS = frozenset({FOUR_OF_A_KIND, STRAIGHT_FLUSH})
"""Categories that may be played on smaller tricks under ``bombs = anywhere``."""

_KIND_OF_SIZE = {1: "single", 2: "pair", 3: "triple", 5: "five"}
_CAT_SHIFT = 24
_BIT = [1 << i for i in range(52)]
_LOWEST_STRAIGHT_MASK = 0b11111  # ranks 3-4-5-6-7


class Combination:
    """A valid play: its ``cards`` (weakest first), ``kind`` (``single``, ``pair``,
    ``triple`` or ``five``), ``category`` and the integer ``key`` it compares by.

    Made by :meth:`RuleSet.classify` and :meth:`RuleSet.legal_plays`; a combination
    belongs to the rule set that made it (``rules``), since the same cards can be a
    straight under one rule set and nothing under another.
    """

    __slots__ = ("cards", "category", "key", "mask", "rules")

    def __init__(
        self, cards: tuple[Any, ...], mask: int, category: Category, key: int, rules: RuleSet
    ) -> None:
        self.cards = cards
        self.mask = mask
        self.category = category
        self.key = key
        self.rules = rules

    @property
    def kind(self) -> str:
        """``single``, ``pair``, ``triple`` or ``five``: what a play must match to follow a trick,
        since only plays of the same size compete (bombs aside)."""
        return _KIND_OF_SIZE[len(self.cards)]

    @property
    def size(self) -> int:
        """The number of cards; the same as ``len(combo)``, for code that reads a move's fields."""
        return len(self.cards)

    @property
    def is_pass(self) -> bool:
        """Always ``False``: lets code test any :data:`Move` without ``isinstance`` or comparing
        to :data:`PASS`."""
        return False

    def __len__(self) -> int:
        return len(self.cards)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.cards)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Combination):
            return (
                self.mask == other.mask
                and self.key == other.key
                and (self.category == other.category)
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.mask)

    def __str__(self) -> str:
        return format_cards(self.cards)

    def __repr__(self) -> str:
        return f"<{self.category.label} {format_cards(self.cards)}>"

    def describe(self) -> str:
        """Human text: ``pair of 9s (9D 9S)``, ``flush, ♥ (3H 5H 8H JH AH)``."""
        cat = self.category
        top = self.cards[-1]
        if cat is SINGLE:
            return f"single {top}"
        if cat in (PAIR, TRIPLE, FOUR_OF_A_KIND):
            counts = _rank_counts(self.cards)
            rank = max(counts, key=counts.__getitem__)
            return f"{cat.label} of {RANKS[rank]}s ({self})"
        if cat is FULL_HOUSE:
            counts = _rank_counts(self.cards)
            three = next(r for r, k in counts.items() if k == 3)
            two = next(r for r, k in counts.items() if k == 2)
            return f"full house, {RANKS[three]}s over {RANKS[two]}s ({self})"
        return f"{cat.label} ({self})"


def _rank_counts(cards: tuple[Any, ...]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for c in cards:
        counts[c >> 2] = counts.get(c >> 2, 0) + 1
    return counts


class PassMove:
    """The pass.  There is one, :data:`PASS`; ``str(PASS) == "pass"``."""

    __slots__ = ()
    cards: tuple[Any, ...] = ()
    mask = 0
    category = None
    kind = "pass"
    size = 0
    is_pass = True

    def __repr__(self) -> str:
        return "PASS"

    def __str__(self) -> str:
        return "pass"

    def describe(self) -> str:
        """``pass``: the same call as :meth:`Combination.describe`, so any move can be described."""
        return "pass"

    def __reduce__(self) -> str:
        return "PASS"


PASS = PassMove()
"""The pass: the one :class:`PassMove`, in ``legal_moves`` whenever passing is legal.
Compare with ``is``: a bot returns it to pass."""
Move = Combination | PassMove
"""What a bot plays: a :class:`Combination` or :data:`PASS`."""


def straight_sequences(straights: str) -> list[tuple[tuple[int, ...], int]]:
    """``straights`` (docs/rules.md §3.3): the rank sequences that are straights, lowest
    first, each with its deciding rank (ranks 0..12 for 3..2)."""
    seqs = [(tuple(range(lo, lo + 5)), lo + 4) for lo in range(8)]  # 3-4-5-6-7 … T-J-Q-K-A
    if straights == "no-two+circular":
        seqs.append(((12, 0, 1, 2, 3), 12))  # 2-3-4-5-6
    elif straights == "family":  # 2-3-4-5-6 < A-2-3-4-5 < J-Q-K-A-2
        seqs += [((12, 0, 1, 2, 3), 12), ((11, 12, 0, 1, 2), 12), ((8, 9, 10, 11, 12), 12)]
    return seqs


class Tables:
    """Per-rule-set lookup tables, built once when the rule set is made
    (:attr:`RuleSet.tables`): card strengths (``strength[card]``, 0 weakest … 51), what
    card ids form (``classify``, ``category_of``) and every combination a hand can make
    (``groups``, ``fives``), weakest first.  Shared by everything playing under the rules:
    read them, never change them."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        order = rules.suit_order
        self.suit_pos = [order.index(s) for s in "DCHS"]
        self.strength = [(i >> 2) * 4 + self.suit_pos[i & 3] for i in range(52)]
        self.rstrength = [(12 - (i >> 2)) * 4 + self.suit_pos[i & 3] for i in range(52)]
        self.triples = rules.allow_triples
        self.five = rules.five_card_hands
        self.flush_compare = rules.flush_compare
        self.lowest_tops = rules.lowest_straight_tops
        # sequences: (ranks ascending, rank mask, sequence index, deciding rank)
        seqs = straight_sequences(rules.straights)
        self.seq_list = []
        self.seqs: dict[int, tuple[int, int]] = {}
        for idx, (ranks, decide) in enumerate(seqs):
            rmask = 0
            for r in ranks:
                rmask |= 1 << r
            self.seq_list.append((tuple(sorted(ranks)), rmask, idx, decide))
            self.seqs[rmask] = (idx, decide)
        self.max_seq = len(seqs) - 1

    # ----- keys -------------------------------------------------------------------------
    def straight_key(self, cat: Category, ids: tuple[int, ...], rmask: int, rev: bool) -> int:
        """The key of a straight or straight flush: its place in the rule set's sequence order,
        then its deciding card's suit; the house rules (3-4-5-6-7 on top, a revolution) are
        applied here so comparing keys needs no rule knowledge."""
        idx, decide = self.seqs[rmask]
        if cat is STRAIGHT and self.lowest_tops and rmask == _LOWEST_STRAIGHT_MASK:
            idx = self.max_seq + 1  # house rule: 3-4-5-6-7 tops the non-flush straights
        if rev:  # a revolution negates the sequence order in force, house rule included
            idx = self.max_seq + 1 - idx
        for c in ids:
            if c >> 2 == decide:
                return cat << _CAT_SHIFT | idx << 2 | self.suit_pos[c & 3]
        raise AssertionError("deciding card missing")  # pragma: no cover

    def flush_key(self, ids: tuple[int, ...], rev: bool) -> int:
        """The key of a flush under the rule set's ``flush_compare`` (top card, ranks then suit,
        or suit then ranks), packed into one int so flushes compare as plain integers."""
        sp = self.suit_pos[ids[0] & 3]
        if self.flush_compare == "top-card":
            strength = self.rstrength if rev else self.strength
            return FLUSH << _CAT_SHIFT | max(strength[c] for c in ids)
        r0, r1, r2, r3, r4 = sorted([(12 - (c >> 2)) if rev else (c >> 2) for c in ids])
        packed = r4 << 16 | r3 << 12 | r2 << 8 | r1 << 4 | r0
        if self.flush_compare == "ranks-then-suit":
            return FLUSH << _CAT_SHIFT | packed << 2 | sp
        return FLUSH << _CAT_SHIFT | sp << 20 | packed  # suit-then-ranks

    def key_of(self, cat: Category, ids: tuple[int, ...], rev: bool = False) -> int:
        """The comparison key of a combination already known to be of category ``cat``."""
        if cat is SINGLE:
            return (self.rstrength if rev else self.strength)[ids[0]]
        if cat is PAIR:
            strength = self.rstrength if rev else self.strength
            return max(strength[ids[0]], strength[ids[1]])
        if cat is TRIPLE:
            r = ids[0] >> 2
            return 12 - r if rev else r
        if cat is STRAIGHT or cat is STRAIGHT_FLUSH:
            rmask = 0
            for c in ids:
                rmask |= 1 << (c >> 2)
            return self.straight_key(cat, ids, rmask, rev)
        if cat is FLUSH:
            return self.flush_key(ids, rev)
        counts = _rank_counts(ids)
        r = max(counts, key=counts.__getitem__)  # the triple's / the four's rank
        return cat << _CAT_SHIFT | (12 - r if rev else r)

    # ----- classification -------------------------------------------------------------
    def category_of(self, ids: tuple[int, ...]) -> Category | None:
        """Category of a set of distinct card ids, or ``None`` when it is no combination."""
        n = len(ids)
        if n == 1:
            return SINGLE
        if n == 2:
            return PAIR if ids[0] >> 2 == ids[1] >> 2 else None
        if n == 3:
            r = ids[0] >> 2
            if self.triples and ids[1] >> 2 == r and ids[2] >> 2 == r:
                return TRIPLE
            return None
        if n != 5 or not self.five:
            return None
        rmask = 0
        for c in ids:
            rmask |= 1 << (c >> 2)
        s = ids[0] & 3
        flush = all(c & 3 == s for c in ids)
        distinct = rmask.bit_count()
        if distinct == 5:
            if rmask in self.seqs:
                return STRAIGHT_FLUSH if flush else STRAIGHT
            return FLUSH if flush else None
        if distinct == 2:
            counts = sorted(_rank_counts(ids).values())
            return FULL_HOUSE if counts == [2, 3] else FOUR_OF_A_KIND
        return None

    def make(self, ids: tuple[int, ...], cat: Category) -> Combination:
        """Build a combination known to be of ``cat``: cards sorted weakest first, mask and key
        computed once, so every later comparison is an integer comparison."""
        ids = tuple(sorted(ids, key=self.strength.__getitem__))
        mask = 0
        for c in ids:
            mask |= _BIT[c]
        return Combination(
            tuple(CARDS[c] for c in ids), mask, cat, self.key_of(cat, ids), self.rules
        )

    def classify(self, ids: tuple[int, ...]) -> Combination | None:
        """The combination these card ids make under this rule set, or ``None``; the one place
        that decides what a set of cards is (the referee, bots and the client all call it)."""
        if len(ids) == 1:  # the commonest play, made without the general path
            c = ids[0]
            return Combination((CARDS[c],), _BIT[c], SINGLE, self.strength[c], self.rules)
        if len(set(ids)) != len(ids):
            return None
        cat = self.category_of(ids)
        return None if cat is None else self.make(ids, cat)

    # ----- generation -------------------------------------------------------------------
    def groups(self, ids: Sequence[int], with_fives: bool = True) -> list[list[Combination]]:
        """Every combination the cards ``ids`` can make, as four lists (singles, pairs,
        triples, five-card hands), each sorted by key so that "what beats X" is a suffix.

        Written for speed (it runs for every seat of every deal): unpacked tuples and
        table look-ups instead of generic helpers."""
        strength = self.strength
        rules = self.rules
        cards = CARDS
        bit = _BIT
        ids = sorted(ids, key=strength.__getitem__)
        by_rank: list[list[int]] = [[] for _ in range(13)]
        for c in ids:
            by_rank[c >> 2].append(c)
        singles = [Combination((cards[c],), bit[c], SINGLE, strength[c], rules) for c in ids]
        pairs = []
        triples = []
        for r, lst in enumerate(by_rank):
            if len(lst) < 2:
                continue
            for a, b in combinations(lst, 2):
                pairs.append(
                    Combination((cards[a], cards[b]), bit[a] | bit[b], PAIR, strength[b], rules)
                )
            if len(lst) >= 3 and self.triples:
                for a, b, c in combinations(lst, 3):
                    triples.append(
                        Combination(
                            (cards[a], cards[b], cards[c]),
                            bit[a] | bit[b] | bit[c],
                            TRIPLE,
                            r,
                            rules,
                        )
                    )
        pairs.sort(key=_key)
        if not with_fives:
            return [singles, pairs, triples]
        return [singles, pairs, triples, self._fives(ids, by_rank)]

    def fives(self, ids: Sequence[int]) -> list[Combination]:
        """Every five-card hand the cards ``ids`` can make, sorted by key."""
        ids = sorted(ids, key=self.strength.__getitem__)
        by_rank: list[list[int]] = [[] for _ in range(13)]
        for c in ids:
            by_rank[c >> 2].append(c)
        return self._fives(ids, by_rank)

    def _fives(self, ids: list[int], by_rank: list[list[int]]) -> list[Combination]:
        out: list[Combination] = []
        if not self.five or len(ids) < 5:
            return out
        add = out.append
        rules = self.rules
        cards = CARDS
        bit = _BIT
        strength = self.strength
        hand_rmask = 0
        for r, lst in enumerate(by_rank):
            if lst:
                hand_rmask |= 1 << r
        for ranks, rmask, _idx, _decide in self.seq_list:
            if hand_rmask & rmask != rmask:
                continue
            wrapped = ranks[0] == 0 and ranks[-1] == 12
            for five in product(*[by_rank[r] for r in ranks]):
                a, b, c, d, e = five
                s = a & 3
                cat = (
                    STRAIGHT_FLUSH
                    if b & 3 == s and c & 3 == s and d & 3 == s and e & 3 == s
                    else STRAIGHT
                )
                if wrapped:  # e.g. A-2-3-4-5: order the cards by strength for display
                    five = tuple(sorted(five, key=strength.__getitem__))
                    a, b, c, d, e = five
                add(
                    Combination(
                        (cards[a], cards[b], cards[c], cards[d], cards[e]),
                        bit[a] | bit[b] | bit[c] | bit[d] | bit[e],
                        cat,
                        self.straight_key(cat, five, rmask, False),
                        rules,
                    )
                )
        by_suit: list[list[int]] = [[], [], [], []]
        for c in ids:
            by_suit[c & 3].append(c)
        seqs = self.seqs
        flush_key = self.flush_key
        for lst in by_suit:
            if len(lst) < 5:
                continue
            for five in combinations(lst, 5):
                a, b, c, d, e = five
                if (
                    1 << (a >> 2) | 1 << (b >> 2) | 1 << (c >> 2) | 1 << (d >> 2) | 1 << (e >> 2)
                ) in seqs:
                    continue  # a straight flush, made above
                add(
                    Combination(
                        (cards[a], cards[b], cards[c], cards[d], cards[e]),
                        bit[a] | bit[b] | bit[c] | bit[d] | bit[e],
                        FLUSH,
                        flush_key(five, False),
                        rules,
                    )
                )
        pair_lists = [
            (r, list(combinations(lst, 2))) for r, lst in enumerate(by_rank) if len(lst) >= 2
        ]
        for r3, lst in enumerate(by_rank):
            if len(lst) < 3:
                continue
            key = FULL_HOUSE << _CAT_SHIFT | r3
            for a, b, c in combinations(lst, 3):
                tm = bit[a] | bit[b] | bit[c]
                for r2, pairs in pair_lists:
                    if r2 == r3:
                        continue
                    for d, e in pairs:
                        five_cards = (
                            (cards[d], cards[e], cards[a], cards[b], cards[c])
                            if r2 < r3
                            else (cards[a], cards[b], cards[c], cards[d], cards[e])
                        )
                        add(Combination(five_cards, tm | bit[d] | bit[e], FULL_HOUSE, key, rules))
            if len(lst) == 4:
                key = FOUR_OF_A_KIND << _CAT_SHIFT | r3
                a, b, c, d = lst
                four = (cards[a], cards[b], cards[c], cards[d])
                qm = bit[a] | bit[b] | bit[c] | bit[d]
                for k in ids:
                    if k >> 2 == r3:
                        continue
                    five_cards = (cards[k], *four) if k >> 2 < r3 else (*four, cards[k])
                    add(Combination(five_cards, qm | bit[k], FOUR_OF_A_KIND, key, rules))
        out.sort(key=_key)
        return out


_key = attrgetter("key")


def reversed_key(combo: Combination) -> int:
    """The key ``combo`` compares by while a revolution reverses rank order."""
    return combo.rules._tables.key_of(combo.category, combo.cards, True)


GROUP_OF_SIZE: dict[int, int] = {1: 0, 2: 1, 3: 2, 5: 3}
"""Index into :meth:`Tables.groups` for a combination size (there are no others)."""
