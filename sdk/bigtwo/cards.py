"""Cards, their text notation and their stable integer ids.

A card is an ``int`` subclass so that hands can be handled as plain integers and bit masks
in the hot paths of the engine, while still printing as ``3D``.  Its value is its *id*:

    id = 4 * rank + suit

with ``rank`` 0..12 standing for ``3 4 5 6 7 8 9 T J Q K A 2`` and ``suit`` 0..3 for
``D C H S``.  So ``3D`` is 0, ``3C`` 1, ``3H`` 2, ``3S`` 3, ``4D`` 4 … ``2S`` 51.

The id is *identity, not strength*: how strong a card is depends on the rule set's suit
order (``RuleSet.strength(card)``).  Comparing two ``Card`` values with ``<`` compares ids,
which happens to be strength order only under the ``DCHS`` suit order.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum

RANKS = "3456789TJQKA2"
"""Rank letters from lowest to highest, index = rank number."""
SUITS = "DCHS"
"""Suit letters, index = suit number (identity only; strength depends on the suit order)."""

_SUIT_SYMBOLS = {"♦": 0, "♣": 1, "♥": 2, "♠": 3, "♢": 0, "♧": 1, "♡": 2, "♤": 3}
SUIT_SYMBOLS = "♦♣♥♠"
"""Display symbols in suit-number order."""


class Rank(IntEnum):
    """Rank numbers by name, lowest first: ``card.rank >= Rank.ACE`` rather than ``>= 11``.

    An ``int`` (``Rank.TWO == 12``), so arithmetic and comparisons with numbers still work."""

    THREE = 0
    FOUR = 1
    FIVE = 2
    SIX = 3
    SEVEN = 4
    EIGHT = 5
    NINE = 6
    TEN = 7
    JACK = 8
    QUEEN = 9
    KING = 10
    ACE = 11
    TWO = 12


class Suit(IntEnum):
    """Suit numbers by name (identity, not strength: see ``RuleSet.suit_order``)."""

    DIAMONDS = 0
    CLUBS = 1
    HEARTS = 2
    SPADES = 3


_RANK_OF = tuple(Rank)
_SUIT_OF = tuple(Suit)


class CardParseError(ValueError):
    """A piece of text that is not a card; the message names the offending token."""


class Card(int):
    """One of the 52 cards.  Construct from an id (``Card(0)``) or text (``Card("3D")``)."""

    __slots__ = ()

    def __new__(cls, value: int | str) -> Card:
        if isinstance(value, str):
            return CARDS[_parse_token(value)]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 52:
            raise CardParseError(f"card id must be an integer 0..51, got {value!r}")
        return int.__new__(cls, value)

    @property
    def rank(self) -> Rank:
        """:class:`Rank` (0..12 for 3 … 2); higher is stronger (without revolution)."""
        return _RANK_OF[self >> 2]

    @property
    def suit(self) -> Suit:
        """:class:`Suit` (0..3 for D C H S): identity, not strength."""
        return _SUIT_OF[self & 3]

    @property
    def rank_char(self) -> str:
        """The rank as the one character of the card's text (``T`` for ten), as parsed back by
        :func:`parse_card`."""
        return RANKS[self >> 2]

    @property
    def suit_char(self) -> str:
        """The suit as its letter (``D C H S``); ASCII, so it prints on any terminal or log."""
        return SUITS[self & 3]

    @property
    def symbol(self) -> str:
        """The card with its suit symbol, e.g. ``3♦``."""
        return RANKS[self >> 2] + SUIT_SYMBOLS[self & 3]

    def __str__(self) -> str:
        return _NAMES[self]

    def __repr__(self) -> str:
        return f"Card('{_NAMES[self]}')"

    def __reduce__(self) -> tuple[type[Card], tuple[int]]:
        return (Card, (int(self),))


_NAMES = [r + s for r in RANKS for s in SUITS]


def _make_cards() -> tuple[Card, ...]:
    return tuple(int.__new__(Card, i) for i in range(52))


CARDS: tuple[Card, ...] = _make_cards()
"""The 52 cards indexed by id; every ``Card`` the engine hands out is one of these."""

_RANK_INDEX = {c: i for i, c in enumerate(RANKS)}
_RANK_INDEX["10"] = RANKS.index("T")
_SUIT_INDEX = {c: i for i, c in enumerate(SUITS)}
_SUIT_INDEX.update(_SUIT_SYMBOLS)


def _parse_token(token: str) -> int:
    """Card id of one token: ``3D``, ``10H``, ``TH``, ``th``, ``A♠``, ``♠A``."""
    t = token.strip().upper()
    for suit_text, rank_text in ((t[-1:], t[:-1]), (t[:1], t[1:])):
        suit = _SUIT_INDEX.get(suit_text)
        rank = _RANK_INDEX.get(rank_text)
        if suit is not None and rank is not None:
            return rank * 4 + suit
    raise CardParseError(
        f"not a card: {token!r} (expected rank 3-9 T/10 J Q K A 2 and suit D C H S or ♦♣♥♠, "
        "e.g. 3D, 10H, A♠)"
    )


def parse_card(text: str | int) -> Card:
    """One card from text or an id."""
    return Card(text)


def parse_cards(cards: str | Iterable[str | int]) -> list[Card]:
    """Cards from text (``"3D 3C"``, commas allowed) or from an iterable of texts or ids.

    Order is kept and duplicates are kept, so that callers can report "a card twice".
    """
    if isinstance(cards, str):
        tokens: Iterable[str | int] = cards.replace(",", " ").split()
    else:
        tokens = cards
    out = []
    for tok in tokens:
        if isinstance(tok, Card):
            out.append(tok)
        else:
            out.append(Card(tok))
    return out


def format_cards(cards: Iterable[int], symbols: bool = False) -> str:
    """Cards as space-separated text (``3D 3C``) or with suit symbols (``3♦ 3♣``)."""
    if symbols:
        return " ".join(CARDS[c].symbol for c in cards)
    return " ".join(_NAMES[c] for c in cards)


def cards_from_mask(mask: int) -> list[Card]:
    """Cards whose id bits are set in ``mask``, in id order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(CARDS[low.bit_length() - 1])
        mask ^= low
    return out


def mask_of(cards: Iterable[int]) -> int:
    """Bit mask with bit ``id`` set for each card."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


FULL_DECK_MASK = (1 << 52) - 1
