"""Play a match in-process, without a referee: :func:`play_local`.

The bot author's quick loop (Kaggle's ``env.run([agent, "random"])``)::

    from bigtwo import play_local
    result = play_local([MyBot(), RandomBot(), RandomBot(), RandomBot()], seed=7)
    print(result.scores, result.places)

Every bot sees what it would see over the wire, through the same hooks in the same order
(``on_match_start``, then per hand ``on_hand_start``, ``on_event`` for every move — its own
included — and ``act`` on its turns, ``on_hand_end``; ``on_match_end`` last, ``on_fault``
when the referee would record a fault).  Each observation equals, field for field, the one
the network client builds from the referee's messages (a test plays the same game both
ways).  A bot's answer is read as the client reads it (:mod:`bigtwo.answers`) and judged as
the referee judges it: an exception, an answer that is no play, or an illegal play is a
fault and a strike, the referee's default action is played instead, and at ``max_strikes``
strikes the seat forfeits to the referee's fallback policy.  There is no clock: time
control is the arena's (``arena match``).

Pure standard library (no gRPC), like the engine.  With ``record=PATH`` the match is written
as a record that ``arena replay PATH`` checks and shows (:mod:`bigtwo.record`, the format's
one definition).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import secrets
import time
import traceback
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import record as rec
from .answers import encode_move, folder_of
from .bot import Bot
from .combos import Move
from .game import Game, HandResult
from .judge import Answer, Standing, judge
from .loader import describe_error, load_bot_class
from .observation import Observation
from .rules import RuleSet

log = logging.getLogger("bigtwo.local")

Deal = Sequence[Iterable[Any]]
"""One deal: each seat's cards, in seat order (``["3D 4D ...", "3C ...", ...]``)."""


@dataclass(frozen=True)
class LocalFault:
    """What the referee would have recorded against ``seat``."""

    kind: str  # "crash" (act() raised) | "illegal" (no play, or a play the rules refuse)
    seat: int
    hand: int
    turn: int
    detail: str
    strike: bool = True

    def to_dict(self) -> dict[str, Any]:
        """The fault as JSON-ready data, in the same fields as the referee's faults."""
        return {
            "kind": self.kind,
            "hand": self.hand,
            "turn": self.turn,
            "detail": self.detail,
            "strike": self.strike,
        }


@dataclass(frozen=True)
class LocalResult:
    """The end of a :func:`play_local` match."""

    names: tuple[str, ...]
    """Each seat's bot (``Bot.display_name``)."""
    scores: tuple[int, ...]
    """Cumulative scores, higher is better."""
    places: tuple[int, ...]
    """1 = best; ties share a place."""
    hands: tuple[HandResult, ...]
    """Every hand's result, with every seat's remaining cards."""
    faults: tuple[LocalFault, ...]
    forfeited: tuple[bool, ...]
    turns: int
    """Moves played, the referee's included."""
    game: Game
    """The engine's final state (``game.history`` holds every move)."""
    record: Path | None = None
    """Where the record was written, when one was asked for."""

    def to_dict(self) -> dict[str, Any]:
        """The match as ``arena match --json`` summarises one (same keys)."""
        g = self.game
        return {
            "rules": g.rules.to_dict(),
            "seed": g.seed,
            "match_over": g.match_over,
            "hands": [
                {k: v for k, v in r.to_dict().items() if k != "remaining"} for r in self.hands
            ],
            "seats": [
                {
                    "seat": s,
                    "bot": self.names[s],
                    "score": self.scores[s],
                    "penalty_points": g.penalty_totals[s],
                    "place": self.places[s],
                    "forfeit": self.forfeited[s],
                    "strikes": sum(1 for f in self.faults if f.seat == s and f.strike),
                    "faults": [f.to_dict() for f in self.faults if f.seat == s],
                }
                for s in range(len(self.names))
            ],
        }


