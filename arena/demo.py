"""The demo match: four (or 2–3) random players, every deal, play and score shown in the
terminal.  It is the arena's smoke test for a person: does the engine deal, enforce and
score a whole match under these rules?"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from bigtwo import PASS, Card, Game, RuleSet

from .text import printable

_SUIT_STYLE = {0: "red", 1: "bright_white", 2: "red", 3: "bright_white"}


def card_text(card: Card) -> Text:
    return Text(card.symbol, style=_SUIT_STYLE[card.suit])


def cards_text(cards: Any) -> Text:
    out = Text()
    for i, c in enumerate(cards):
        if i:
            out.append(" ")
        out.append_text(card_text(c))
    return out


def seat_name(seat: int, rules: RuleSet, names: list[str] | None = None) -> str:
    """``seat 2``, or with the players' ``names`` (shown as they are: make them
    :func:`~arena.text.printable` first) ``heuristic (seat 2)``; the team when there are
    teams."""
    team = f"team {'A' if seat % 2 == 0 else 'B'}" if rules.teams else ""
    if names is None:
        return f"seat {seat} ({team})" if team else f"seat {seat}"
    return f"{names[seat]} (seat {seat}{', ' + team if team else ''})"


def play_match(
    rules: RuleSet,
    seed: int,
    max_hands: int | None,
    on_event: Callable[[str, Game, Any], None],
) -> Game:
    """Play a match of random legal moves, telling ``on_event`` about each step:
    ``deal`` (hand started), ``move`` (an Action), ``hand`` (a HandResult)."""
    rng = random.Random(f"demo-players/{seed}")
    game = Game(rules, seed=seed)
    while True:
        on_event("deal", game, None)
        while not game.hand_over:
            game.apply(rng.choice(game.legal_moves()))
            on_event("move", game, game.history[-1])
        on_event("hand", game, game.results[-1])
        if game.match_over or (max_hands is not None and len(game.results) >= max_hands):
            return game
        game.next_hand()


class DemoPrinter:
    """Renders the events of :func:`play_match` on a rich console (and, for ``arena
    replay``, those of a record: see :mod:`arena.replay_view`).

    ``names``: the player of each seat (someone else's words: shown made
    :func:`~arena.text.printable`, at most 24 characters)."""

    def __init__(
        self,
        console: Console,
        rules: RuleSet,
        show_moves: bool = True,
        names: list[Any] | None = None,
    ) -> None:
        self.console = console
        self.rules = rules
        self.show_moves = show_moves
        self.names = None if names is None else [printable(n, 24) for n in names]

    def __call__(self, kind: str, game: Game, payload: Any) -> None:
        getattr(self, f"_on_{kind}")(game, payload)

    def who(self, seat: int) -> str:
        return seat_name(seat, self.rules, self.names)

    def _on_deal(self, game: Game, _: Any) -> None:
        c = self.console
        c.rule(f"Hand {game.hand_no + 1}")
        width = max(len(self.who(s)) for s in range(game.players))
        for s in range(game.players):
            line = Text(f"{self.who(s):>{width}}: ")
            line.append_text(cards_text(game.hand(s)))
            c.print(line)
        lead = f"{self.who(game.turn)} leads"
        if game.must_include is not None:
            lead += f" and must play {game.must_include.symbol}"
        c.print(Text(lead, style="bold"))

    def _on_move(self, game: Game, action: Any) -> None:
        if not self.show_moves:
            return
        self.console.print(self.move_text(game, action))
        if game.trick is None and not game.hand_over and not action.lead:
            self.console.print(
                Text(f"  — trick won by {self.who(game.turn)}, who leads next", style="dim")
            )

    def move_text(self, game: Game, action: Any) -> Text:
        """The line of one move (``game`` as it is after the move)."""
        who = self.who(action.seat)
        if action.move is PASS:
            verb = "hands the lead on" if action.lead else "passes"
            return Text(f"  {who} {verb}", style="dim")
        line = Text(f"  {who} {'leads' if action.lead else 'plays'} ")
        line.append(action.move.category.label + " ")
        line.append_text(cards_text(action.move.cards))
        left = game.counts[action.seat]
        line.append(f"   ({left} left)" if left else "   — out!", style="bold" if not left else "")
        return line

    def _on_hand(self, game: Game, result: Any) -> None:
        table = Table(title=Text(f"Hand {result.hand + 1}: {self.who(result.winner)} wins"))
        for col in ("seat", "cards left", "penalty", "hand score", "total"):
            table.add_column(col, justify="right")
        for s in range(game.players):
            table.add_row(
                Text(self.who(s)),  # a Text: a name is never read as markup
                str(result.cards_left[s]),
                str(result.penalties[s]),
                f"{result.scores[s]:+d}",
                f"{result.cumulative[s]:+d}",
            )
        self.console.print(table)


def standings_table(game: Game, names: list[Any] | None = None) -> Table:
    """Final places, best first; ``names`` as :class:`DemoPrinter` takes them."""
    shown = None if names is None else [printable(n, 24) for n in names]
    places = game.places()
    table = Table(title="Final standings")
    table.add_column("place", justify="right")
    table.add_column("seat")
    table.add_column("score", justify="right")
    table.add_column("penalty points", justify="right")
    table.add_column("hands won", justify="right")
    wins = [sum(1 for r in game.results if r.winner == s) for s in range(game.players)]
    for s in sorted(range(game.players), key=lambda s: (places[s], s)):
        table.add_row(
            str(places[s]),
            Text(seat_name(s, game.rules, shown)),
            f"{game.scores[s]:+d}",
            str(game.penalty_totals[s]),
            str(wins[s]),
        )
    return table


def match_summary(game: Game) -> dict[str, Any]:
    """The match as one JSON-ready object."""
    places = game.places()
    return {
        "rules": game.rules.to_dict(),
        "seed": game.seed,
        "match_over": game.match_over,
        "hands": [r.to_dict() for r in game.results],
        "seats": [
            {
                "seat": s,
                "player": "random",
                "score": game.scores[s],
                "penalty_points": game.penalty_totals[s],
                "place": places[s],
            }
            for s in range(game.players)
        ],
    }
