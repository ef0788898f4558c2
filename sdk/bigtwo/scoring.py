"""Scoring a finished hand (RULES.md §5 and §7).

Scores are signed and *higher is better* under every scoring, so that a ladder can compare
bots the same way whatever the rules.  ``family`` points are bad, so a loser's hand score
there is minus its points and the winner's is 0; the lowest points total is the highest
cumulative score.

Hands of more than 13 cards (3 players deal 17) keep the 13-card multiplier.
"""

from __future__ import annotations

from collections.abc import Sequence

from .rules import RuleSet

_TWO_RANK = 12


def base_penalty(scoring: str, n: int) -> int:
    """Penalty for ``n`` cards left before any bonus: the tables of RULES.md §5."""
    if n <= 0:
        return 0
    if scoring == "hk":
        mult = 1 if n < 8 else 2 if n < 10 else 3 if n < 13 else 4
        return n * mult
    if scoring == "flat":
        return n
    # family and pusoy share one table
    return n if n <= 9 else 2 * n if n <= 12 else 3 * n


def penalty(rules: RuleSet, cards_left: Sequence[int]) -> int:
    """A loser's penalty for the cards they still hold."""
    n = len(cards_left)
    p = base_penalty(rules.scoring, n)
    if rules.scoring == "pusoy" and n:
        if rules.highest_card in cards_left:
            p += 1
        if sum(1 for c in cards_left if c >> 2 == _TWO_RANK) == 4:
            p += 4
    if rules.twos_double_penalty and any(c >> 2 == _TWO_RANK for c in cards_left):
        p *= 2
    return p


def hand_scores(
    rules: RuleSet, winner: int, hands_left: Sequence[Sequence[int]]
) -> tuple[list[int], list[int]]:
    """``(penalties, scores)`` per seat for a hand won by seat ``winner``.

    Individual play: each loser pays their penalty; under the zero-sum scorings the winner
    gains the sum, under ``family`` the winner scores 0.  Teams (§7): the losing team pays
    the sum of its members' penalties; both winners score +sum, both losers −sum.
    """
    n = len(hands_left)
    penalties = [0 if s == winner else penalty(rules, hands_left[s]) for s in range(n)]
    if rules.teams:
        team = winner % 2
        # the winner's partner pays nothing: only the losing team's penalties count
        penalties = [0 if s % 2 == team else penalties[s] for s in range(n)]
        total = sum(penalties)
        return penalties, [total if s % 2 == team else -total for s in range(n)]
    scores = [-p for p in penalties]
    if rules.scoring != "family":
        scores[winner] = sum(penalties)
    return penalties, scores
