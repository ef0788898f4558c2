"""A match's result, as typed values: what the referee's session returns, the match runner
merges and splits, the ladder stores and the web shows.

Every layer above the referee reads these attributes, never a dict's keys, so a field's
name is checked by mypy wherever it is used.  JSON is only where the result leaves the
process: the database (``Match.result``), the record's ``match_end`` event, ``arena match
--json`` and the web's API.  :meth:`MatchResult.to_json` writes exactly the JSON the arena
has always written (so stored results need no migration) and
:meth:`MatchResult.from_json` reads every shape ever stored: a field that a shape lacks is
``None`` here and stays absent when written back (results stored before a field existed,
the public form whose faults carry a ``reason`` instead of a ``detail``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from bigtwo import HandResult

JSON = dict[str, Any]


def _ints(value: Any) -> tuple[int, ...]:
    return tuple(value)


def _opt_ints(value: Any) -> tuple[int, ...] | None:
    return None if value is None else tuple(value)


def _put(out: JSON, key: str, value: Any) -> None:
    """Write ``value`` unless it is None (the shape it came from had no such key)."""
    if value is not None:
        out[key] = value


@dataclass(frozen=True)
class Fault:
    """One fault of a seat, as a result lists it.

    The private form (the referee's) has ``detail``, the referee's own text (it may quote
    the bot); the public form (the ladder's stored results, see :mod:`arena.public_record`)
    has a ``reason`` from a fixed vocabulary instead."""

    kind: str  # timeout | illegal | protocol | crash | disconnect (public: or "fault")
    hand: int | None = None
    turn: int | None = None
    detail: str | None = None
    strike: bool | None = None  # it counted towards max_strikes; None: not recorded
    reason: str | None = None

    def to_json(self) -> JSON:
        out: JSON = {"kind": self.kind, "hand": self.hand, "turn": self.turn}
        _put(out, "detail", self.detail)
        _put(out, "strike", self.strike)
        _put(out, "reason", self.reason)
        return out

    @classmethod
    def from_json(cls, data: JSON) -> Fault:
        return cls(
            kind=data["kind"],
            hand=data.get("hand"),
            turn=data.get("turn"),
            detail=data.get("detail"),
            strike=data.get("strike"),
            reason=data.get("reason"),
        )


@dataclass(frozen=True)
class HandScore:
    """One hand's end in a result: who won it, each seat's cards left, penalty, signed
    score and running total (``bigtwo.HandResult`` without the cards)."""

    hand: int
    winner: int
    scores: tuple[int, ...]
    cumulative: tuple[int, ...]
    winning_team: tuple[int, ...] | None = None
    cards_left: tuple[int, ...] | None = None
    penalties: tuple[int, ...] | None = None

    def to_json(self) -> JSON:
        out: JSON = {"hand": self.hand, "winner": self.winner}
        if self.cards_left is not None:  # a full hand; a short form has none of these
            out["winning_team"] = list(self.winning_team) if self.winning_team else None
            out["cards_left"] = list(self.cards_left)
        if self.penalties is not None:
            out["penalties"] = list(self.penalties)
        out["scores"] = list(self.scores)
        out["cumulative"] = list(self.cumulative)
        return out

    @classmethod
    def of(cls, result: HandResult) -> HandScore:
        """The engine's hand result, without the cards each seat kept."""
        return cls(
            hand=result.hand,
            winner=result.winner,
            scores=tuple(result.scores),
            cumulative=tuple(result.cumulative),
            winning_team=tuple(result.winning_team) if result.winning_team else None,
            cards_left=tuple(result.cards_left),
            penalties=tuple(result.penalties),
        )

    @classmethod
    def from_json(cls, data: JSON) -> HandScore:
        return cls(
            hand=data["hand"],
            winner=data["winner"],
            scores=_ints(data["scores"]),
            cumulative=_ints(data.get("cumulative", ())),
            winning_team=_opt_ints(data.get("winning_team")),
            cards_left=_opt_ints(data.get("cards_left")),
            penalties=_opt_ints(data.get("penalties")),
        )


@dataclass(frozen=True)
class SeatResult:
    """One seat's part of a result: its bot, total, place, forfeit and faults."""

    seat: int
    bot: str
    score: int
    place: int
    forfeit: bool
    strikes: int
    faults: tuple[Fault, ...] = ()
    penalty_points: int | None = None
    forfeit_hand: int | None = None
    """The hand in which the fallback took over (the first, when several instances played)."""
    connected: bool | None = None
    """A Hello was accepted: the bot started.  None: a result stored before this was kept."""
    log: str | None = None
    """Where its output is kept (private: never in the public form)."""
    forfeit_hands: tuple[int, ...] | None = None
    """Every hand its fallback played, when fresh instances played segments."""

    @property
    def started(self) -> bool:
        """The bot said Hello (results from before ``connected`` was kept: it did)."""
        return self.connected is not False

    def to_json(self) -> JSON:
        out: JSON = {"seat": self.seat, "bot": self.bot, "score": self.score}
        _put(out, "penalty_points", self.penalty_points)
        out |= {"place": self.place, "forfeit": self.forfeit, "forfeit_hand": self.forfeit_hand}
        out |= {"strikes": self.strikes, "faults": [f.to_json() for f in self.faults]}
        _put(out, "connected", self.connected)
        _put(out, "log", self.log)
        if self.forfeit_hands is not None:
            out["forfeit_hands"] = list(self.forfeit_hands)
        return out

    @classmethod
    def from_json(cls, data: JSON) -> SeatResult:
        return cls(
            seat=data["seat"],
            bot=data["bot"],
            score=data["score"],
            place=data["place"],
            forfeit=bool(data.get("forfeit", False)),
            strikes=data.get("strikes", 0),
            faults=tuple(Fault.from_json(f) for f in data.get("faults") or ()),
            penalty_points=data.get("penalty_points"),
            forfeit_hand=data.get("forfeit_hand"),
            connected=data.get("connected"),
            log=data.get("log"),
            forfeit_hands=_opt_ints(data.get("forfeit_hands")),
        )


@dataclass(frozen=True)
class Batch:
    """Which match of a batch played as one this result is (see ``match.split_match``)."""

    id: str
    index: int
    matches: int

    def to_json(self) -> JSON:
        return {"id": self.id, "index": self.index, "matches": self.matches}

    @classmethod
    def from_json(cls, data: JSON) -> Batch:
        return cls(id=data["id"], index=data["index"], matches=data["matches"])


@dataclass(frozen=True)
class MatchResult:
    """A whole match's result (``MatchSession.summary``, ``run_match``'s answer)."""

    match_id: str
    match_over: bool
    hands: tuple[HandScore, ...]
    seats: tuple[SeatResult, ...]
    rules: dict[str, Any] | None = None
    """The rule set played (``RuleSet.to_dict``)."""
    seed: int | str | None = None
    turn_round_trip: dict[str, float] | None = None
    """Count, median and 99th percentile of the bots' answers, in ms (``n`` alone if none)."""
    aborted: str | None = None
    """Why the match ended before its first hand (a bot did not start); None: it was played."""
    segments: int | None = None
    """How many sets of fresh bot instances played it (several: see ``merge_segments``)."""
    sandbox: str | None = None
    sandbox_limits: dict[str, Any] | None = None
    seats_ready_s: float | None = None
    """From the first bot's launch to the last Hello, in seconds."""
    batch: Batch | None = None

    def replace(self, **changes: Any) -> MatchResult:
        return dataclasses.replace(self, **changes)

    def to_json(self) -> JSON:
        out: JSON = {}
        _put(out, "turn_round_trip", self.turn_round_trip)
        out["match_id"] = self.match_id
        _put(out, "rules", self.rules)
        _put(out, "seed", self.seed)
        out["match_over"] = self.match_over
        out["hands"] = [h.to_json() for h in self.hands]
        out["seats"] = [s.to_json() for s in self.seats]
        _put(out, "aborted", self.aborted)
        _put(out, "segments", self.segments)
        _put(out, "sandbox", self.sandbox)
        _put(out, "sandbox_limits", self.sandbox_limits)
        _put(out, "seats_ready_s", self.seats_ready_s)
        if self.batch is not None:
            out["batch"] = self.batch.to_json()
        return out

    @classmethod
    def from_json(cls, data: JSON) -> MatchResult:
        batch = data.get("batch")
        return cls(
            match_id=data.get("match_id", ""),
            match_over=bool(data.get("match_over", False)),
            hands=tuple(HandScore.from_json(h) for h in data.get("hands") or ()),
            seats=tuple(SeatResult.from_json(s) for s in data.get("seats") or ()),
            rules=data.get("rules"),
            seed=data.get("seed"),
            turn_round_trip=data.get("turn_round_trip"),
            aborted=data.get("aborted"),
            segments=data.get("segments"),
            sandbox=data.get("sandbox"),
            sandbox_limits=data.get("sandbox_limits"),
            seats_ready_s=data.get("seats_ready_s"),
            batch=Batch.from_json(batch) if isinstance(batch, dict) else None,
        )
