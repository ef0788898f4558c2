"""Duplicate deals: the same cards dealt again with the hands moved across the seats, so
that every bot holds every hand and the luck of the deal cancels out.

A deal comes from a recorded seed (``bigtwo.deal(rules, seed)``).  Its *rotations* are
seat permutations ``p`` (seat ``s`` gets hand ``p[s]``):

- 4 (default): the cyclic rotations — every bot holds every hand once;
- 12: the cyclic rotations of the three seatings that differ up to reflection — every bot
  also sits next to every other bot equally often (which side cannot be balanced exactly
  with 12: the complete directed graph on four vertices has no decomposition into three
  directed 4-cycles);
- 24: every permutation (for finals) — every bot has every other bot on its left equally.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence
from typing import TypeVar

from bigtwo import RuleSet, deal

ROTATIONS = (4, 12, 24)
Entrant = TypeVar("Entrant", bound=Hashable)
"""What names an entrant in a block (a version id, a name): its orders are keyed the same."""


def seat_permutations(players: int, rotations: int) -> list[tuple[int, ...]]:
    cyclic = [tuple((s + r) % players for s in range(players)) for r in range(players)]
    if rotations == players:
        return cyclic
    if players == 4 and rotations == 12:
        seatings = [(0, 1, 2, 3), (0, 1, 3, 2), (0, 2, 1, 3)]
        return [
            tuple(seating[(s + r) % 4] for s in range(4)) for seating in seatings for r in range(4)
        ]
    if players == 4 and rotations == 24:
        return list(itertools.permutations(range(4)))
    raise ValueError(f"rotations must be one of {players} (cyclic), 12 or 24 with 4 players")


def rotated_deals(
    rules: RuleSet, seeds: Sequence[int | str], rotations: int = 4
) -> list[list[list[int]]]:
    """Every deal of ``seeds`` in every rotation, as per-seat hands (card ids), in play
    order: deal 0's rotations, then deal 1's, …"""
    out = []
    for seed in seeds:
        hands = deal(rules, seed)
        for perm in seat_permutations(rules.players, rotations):
            out.append([[int(c) for c in hands[perm[s]]] for s in range(rules.players)])
    return out


def block_rankings(
    seats: Sequence[Entrant], scores: Sequence[Sequence[float]], rotations: int
) -> list[dict[Entrant, float]]:
    """The orders one duplicate block gives the ratings, each as entrant → points (higher
    is better), from ``scores[r][s]``: the points of seat ``s`` in rotation ``r`` of one
    deal (seat ``s`` held ``seats[s]``, hand ``seat_permutations(...)[r][s]``).

    - one per game: the entrants' points in that hand — who outplayed whom at one table;
    - one per set of cards: the points each entrant made *with those same cards* over the
      rotations — a comparison the deal's luck cannot touch.

    The games come first, in rotation order, then the card sets.  An entrant holding
    several seats counts as the mean of its seats, so it is never counted twice.  Orders
    with fewer than two distinct entrants are left out (a game has every entrant, so the
    games are all there or, with one entrant only, none is).  The orders
    of a block are correlated (the same games, the same points), so the fit treats the
    block, not the order, as its unit of evidence."""
    players = len(seats)
    perms = seat_permutations(players, rotations)
    if len(scores) != len(perms) or any(len(row) != players for row in scores):
        raise ValueError(f"a block needs {len(perms)} rows of {players} scores")
    games: list[dict[Entrant, list[float]]] = [{} for _ in perms]
    cards: list[dict[Entrant, list[float]]] = [{} for _ in range(players)]
    for r, perm in enumerate(perms):
        for s, who in enumerate(seats):
            games[r].setdefault(who, []).append(scores[r][s])
            cards[perm[s]].setdefault(who, []).append(scores[r][s])
    orders = []
    for order in games + cards:
        if len(order) >= 2:
            orders.append({who: sum(v) / len(v) for who, v in order.items()})
    return orders
