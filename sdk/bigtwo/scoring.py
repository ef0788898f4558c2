"""Scoring a finished hand and the end of a match (docs/rules.md §5, §6 and §7).

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
    """Penalty for ``n`` cards left before any bonus: the tables of docs/rules.md §5."""
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


def winning_team(rules: RuleSet, winner: int) -> tuple[int, ...] | None:
    """``teams`` (docs/rules.md §7): the seats of the hand winner's team (partners are
    seats 0+2 and 1+3), or ``None`` in individual play."""
    if not rules.teams:
        return None
    return tuple(s for s in range(rules.players) if s % 2 == winner % 2)


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
    team = winning_team(rules, winner)
    if team is not None:
        # the winner's partner pays nothing: only the losing team's penalties count
        penalties = [0 if s in team else penalties[s] for s in range(n)]
        total = sum(penalties)
        return penalties, [total if s in team else -total for s in range(n)]
    scores = [-p for p in penalties]
    if rules.scoring != "family":
        scores[winner] = sum(penalties)
    return penalties, scores


def match_over(
    rules: RuleSet, hands_played: int, scores: Sequence[int], penalty_totals: Sequence[int]
) -> bool:
    """``match_end`` and ``match_end_value`` (docs/rules.md §6): whether the match is over
    after ``hands_played`` hands with these cumulative scores and penalty points."""
    end, value = rules.match_end, rules.match_end_value
    if end == "hands":
        return hands_played >= value
    if end == "target":
        return max(scores) >= value
    return max(penalty_totals) > value  # threshold
