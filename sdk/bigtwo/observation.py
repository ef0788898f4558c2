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
    """A seat's view of the match at one moment: what ``act`` and the ``on_match_start`` /
    ``on_hand_start`` hooks are given.

    The same fields, with the same values, whether the bot plays over the wire (the client
    builds it from the referee's messages) or in-process (:func:`bigtwo.play_local`).
    """

    rules: RuleSet
    """The match's rule set: ``rules.beats(a, b)``, ``rules.classify(cards)``,
    ``rules.legal_plays(cards)``, ``rules.strength(card)``, ``rules.players``..."""
    seat: int
    """My seat, 0..players-1.  Turn order is always seat + 1 (mod players)."""
    hand: tuple[Card, ...]
    """My cards, weakest first under the rules' suit order (empty at ``on_match_start``)."""
    turn: int
    """The seat to move: me in ``act``; the hand's leader at ``on_hand_start``; -1 at
    ``on_match_start`` (no cards dealt yet)."""
    trick: Combination | None
    """The play to beat; ``None`` when the seat to move leads (a new trick)."""
    trick_owner: int | None
    """The seat that made the play to beat (``None`` when there is none)."""
    cards_left: tuple[int, ...]
    """Every seat's card count, in seat order (all 0 at ``on_match_start``)."""
    history: Sequence[Action]
    """Every public play and pass of the match so far, every hand's, oldest first: ``Action
    (hand, seat, move, lead)``.  Read only (over the wire it is the client's own list, not a
    copy: keep ``tuple(history)`` if you need it to stay as it is)."""
    hand_no: int
    """The hand being played, from 0."""
    scores: tuple[int, ...]
    """Cumulative scores of the finished hands, in seat order (higher is better)."""
    results: tuple[HandResult, ...]
    """Finished hands of this match (``remaining`` holds only my cards)."""
    legal_moves: tuple[Move, ...]
    """My legal moves in ``act`` (never empty there); empty in the hooks' observations.

    The order is part of the API (the referee's default action and the sample bots rely on
    it):

    - leading: the singles, then the pairs, the triples and the five-card hands (straights,
      flushes, full houses, four of a kind, straight flushes); the opening lead lists only
      plays holding ``must_include``;
    - following: the plays of the trick's size that beat it, then any bombs that may be
      played on a smaller trick (``bombs = "anywhere"``), then :data:`PASS` when passing is
      legal — the pass is always last;
    - within each group in ascending ``key`` (the rules' order), so ``legal_moves[0]`` is the
      weakest play; under a revolution (``reversed``) the order is kept as it is, so the
      weakest play in force is then the last of its group.
    """
    must_include: Card | None = None
    """The card the opening lead must contain (the lowest card dealt), else ``None``."""
    locked_out: frozenset[int] = frozenset()
    """Seats that passed and may not play again in this trick (``pass_locks_out``); set in
    ``act``'s observation."""
    reversed: bool = False
    """A revolution is in force (``revolution``: a four of a kind reverses rank order); set
    in ``act``'s observation."""

    @classmethod
    def of(cls, game: Game, seat: int, with_moves: bool = True) -> Observation:
        """``seat``'s view of ``game``; its legal moves when it is its turn and
        ``with_moves`` (the hooks' observations hold none, as over the wire)."""
        mine = with_moves and game.turn == seat and not game.hand_over
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
        """The number of seats at the table (2, 3 or 4)."""
        return len(self.cards_left)

    @property
    def is_my_turn(self) -> bool:
        """True when this observation asks for a move; hook observations (deal, hand end) do not."""
        return self.turn == self.seat and bool(self.legal_moves)

    @property
    def leading(self) -> bool:
        """True when I lead (no play to beat): any combination may be played."""
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
            words: str = move.describe()
            return words
        combo = self.rules.classify(move)
        return combo.describe() if combo else f"not a combination: {move}"
