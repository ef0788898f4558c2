"""What one seat may know, and the helpers a bot author wants.

An :class:`Observation` is a snapshot made for one seat: its own cards, everything public
(the trick, cards left per seat, every play and pass so far, scores) and, when it is that
seat's turn, the legal moves.  It never holds another seat's cards, the undealt cards or
the seed, so it is what a bot may be given.  The referee builds the same object on the bot's
side from the messages it receives.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .cards import Card, cards_from_mask
from .combos import Combination, Move
from .rules import RuleSet

if TYPE_CHECKING:
    from .game import Action, Game, HandResult


@dataclass(frozen=True)
class Observation:
    """A seat's view of the match at one moment."""

    rules: RuleSet
    seat: int
    hand: tuple[Card, ...]
    """My cards, weakest first."""
    turn: int
    """Seat to move."""
    trick: Combination | None
    """The play to beat; ``None`` when the seat to move leads."""
    trick_owner: int | None
    """Seat that made the play to beat."""
    cards_left: tuple[int, ...]
    history: Sequence[Action]
    """Every public play and pass of the match so far, oldest first (read only)."""
    hand_no: int
    scores: tuple[int, ...]
    """Cumulative scores (higher is better)."""
    results: tuple[HandResult, ...]
    """Finished hands of this match (without other seats' remaining cards)."""
    legal_moves: tuple[Move, ...]
    """My legal moves when it is my turn (pass included when legal), else empty."""
    must_include: Card | None = None
    locked_out: frozenset[int] = frozenset()
    reversed: bool = False

    @classmethod
    def of(cls, game: Game, seat: int) -> Observation:
        mine = game.turn == seat and not game.hand_over
        return cls(
            rules=game.rules,
            seat=seat,
            hand=game.hand(seat),
            turn=game.turn,
            trick=game.trick,
            trick_owner=game.last_player if game.trick is not None else None,
            cards_left=game.cards_left,
            history=tuple(game.history),
            hand_no=game.hand_no,
            scores=tuple(game.scores),
            results=tuple(
                dataclasses.replace(
                    r,
                    remaining=tuple(
                        r.remaining[s] if s == seat else () for s in range(len(r.remaining))
                    ),
                )
                for r in game.results
            ),
            legal_moves=tuple(game.legal_moves()) if mine else (),
            must_include=game.must_include,
            locked_out=game.locked_out,
            reversed=game.reversed,
        )

    @property
    def players(self) -> int:
        return len(self.cards_left)

    @property
    def is_my_turn(self) -> bool:
        return self.turn == self.seat and bool(self.legal_moves)

    @property
    def leading(self) -> bool:
        return self.trick is None

    def played_cards(self) -> list[Card]:
        """Cards played so far in the current hand, in play order."""
        return [c for a in self.history if a.hand == self.hand_no for c in a.move.cards]

    def unseen_cards(self) -> list[Card]:
        """Cards I have not seen: not in my hand and not played in this hand (other seats'
        hands plus any undealt cards), weakest first."""
        seen = 0
        for c in self.hand:
            seen |= 1 << c
        for c in self.played_cards():
            seen |= 1 << c
        return self.rules.sort_cards(cards_from_mask(((1 << 52) - 1) & ~seen))

    def next_seat(self, seat: int | None = None) -> int:
        """The seat that plays after ``seat`` (default: me)."""
        return ((self.seat if seat is None else seat) + 1) % self.players

    def describe(self, move: Any) -> str:
        """A move in words: ``pair of 9s (9D 9S)``, ``pass``."""
        if isinstance(move, Combination) or getattr(move, "is_pass", False):
            return move.describe()
        combo = self.rules.classify(move)
        return combo.describe() if combo else f"not a combination: {move}"
