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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import record as rec
from .answers import InvalidReturn, encode_move, folder_of
from .bot import Bot
from .cards import CARDS
from .combos import PASS, Combination, Move
from .game import Game, HandResult, IllegalMoveError
from .loader import describe_error, load_bot_class
from .observation import Observation
from .rules import RuleSet

log = logging.getLogger("bigtwo.local")

Deal = Sequence[Iterable[Any]]
"""One deal: each seat's cards, in seat order (``["3D 4D ...", "3C ...", ...]``)."""


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
    fallback policy once the seat has forfeited, else the default action.  The one choice
    both the arena's referee and :func:`play_local` make."""
    return fallback_move(legal) if forfeited else default_move(legal)


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
    hands: Sequence[Deal] | None = None,
    *,
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
    ``hands``: play exactly these deals instead (each a list of per-seat cards), in order,
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
    deals = None if hands is None else [list(d) for d in hands]
    if deals is not None:
        if not deals:
            raise ValueError("hands: an empty list of deals")
        for i, d in enumerate(deals):
            if len(d) != rules.players:
                raise ValueError(
                    f"hands[{i}] has {len(d)} hands for {rules.players} players (hands is a "
                    "list of deals, each a list of every seat's cards)"
                )
        rules = rules.replace(match_end="hands", match_end_value=len(deals))
    game = Game(rules, seed) if deals is None else Game.from_hands(rules, deals[0], seed=seed)
    names = tuple(getattr(b, "display_name", None) or type(b).__name__ for b in seated)
    writer = rec.RecordWriter(Path(record)) if record is not None else None
    try:
        match = _Match(game, seated, names, max_strikes, strict, writer)
        if writer:
            writer(
                rec.header(
                    f"local-{secrets.token_hex(4)}",
                    rules,
                    seed,
                    [{"seat": s, "bot": name} for s, name in enumerate(names)],
                    {"name": "local (bigtwo.play_local)"},
                    explicit=deals is not None,
                )
            )
        match.play(deals)
    finally:
        if writer:
            writer.close()
    return LocalResult(
        names=names,
        scores=tuple(game.scores),
        places=tuple(game.places()),
        hands=tuple(game.results),
        faults=tuple(match.faults),
        forfeited=tuple(match.forfeited),
        turns=match.turns,
        game=game,
        record=writer.path if writer else None,
    )


def _seat(bot: Bot | type[Bot] | str) -> Any:
    if isinstance(bot, str):
        return load_bot_class(bot)()
    return bot() if isinstance(bot, type) else bot


def _rules(rules: RuleSet | str | None, players: int) -> RuleSet:
    if rules is None:
        hk = RuleSet.preset("hk")
        return hk if hk.players == players else hk.replace(players=players)
    if isinstance(rules, str):
        rules = RuleSet.preset(rules)
    if rules.players != players:
        raise ValueError(f"{players} bots for a {rules.players}-player game")
    return rules


class _Match:
    """The play loop: the referee's order of messages, as hook calls."""

    def __init__(
        self,
        game: Game,
        bots: list[Any],
        names: tuple[str, ...],
        max_strikes: int,
        strict: bool,
        writer: rec.RecordWriter | None,
    ) -> None:
        self.game = game
        self.bots = bots
        self.names = names
        self.max_strikes = max_strikes
        self.strict = strict
        self.writer = writer
        self.faults: list[LocalFault] = []
        self.strikes = [0] * len(bots)
        self.forfeited = [False] * len(bots)
        self.turns = 0
        # each seat's finished hands as it was told them (only its own remaining cards)
        self.results: list[tuple[HandResult, ...]] = [() for _ in bots]

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
            for s, bot in enumerate(self.bots):
                mine = seat_result(result, s)
                self.results[s] += (mine,)
                self.hook(bot, "on_hand_end", mine)
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
                tuple(self.forfeited), self.turns, g,
            ).to_dict()))  # fmt: skip
        for bot in self.bots:
            self.hook(bot, "on_match_end", scores, places)

    def turn(self) -> None:
        g = self.game
        s = g.turn
        self.turns += 1
        start = time.perf_counter()
        move = None if self.forfeited[s] else self.ask(s)
        by_referee = move is None
        if move is None:  # the seat has forfeited, or its answer was a fault
            move = referee_move(g.legal_moves(), self.forfeited[s])
        ms = (time.perf_counter() - start) * 1000
        hand = g.hand_no
        g.apply(move)
        if self.writer:
            self.writer(rec.turn_event(hand, self.turns, s, move, by_referee, ms))
        action = g.history[-1]
        for bot in self.bots:
            self.hook(bot, "on_event", action)

    def ask(self, s: int) -> Move | None:
        """The seat's move, judged as the referee judges it; None after a fault."""
        g = self.game
        bot = self.bots[s]
        try:
            answer = bot.act(self.observe(s, acting=True))
        except Exception as exc:
            if self.strict:
                raise
            log.error("act() raised:\n%s", traceback.format_exc())
            detail = describe_error(exc, folder_of(bot))[:1000]
            self.fault(s, "crash", f"the bot's act() raised: {detail}")
            return None
        try:
            is_pass, ids = encode_move(answer)
        except InvalidReturn as exc:
            if self.strict:
                raise
            self.fault(s, "illegal", f"the bot returned no play: {exc}"[:1000])
            return None
        move: Any = PASS if is_pass else [CARDS[i] for i in ids]
        if isinstance(answer, Combination) and answer.rules is g.rules:
            move = answer  # the same cards, judged the same: without classifying them again
        try:
            return g.validate(move)
        except IllegalMoveError as exc:
            if self.strict:
                raise
            shown = "pass" if move is PASS else " ".join(str(c) for c in move)
            self.fault(s, "illegal", f"{shown}: {exc.reason}")
            return None

    def fault(self, s: int, kind: str, detail: str) -> None:
        """Record a fault and a strike (``max_strikes`` forfeit), tell the seat."""
        fault = LocalFault(kind, s, self.game.hand_no, self.turns, detail[:500])
        self.faults.append(fault)
        self.strikes[s] += 1
        if self.strikes[s] >= self.max_strikes:
            self.forfeited[s] = True
        if self.writer:
            self.writer(rec.fault_event(s, fault.to_dict(), self.strikes[s], self.forfeited[s]))
        self.hook(self.bots[s], "on_fault", kind, fault.detail)
        return None


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
