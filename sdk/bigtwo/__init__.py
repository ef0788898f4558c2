"""Big Two family rules engine and bot SDK.

The engine (cards, rule sets, combinations, the game state machine, observations) is pure
and imports only the standard library, so the referee and every bot judge legality with
the same code::

    import random
    from bigtwo import Game, RuleSet

    g = Game(RuleSet.preset("hk"), seed=7)
    while not g.hand_over:
        g.apply(random.choice(g.legal_moves()))

A bot subclasses :class:`Bot`; :func:`play_local` plays it against others in-process, as
the arena would (see the SDK's README, a guide for bot authors).
"""

from .answers import InvalidReturn
from .bot import Bot
from .cards import (
    CARDS,
    RANKS,
    SUITS,
    Card,
    CardParseError,
    Rank,
    Suit,
    format_cards,
    parse_card,
    parse_cards,
)
from .combos import (
    BOMBS,
    FLUSH,
    FOUR_OF_A_KIND,
    FULL_HOUSE,
    PAIR,
    PASS,
    SINGLE,
    STRAIGHT,
    STRAIGHT_FLUSH,
    TRIPLE,
    Category,
    Combination,
    Move,
    PassMove,
)
from .game import Action, Game, HandResult, IllegalMoveError, deal
from .local import LocalFault, LocalResult, play_local
from .observation import Observation
from .rules import OPTION_NAMES, PRESETS, RulesError, RuleSet
from .scoring import hand_scores, penalty

__all__ = [
    "BOMBS",
    "CARDS",
    "FLUSH",
    "FOUR_OF_A_KIND",
    "FULL_HOUSE",
    "OPTION_NAMES",
    "PAIR",
    "PASS",
    "PRESETS",
    "RANKS",
    "SINGLE",
    "STRAIGHT",
    "STRAIGHT_FLUSH",
    "SUITS",
    "TRIPLE",
    "Action",
    "Bot",
    "Card",
    "CardParseError",
    "Category",
    "Combination",
    "Game",
    "HandResult",
    "IllegalMoveError",
    "InvalidReturn",
    "LocalFault",
    "LocalResult",
    "Move",
    "Observation",
    "PassMove",
    "Rank",
    "RuleSet",
    "RulesError",
    "Suit",
    "deal",
    "format_cards",
    "hand_scores",
    "parse_card",
    "parse_cards",
    "penalty",
    "play_local",
]
__version__ = "0.1.0"