def play_local(
    bots: Sequence[Bot | type[Bot] | str],
    rules: RuleSet | str | None = None,
    seed: int | str = 0,
    hands: int | None = None,
    *,
    deals: Sequence[Deal] | None = None,
    record: str | os.PathLike[str] | None = None,
    max_strikes: int = 3,
    strict: bool = False,
) -> LocalResult:
    """Play one match between ``bots``, one per seat in seat order, and return its result.
    A bot is an instance, a class (made with no arguments) or where to find one, as
    ``python -m bigtwo.run`` takes it: ``"path/bot.py[:Class]"``, a folder holding
    ``bot.py``, or ``"module:Class"`` (e.g. ``"sample_bots/random"``).

    ``rules``: a :class:`RuleSet` or a preset name (``"hk"``, ``"family"``, ``"pusoy"``);
    by default the ``hk`` preset for as many players as bots.  ``seed`` deals the hands.
    ``hands``: the number of hands to play (the match ends after them, whatever the
    rules' own end), as ``arena match --hands N`` counts them.
    ``deals``: play exactly these deals instead (each a list of per-seat cards), in order,
    each as an independent hand under the first-hand opening rule — duplicate play, as
    ``arena`` ladders and ``arena compare`` do; the match then lasts that many hands.

    ``record``: write the match to this file as ``arena match --record`` does.
    ``max_strikes``: faults before a seat forfeits (the arena's default is 3).
    ``strict``: raise a bot's error at once (its exception, :class:`InvalidReturn` or
    :class:`IllegalMoveError`), e.g. to debug it, instead of recording a fault."""
    seated = [_seat(b) for b in bots]
    for s, bot in enumerate(seated):
        if not callable(getattr(bot, "act", None)):
            raise TypeError(f"seat {s}: {bot!r} is not a bot (no act method)")
    rules = _rules(rules, len(seated))
    if max_strikes < 1:
        raise ValueError(f"max_strikes must be at least 1, got {max_strikes}")
    dealt = _deals(deals, hands, rules.players)
    if dealt is not None:
        rules = rules.replace(match_end="hands", match_end_value=len(dealt))
    elif hands is not None:
        rules = rules.replace(match_end="hands", match_end_value=hands)
    game = Game(rules, seed) if dealt is None else Game.from_hands(rules, dealt[0], seed=seed)
    names = tuple(getattr(b, "display_name", None) or type(b).__name__ for b in seated)
    writer = rec.RecordWriter(Path(record)) if record is not None else None
    try:
        match = LocalMatch(game, seated, names, max_strikes, strict, writer)
        if writer:
            writer(
                rec.header(
                    f"local-{secrets.token_hex(4)}",
                    rules,
                    seed,
                    [{"seat": s, "bot": name} for s, name in enumerate(names)],
                    {"name": "local (bigtwo.play_local)"},
                    explicit=dealt is not None,
                )
            )
        match.play(dealt)
    finally:
        if writer:
            writer.close()
    return LocalResult(
        names=names,
        scores=tuple(game.scores),
        places=tuple(game.places()),
        hands=tuple(game.results),
        faults=tuple(match.faults),
        forfeited=match.forfeited,
        turns=match.turns,
        game=game,
        record=writer.path if writer else None,
    )


def _seat(bot: Bot | type[Bot] | str) -> Any:
    if isinstance(bot, str):
        return load_bot_class(bot)()
    return bot() if isinstance(bot, type) else bot


def _deals(deals: Any, hands: Any, players: int) -> list[list[Any]] | None:
    """The explicit deals, checked; ``hands``, the count, checked against them."""
    if hands is not None and (isinstance(hands, bool) or not isinstance(hands, int)):
        hint = " (to play explicit deals, pass deals=[...])" if _is_list(hands) else ""
        raise TypeError(f"hands is a number of hands to play, got {type(hands).__name__}{hint}")
    if hands is not None and hands < 1:
        raise ValueError(f"hands must be at least 1, got {hands}")
    if deals is None:
        return None
    if not _is_list(deals):
        raise TypeError(
            f"deals is a list of deals (each a list of every seat's cards), got "
            f"{type(deals).__name__}"
        )
    dealt = [list(d) if _is_list(d) else d for d in deals]
    if not dealt:
        raise ValueError("deals: an empty list of deals")
    for i, d in enumerate(dealt):
        if not isinstance(d, list) or len(d) != players:
            size = f"{len(d)} hands" if isinstance(d, list) else type(d).__name__
            raise ValueError(
                f"deals[{i}] has {size} for {players} players (deals is a "
                "list of deals, each a list of every seat's cards)"
            )
    if hands is not None and hands != len(dealt):
        raise ValueError(f"{len(dealt)} deals but hands={hands}: give one or the other")
    return dealt


