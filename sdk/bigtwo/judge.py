"""The judge: what a seat's answer to a turn is worth, and what a fault costs.

One module turns (game, answer) into a :class:`Verdict` — the legal move to apply, or a
fault with its kind and reason text — and keeps each seat's strikes and forfeit
(:class:`Standing`).  The arena's referee (an answer that came over the wire), the
in-process :func:`bigtwo.play_local` and the Gymnasium environment (an answer a bot
returned) all judge with it, so one answer gets the same verdict, in the same words,
wherever it is played, and a change to the rules of faults is made once.

The rules (docs/rules.md §8, §11.14): an error the bot reports, an answer that is no play,
a malformed or an illegal play is a fault.  The referee then plays the seat's **default
action** (:func:`default_move`) and counts a strike; at ``max_strikes`` strikes, or at
once when the bot is gone for good (a disconnect, a crash of its process), the seat
**forfeits** and the **fallback policy** (:func:`fallback_move`) plays it to the end.

Pure standard library, like the engine: the local runner must not need gRPC (the error
codes below are the numbers of the protocol's ``BotError``; a test checks them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .answers import InvalidReturn, encode_move
from .cards import CARDS
from .combos import PASS, Combination, Move
from .game import Game, IllegalMoveError

ERROR_NONE = 0
"""The answer is a play or a pass."""
ERROR_EXCEPTION = 1
"""The bot's ``act()`` raised (``BOT_ERROR_EXCEPTION``)."""
ERROR_INVALID_RETURN = 2
"""``act()`` returned something that is no play at all (``BOT_ERROR_INVALID_RETURN``)."""


def default_move(legal: Sequence[Move]) -> Move:
    """The referee's answer to a fault: pass when legal; otherwise the first legal move
    (the weakest single when leading, holding any required card)."""
    return PASS if PASS in legal else legal[0]


def fallback_move(legal: Sequence[Move]) -> Move:
    """A forfeited seat's policy: the first legal play; pass only when there is none."""
    for m in legal:
        if m is not PASS:
            return m
    return PASS


def referee_move(legal: Sequence[Move], forfeited: bool) -> Move:
    """What the referee plays for a seat that gave it no move (docs/rules.md §11.14): the
    fallback policy once the seat has forfeited, else the default action."""
    return fallback_move(legal) if forfeited else default_move(legal)


@dataclass(frozen=True, slots=True)
class Answer:
    """A seat's answer to a turn as it travels: the protocol's ``Action`` (the referee
    builds one from the message) or what a bot's ``act()`` returned, read as the network
    client reads it (:meth:`of`)."""

    passes: bool = False
    cards: tuple[int, ...] = ()
    """Card ids as sent: not yet checked (an id may be out of range)."""
    error: int = ERROR_NONE
    """:data:`ERROR_EXCEPTION`, :data:`ERROR_INVALID_RETURN`, or a code nobody knows."""
    error_detail: str = ""
    """The bot's own words about its error (hostile text: clean it before showing it)."""
    play: Combination | None = None
    """The combination the bot returned, when it returned one: the same cards, judged
    without classifying them again."""

    @classmethod
    def of(cls, returned: Any) -> Answer:
        """What ``act()`` returned, read as :func:`bigtwo.answers.encode_move` reads it
        for the wire (something that is no play is an :data:`ERROR_INVALID_RETURN`)."""
        try:
            is_pass, ids = encode_move(returned)
        except InvalidReturn as exc:
            return cls(error=ERROR_INVALID_RETURN, error_detail=str(exc))
        play = returned if isinstance(returned, Combination) else None
        return cls(passes=is_pass, cards=tuple(ids), play=play)

    @classmethod
    def raised(cls, detail: str) -> Answer:
        """``act()`` raised; ``detail`` says what (:func:`bigtwo.loader.describe_error`)."""
        return cls(error=ERROR_EXCEPTION, error_detail=detail)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The judge's word on one answer: the legal ``move`` to apply, or a fault (``move``
    is ``None``; ``fault`` its kind — ``crash``, ``illegal`` or ``protocol`` — and
    ``detail`` the reason the seat, the record and the result are told)."""

    move: Move | None
    fault: str | None = None
    detail: str = ""
    refusal: Exception | None = field(default=None, compare=False)
    """The engine's :class:`~bigtwo.IllegalMoveError` behind an illegal play (raised as it
    is by ``play_local(strict=True)``)."""


def judge(game: Game, answer: Answer) -> Verdict:
    """The verdict on ``answer`` from the seat to move in ``game`` (the game is not
    changed: apply ``verdict.move``, or the referee's move after a fault)."""
    if answer.error == ERROR_EXCEPTION:
        return Verdict(None, "crash", f"the bot's act() raised: {answer.error_detail}")
    if answer.error == ERROR_INVALID_RETURN:
        return Verdict(None, "illegal", f"the bot returned no play: {answer.error_detail}")
    if answer.error:
        return Verdict(None, "protocol", f"unknown error code {answer.error}")
    move: Any
    if answer.passes:
        if answer.cards:
            return Verdict(None, "protocol", "an action that both passes and plays cards")
        move = PASS
    else:
        bad = [i for i in answer.cards if not 0 <= i < 52]
        if bad:
            return Verdict(None, "protocol", f"card id {bad[0]} is not in 0..51")
        play = answer.play
        if play is not None and play.rules is game.rules:
            move = play
        else:
            move = [CARDS[i] for i in answer.cards]
    try:
        return Verdict(game.validate(move))
    except IllegalMoveError as exc:
        shown = "pass" if move is PASS else " ".join(str(c) for c in move)
        return Verdict(None, "illegal", f"{shown}: {exc.reason}", exc)


class Standing:
    """One seat's faults so far: its strikes, and whether (and from which hand) it
    forfeited.  The referee's seat is one; :func:`bigtwo.play_local` keeps one per seat."""

    def __init__(self, max_strikes: int) -> None:
        if max_strikes < 1:
            raise ValueError(f"max_strikes must be at least 1, got {max_strikes}")
        self.max_strikes = max_strikes
        self.strikes = 0
        self.forfeited = False
        self.gone = False
        """The bot is gone for good (disconnected, its process ended)."""
        self.forfeit_hand: int | None = None
        """The hand in which the fallback policy took over."""

    def charge(self, kind: str, hand: int, gone: bool = False) -> bool:
        """Count a fault of ``kind`` committed in hand ``hand``; whether it is a strike.

        A fault while the bot is still there is a strike, and ``max_strikes`` strikes
        forfeit the seat; a disconnect, or any fault that leaves the bot ``gone`` for
        good, is no strike: the seat forfeits at once."""
        strike = not (gone or kind == "disconnect")
        if strike:
            self.strikes += 1
            if self.strikes >= self.max_strikes:
                self.forfeited = True
        else:
            self.gone = True
            self.forfeited = True
        if self.forfeited and self.forfeit_hand is None:
            self.forfeit_hand = hand
        return strike

    def referee_move(self, game: Game) -> Move:
        """What the referee plays for this seat, the seat to move, after a fault or once
        it has forfeited (:func:`referee_move`)."""
        return referee_move(game.legal_moves(), self.forfeited)
