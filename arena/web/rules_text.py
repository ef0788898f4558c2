"""A rule set in words: one plain-English entry per option, for the web arena's Rules page:
what a participant reads before writing a bot for the contest's rules.

Every sentence is derived from the option's value (and, where the meaning depends on it, from
the other options: the lowest card from ``suit_order``, the cards dealt from ``players``), so
the page can never describe rules other than those in force.  The wording follows
docs/rules.md (the project's rulebook); each entry cites the section of docs/rules.md that
defines the option (its §12 table).

Pure Python with no web imports, and the texts are plain strings: whoever shows them escapes
them.  An option of ``RuleSet`` without a describer here is an error (``KeyError``), so a new
option cannot silently go undescribed; tests/web/test_rules_text.py enumerates every option
and value from the RuleSet's own validation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bigtwo import OPTION_NAMES, PRESETS, RuleSet

SUIT_SYMBOLS = {"D": "♦", "C": "♣", "H": "♥", "S": "♠"}
_NUMBER_WORDS = {2: "Two", 3: "Three", 4: "Four"}


def nearest_preset(rules: RuleSet) -> str:
    """The preset these rules equal, else the one they differ from in the fewest options
    (ties go to the first in ``PRESETS`` order) — the same choice as
    ``arena.replay_view.rules_summary``, so the page and ``arena replay`` name one base."""
    mine = rules.to_dict()

    def differences(name: str) -> int:
        base = RuleSet.preset(name).to_dict()
        return sum(1 for k, v in mine.items() if base[k] != v)

    return min(PRESETS, key=differences)


def describe(rules: RuleSet) -> list[dict[str, Any]]:
    """One entry per option of ``rules``, in reading order (players and dealing, card order,
    combinations, opening, tricks, special rules, scoring, match end, teams)::

        {"option": "bombs", "value": "anywhere", "section": "§4.6",
         "topic": "Tricks", "text": "Bombs (…) may be played on …",
         "preset_default": False}

    ``value`` is as in ``RuleSet.to_dict()``; ``preset_default`` says whether it equals the
    value of :func:`nearest_preset`'s preset.  Raises ``KeyError`` for an option of
    ``RuleSet`` that has no describer here (caught by the tests, never by the page)."""
    values = rules.to_dict()
    base = RuleSet.preset(nearest_preset(rules)).to_dict()
    missing = [name for name in OPTION_NAMES if name not in _DESCRIBERS]
    if missing:
        raise KeyError(f"no description for rule option(s) {', '.join(missing)}")
    entries = []
    for name, (section, topic, describer) in _DESCRIBERS.items():
        entries.append(
            {
                "option": name,
                "value": values[name],
                "section": section,
                "topic": topic,
                "text": describer(rules),
                "preset_default": values[name] == base[name],
            }
        )
    return entries


# ----- helpers --------------------------------------------------------------------------
def suit_order_text(suit_order: str) -> str:
    """``CSHD`` → ``♣ < ♠ < ♥ < ♦`` (lowest first)."""
    return " < ".join(SUIT_SYMBOLS[s] for s in suit_order)


def _lowest(rules: RuleSet) -> str:
    return rules.lowest_card.symbol


def _highest(rules: RuleSet) -> str:
    return rules.highest_card.symbol


def _unknown(rules: RuleSet, option: str) -> KeyError:
    """A value this module has no words for: a new value of the RuleSet (the tests, which
    enumerate the RuleSet's values, fail on it first)."""
    return KeyError(f"no description for {option}={getattr(rules, option)!r}")


def _no_fives_note(rules: RuleSet) -> str:
    """Options that only touch five-card hands do nothing when those are not played."""
    if rules.five_card_hands:
        return ""
    return " (This has no effect here: five-card hands are not played.)"


# ----- one describer per option ---------------------------------------------------------
def _players(rules: RuleSet) -> str:
    n, k = rules.players, rules.hand_size
    left = 52 - n * k
    if left == 0:
        aside = "the whole deck is dealt"
    elif left == 1:
        aside = "the one card left over is set aside face down, unseen by anyone"
    else:
        aside = f"the other {left} cards are set aside unseen by anyone"
    seats = ", ".join(str(s) for s in range(n))
    return (
        f"{_NUMBER_WORDS.get(n, str(n))} players, {k} cards each; {aside}. "
        f"Players take turns in seat order (seat {seats}, then 0 again)."
    )


def _direction(rules: RuleSet) -> str:
    return (
        f"The seats are drawn {rules.direction} round the table. This only changes how the "
        "table is shown, never who plays next: turns always go in seat order."
    )


def _suit_order(rules: RuleSet) -> str:
    return (
        "Ranks go from 3 (lowest) up to K, A and then 2 (highest); between two cards of the "
        f"same rank the suit decides, lowest to highest {suit_order_text(rules.suit_order)}. "
        f"So the lowest card is {_lowest(rules)} and the highest {_highest(rules)}."
    )


def _allow_triples(rules: RuleSet) -> str:
    if rules.allow_triples:
        return "Three cards of one rank (a triple) may be played; triples compare by rank."
    return (
        "Triples are not played: three cards of one rank on their own are never a "
        "combination (a full house may still hold three of a rank)."
    )


def _five_card_hands(rules: RuleSet) -> str:
    if rules.five_card_hands:
        return (
            "Five-card hands may be played, weakest to strongest: straight, flush, full house, "
            "four of a kind (with any fifth card), straight flush. A higher kind beats a lower "
            "one whatever its ranks."
        )
    others = "singles, pairs and triples" if rules.allow_triples else "singles and pairs"
    return f"No five-card hands: only {others} may be played."


def _straights(rules: RuleSet) -> str:
    same_run = (
        "Two straights of the same ranks compare by the suit of their deciding card "
        "(the 2 when the run holds one, otherwise its top card)."
    )
    if rules.straights == "no-two":
        text = (
            "A straight is five consecutive ranks, from 3-4-5-6-7 (lowest) up to T-J-Q-K-A "
            "(highest); a 2 is never part of a straight. Two straights of the same ranks "
            "compare by the suit of their top card."
        )
    elif rules.straights == "no-two+circular":
        text = (
            "A straight is five consecutive ranks from 3-4-5-6-7 up to T-J-Q-K-A, plus "
            "2-3-4-5-6, which beats every other straight; no other run with a 2 counts. " + same_run
        )
    elif rules.straights == "family":
        text = (
            "A straight is five consecutive ranks from 3-4-5-6-7 up to T-J-Q-K-A, plus three "
            "runs with a 2 above them all: 2-3-4-5-6, then A-2-3-4-5, then J-Q-K-A-2 "
            "(highest); no other run with a 2 counts. " + same_run
        )
    else:
        raise _unknown(rules, "straights")
    return text + _no_fives_note(rules)


def _lowest_straight_tops(rules: RuleSet) -> str:
    if rules.lowest_straight_tops:
        text = (
            "3-4-5-6-7 is the highest straight, above every other run (straight flushes "
            "still rank among themselves by their usual run order)."
        )
    else:
        text = "Straights rank by their run, so 3-4-5-6-7 is the lowest straight."
    return text + _no_fives_note(rules)


def _flush_compare(rules: RuleSet) -> str:
    if rules.flush_compare == "ranks-then-suit":
        text = (
            "Two flushes compare by their ranks from the highest card down, the first "
            "difference deciding; only when all five ranks are equal does the suit decide."
        )
    elif rules.flush_compare == "top-card":
        text = (
            "Two flushes compare by their strongest card alone (rank, then suit): "
            "3♦4♦6♦J♦2♦ beats 5♥J♥Q♥K♥A♥ because 2♦ is stronger than A♥."
        )
    elif rules.flush_compare == "suit-then-ranks":
        text = (
            "Two flushes compare by suit first, so a flush of a higher suit always wins "
            f"({suit_order_text(rules.suit_order)}); within one suit, by their ranks from "
            "the highest card down."
        )
    else:
        raise _unknown(rules, "flush_compare")
    return text + _no_fives_note(rules)


def _opening(rules: RuleSet) -> str:
    low = _lowest(rules)
    card = (
        f"the lowest card dealt ({low} unless it was not dealt)"
        if rules.players < 4
        else f"the lowest card, {low},"
    )
    if rules.opening == "card-holder-first-hand":
        return (
            f"In the first hand of the match the player holding {card} leads, and the lead "
            "must include that card. Every later hand is led by the winner of the hand "
            "before, with any combination."
        )
    if rules.opening != "card-holder-every-hand":
        raise _unknown(rules, "opening")
    return (
        f"Every hand is opened alike: the player holding {card} leads, and the lead must "
        "include that card (the winner of the hand before does not lead the next)."
    )


def _pass_locks_out(rules: RuleSet) -> str:
    leader = (
        "The leader may not pass, except to hand on the lead when holding only a 2."
        if rules.no_lone_two_finish
        else "The leader may not pass."
    )
    if rules.pass_locks_out:
        return (
            "A player who passes is out of the trick: they may not play again until a new "
            f"trick is led. {leader}"
        )
    return (
        "A player who passes may still play later in the same trick when the turn comes "
        f"back round to them. {leader}"
    )


def _bombs(rules: RuleSet) -> str:
    if rules.bombs == "anywhere":
        text = (
            "Bombs (four of a kind plus a kicker, straight flushes) may be played on a single, "
            "pair or triple as well as on a five-card hand. The trick then becomes a "
            "five-card trick, and only a stronger five-card hand beats it."
        )
    elif rules.bombs == "five-card-only":
        text = (
            "Four of a kind (with a fifth card) and straight flushes are ordinary five-card "
            "hands: they can only be played where a five-card hand can, never on a single, "
            "pair or triple."
        )
    else:
        raise _unknown(rules, "bombs")
    return text + _no_fives_note(rules)


def _alert_rule(rules: RuleSet) -> str:
    if rules.alert_rule:
        return (
            "Alert card: when the next player holds exactly one card and you lead or follow "
            "with a single, it must be your strongest card, and if that card beats the single "
            "on the table you may not pass. Leading a pair, triple or five-card hand is "
            "still allowed."
        )
    return (
        "No alert rule: you may play any single you like even when the next player holds "
        "only one card."
    )


def _no_pass_first_trick(rules: RuleSet) -> str:
    if rules.no_pass_first_trick:
        return "In the first trick of each hand, a player who has a legal play may not pass."
    return "Passing is allowed in the first trick of a hand as in any other."


def _revolution(rules: RuleSet) -> str:
    if rules.revolution:
        text = (
            "Revolution: playing a four of a kind reverses the rank order for the rest of the "
            "hand (3 strongest, 2 weakest) and another four of a kind turns it back. Suits and "
            "the order of the five-card kinds never change."
        )
    else:
        text = "No revolution: the rank order never changes during a hand."
    return text + (_no_fives_note(rules) if rules.revolution else "")


def _no_lone_two_finish(rules: RuleSet) -> str:
    if rules.no_lone_two_finish:
        return (
            "You may not win the hand by leading a single 2 as your last card: a leader left "
            "with only a 2 must pass the lead, and the next player leads anything."
        )
    return "A hand may be won with any last play, a single 2 included."


def _scoring(rules: RuleSet) -> str:
    text = _scoring_table(rules)
    if rules.teams:
        text += " In team play the losing pair pays the winning pair instead (see Teams)."
    return text


def _scoring_table(rules: RuleSet) -> str:
    more = " or more" if rules.hand_size > 13 else ""
    if rules.scoring == "hk":
        return (
            "When a hand ends, each loser pays 1 point per card left for up to 7 cards, "
            f"2 per card for 8–9, 3 per card for 10–12 and 4 per card for 13{more}; "
            "the winner gains what the losers pay."
        )
    if rules.scoring == "flat":
        return (
            "When a hand ends, each loser pays 1 point per card left, with no multiplier; "
            "the winner gains what the losers pay."
        )
    table = (
        f"1 point per card left for up to 9 cards, 2 per card for 10–12, 3 per card for 13{more}"
    )
    if rules.scoring == "family":
        # with teams the match is won on the teams' signed scores (§7), not fewest points
        bad = "" if rules.teams else " Points are bad: the lowest total wins."
        return (
            f"When a hand ends, each loser takes penalty points: {table}; the winner takes "
            f"none.{bad}"
        )
    if rules.scoring != "pusoy":
        raise _unknown(rules, "scoring")
    return (
        f"When a hand ends, each loser pays {table}, plus 1 if holding the highest card "
        f"({_highest(rules)}) and 4 more if holding all four 2s; the winner gains what the "
        "losers pay."
    )


def _twos_double_penalty(rules: RuleSet) -> str:
    if rules.twos_double_penalty:
        return "A loser still holding any 2 when the hand ends pays double."
    return "Holding a 2 at the end of a hand does not double a loser's penalty."


def _hands(n: int) -> str:
    return f"{n} hand" if n == 1 else f"{n} hands"


def _points(n: int) -> str:
    return f"{n} point" if n == 1 else f"{n} points"


def _match_end(rules: RuleSet) -> str:
    v = rules.match_end_value
    if rules.match_end == "hands":
        end = f"The match lasts {_hands(v)}."
    elif rules.match_end == "target":
        end = f"The match ends after the hand in which a player's total score reaches {v}."
    elif rules.match_end == "threshold":
        end = (
            "The match ends after the hand in which a player's total of penalty points "
            f"goes over {v}."
        )
    else:
        raise _unknown(rules, "match_end")
    if rules.scoring == "family" and not rules.teams:
        won = "The player with the fewest points wins; equal totals share a place."
    else:
        won = "The highest total score wins; equal totals share a place."
    return f"{end} {won}"


def _match_end_value(rules: RuleSet) -> str:
    v = rules.match_end_value
    if rules.match_end == "hands":
        return f"The number of hands in a match: {v}."
    if rules.match_end == "target":
        return f"The score that ends the match: {_points(v)}."
    if rules.match_end != "threshold":
        raise _unknown(rules, "match_end")
    return f"The penalty threshold: the match ends once a player has more than {_points(v)}."


def _teams(rules: RuleSet) -> str:
    if rules.teams:
        return (
            "Team play: seats 0 and 2 are partners against seats 1 and 3, and when a player "
            "empties their hand their team wins it. The losing pair's two penalties are "
            "added; both winners score plus that sum and both losers minus it."
        )
    return "No teams: everyone plays for themselves."


_Describer = Callable[[RuleSet], str]

# option → (section of docs/rules.md, topic, describer), in reading order.
_DESCRIBERS: dict[str, tuple[str, str, _Describer]] = {
    "players": ("§1", "Players and dealing", _players),
    "direction": ("§1", "Players and dealing", _direction),
    "suit_order": ("§2", "Card order", _suit_order),
    "allow_triples": ("§3.1", "Combinations", _allow_triples),
    "five_card_hands": ("§3.1", "Combinations", _five_card_hands),
    "straights": ("§3.3", "Combinations", _straights),
    "lowest_straight_tops": ("§3.3", "Combinations", _lowest_straight_tops),
    "flush_compare": ("§3.4", "Combinations", _flush_compare),
    "opening": ("§4.1", "Opening", _opening),
    "pass_locks_out": ("§4.3", "Tricks", _pass_locks_out),
    "bombs": ("§4.6", "Tricks", _bombs),
    "alert_rule": ("§4.7", "Special rules", _alert_rule),
    "no_pass_first_trick": ("§4.8", "Special rules", _no_pass_first_trick),
    "revolution": ("§4.9", "Special rules", _revolution),
    "no_lone_two_finish": ("§4.10", "Special rules", _no_lone_two_finish),
    "scoring": ("§5", "Scoring", _scoring),
    "twos_double_penalty": ("§5", "Scoring", _twos_double_penalty),
    "match_end": ("§6", "End of the match", _match_end),
    "match_end_value": ("§6", "End of the match", _match_end_value),
    "teams": ("§7", "Teams", _teams),
}