def _is_list(value: Any) -> bool:
    """Whether ``value`` is a collection of things (a list, a tuple, a generator...), not
    one string of cards or a mapping."""
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping))


def _rules(rules: RuleSet | str | None, players: int) -> RuleSet:
    if rules is None:
        hk = RuleSet.preset("hk")
        return hk if hk.players == players else hk.replace(players=players)
    if isinstance(rules, str):
        rules = RuleSet.preset(rules)
    if rules.players != players:
        raise ValueError(f"{players} bots for a {rules.players}-player game")
    return rules


class LocalMatch:
    """The in-process seats of one match and its play loop: the referee's order of
    messages, as hook calls; every answer judged by :mod:`bigtwo.judge`.

    :func:`play_local` plays a whole match with :meth:`play`; the Gymnasium environment
    (:class:`bigtwo.env.BigTwoGymEnv`) steps the same seats itself, a turn at a time
    (:meth:`hook`, :meth:`observe`, :meth:`move`, :meth:`hand_ended`)."""

    def __init__(
        self,
        game: Game,
        bots: Sequence[Any],
        names: tuple[str, ...],
        max_strikes: int = 3,
        strict: bool = False,
        writer: rec.RecordWriter | None = None,
    ) -> None:
        self.game = game
        self.bots = list(bots)
        self.names = names
        self.strict = strict
        self.writer = writer
        self.faults: list[LocalFault] = []
        self.standings = [Standing(max_strikes) for _ in self.bots]
        """Each seat's strikes and forfeit, kept by the judge's rules."""
        self.turns = 0
        """Turns played so far, the referee's included."""
        # each seat's finished hands as it was told them (only its own remaining cards)
        self.results: list[tuple[HandResult, ...]] = [() for _ in self.bots]

    @property
    def forfeited(self) -> tuple[bool, ...]:
        """Per seat: it has forfeited (the fallback policy plays it)."""
        return tuple(st.forfeited for st in self.standings)

    def observe(self, seat: int, acting: bool) -> Observation:
        """What ``seat`` is shown: :meth:`Observation.of`, made as the network client makes
        it — ``history`` the match's own list (read only, not a copy), ``results`` kept per
        seat — and with legal moves only in the observation given to ``act``."""
        g = self.game
        trick = g.trick
        return Observation(
            rules=g.rules,
            seat=seat,
            hand=g.hand(seat),
            turn=g.turn,
            trick=trick,
            trick_owner=g.last_player if trick is not None else None,
            cards_left=g.cards_left,
            history=g.history,
            hand_no=g.hand_no,
            scores=tuple(g.scores),
            results=self.results[seat],
            legal_moves=tuple(g.legal_moves()) if acting else (),
            must_include=g.must_include,
            locked_out=g.locked_out,
            reversed=g.reversed,
        )

    def hook(self, bot: Any, name: str, *args: Any) -> None:
        """Call an optional hook; its error is logged and the match goes on, as over the
        wire (``strict``: raised)."""
        fn = getattr(bot, name, None)
        if fn is None:
            return
        try:
            fn(*args)
        except Exception:
            if self.strict:
                raise
            log.error("%s raised:\n%s", name, traceback.format_exc())

    def play(self, deals: Sequence[Deal] | None) -> None:
        """Play the match to its end: ``deals`` hand by hand (None: shuffled ones), every
        hook called and every answer judged as the referee would."""
        g = self.game
        for s, bot in enumerate(self.bots):
            self.hook(bot, "on_match_start", match_start_observation(g.rules, s))
        while True:
            if self.writer:
                self.writer(rec.deal_event(g))
            for s, bot in enumerate(self.bots):
                self.hook(bot, "on_hand_start", self.observe(s, acting=False))
            while not g.hand_over:
                self.turn()
            result = g.results[-1]
            if self.writer:
                self.writer(rec.hand_end_event(result))
            self.hand_ended(result)
            if g.match_over:
                break
            if deals is None:
                g.next_hand()
            else:
                g.next_hand(deals[g.hand_no + 1], independent=True)
        scores, places = tuple(g.scores), tuple(g.places())
        if self.writer:
            self.writer(rec.match_end_event(LocalResult(
                self.names, scores, places, tuple(g.results), tuple(self.faults),
                self.forfeited, self.turns, g,
            ).to_dict()))  # fmt: skip
        for bot in self.bots:
            self.hook(bot, "on_match_end", scores, places)

    def hand_ended(self, result: HandResult, skip: int | None = None) -> None:
        """Tell every seat (but ``skip``) its view of the hand that just ended."""
        for s, bot in enumerate(self.bots):
            mine = seat_result(result, s)
            self.results[s] += (mine,)
            if s != skip:
                self.hook(bot, "on_hand_end", mine)

    def turn(self) -> None:
        """One turn: the seat to move's move (:meth:`move`) applied, recorded and shown to
        every bot's ``on_event``."""
        g = self.game
        s = g.turn
        start = time.perf_counter()
        move, by_referee = self.move()
        ms = (time.perf_counter() - start) * 1000
        hand = g.hand_no
        g.apply(move)
        if self.writer:
            self.writer(rec.turn_event(hand, self.turns, s, move, by_referee, ms))
        action = g.history[-1]
        for bot in self.bots:
            self.hook(bot, "on_event", action)

    def move(self) -> tuple[Move, bool]:
        """The move of the seat to move, counted as a turn: its bot's answer when the judge
        finds it legal, else the referee's (and whether it is the referee's)."""
        g = self.game
        s = g.turn
        self.turns += 1
        standing = self.standings[s]
        move = None if standing.forfeited else self.ask(s)
        if move is None:  # the seat has forfeited, or its answer was a fault
            return standing.referee_move(g), True
        return move, False

    def ask(self, s: int) -> Move | None:
        """The seat's move, judged as the referee judges it; None after a fault."""
        bot = self.bots[s]
        try:
            returned = bot.act(self.observe(s, acting=True))
            if self.strict:
                encode_move(returned)  # InvalidReturn, raised where it happened
            answer = Answer.of(returned)
        except Exception as exc:
            if self.strict:
                raise
            log.error("act() raised:\n%s", traceback.format_exc())
            answer = Answer.raised(describe_error(exc, folder_of(bot))[:1000])
        verdict = judge(self.game, answer)
        if verdict.move is not None:
            return verdict.move
        if self.strict and verdict.refusal is not None:
            raise verdict.refusal
        assert verdict.fault is not None
        self.fault(s, verdict.fault, verdict.detail)
        return None

    def fault(self, s: int, kind: str, detail: str) -> None:
        """Record a fault and a strike (``max_strikes`` forfeit), tell the seat."""
        fault = LocalFault(kind, s, self.game.hand_no, self.turns, detail[:500])
        self.faults.append(fault)
        standing = self.standings[s]
        standing.charge(kind, self.game.hand_no)
        if self.writer:
            self.writer(rec.fault_event(s, fault.to_dict(), standing.strikes, standing.forfeited))
        self.hook(self.bots[s], "on_fault", kind, fault.detail)


def match_start_observation(rules: RuleSet, seat: int) -> Observation:
    """``on_match_start``'s observation: the rules and my seat, before any card is dealt
    (no hand, nobody to move: ``turn`` is -1)."""
    n = rules.players
    return Observation(
        rules=rules,
        seat=seat,
        hand=(),
        turn=-1,
        trick=None,
        trick_owner=None,
        cards_left=(0,) * n,
        history=(),
        hand_no=0,
        scores=(0,) * n,
        results=(),
        legal_moves=(),
    )


def seat_result(result: HandResult, seat: int) -> HandResult:
    """A hand's result as ``seat`` is told it: only its own remaining cards."""
    return dataclasses.replace(
        result,
        remaining=tuple(cs if s == seat else () for s, cs in enumerate(result.remaining)),
    )
