"""Big Two family rules engine and bot SDK.

The engine (cards, rule sets, combinations, the game state machine, observations) is pure
and imports only the standard library, so the referee and every bot judge legality with
the same code::

    import random
    from bigtwo import Game, RuleSet

    g = Game(RuleSet.preset("hk"), seed=7)
    while not g.hand_over:
        g.apply(random.choice(g.legal_moves()))
"""

from .bot import Bot
from .cards import CARDS, RANKS, SUITS, Card, CardParseError, format_cards, parse_card, parse_cards
from .combos import PASS, Category, Combination, Move, PassMove
from .game import Action, Game, HandResult, IllegalMoveError, deal
from .observation import Observation
from .rules import OPTION_NAMES, PRESETS, RulesError, RuleSet
from .scoring import hand_scores, penalty

__all__ = [
    "CARDS",
    "OPTION_NAMES",
    "PASS",
    "PRESETS",
    "RANKS",
    "SUITS",
    "Action",
    "Bot",
    "Card",
    "CardParseError",
    "Category",
    "Combination",
    "Game",
    "HandResult",
    "IllegalMoveError",
    "Move",
    "Observation",
    "PassMove",
    "RuleSet",
    "RulesError",
    "deal",
    "format_cards",
    "hand_scores",
    "parse_card",
    "parse_cards",
    "penalty",
]
__version__ = "0.1.0"
