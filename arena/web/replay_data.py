"""A match record made ready for the browser's replay viewer (``static/replay.js``).

The record is checked by the same code ``arena replay`` uses
(:func:`arena.record.replay_events`): every deal, move and result is replayed through the
engine, and everything the viewer draws (each seat's cards, who led, when a trick was won,
who is locked out, whether the order is reversed, the hand's scores) is read from the
engine's state after that check, never worked out again here.  A record that fails the
check is still shown up to the event that failed, with ``valid`` false and the reason in
``problem``.

A fault's ``detail`` (the bot's own words) is in the data only when the caller put it back
into the events for a viewer who may see it (:func:`arena.public_record.with_details`);
stored records hold the public form (kind, place, ``reason``) and :func:`stored_events`
makes even an old record's events public again.

Every field of a record is someone else's text (a bot names itself; a fault's detail holds
its exception message): names, ids and details pass through :func:`arena.text.printable`
(one line, no control or bidi characters, capped) and reach the page as JSON strings that
the viewer only ever puts in ``textContent``.

The shape (``null`` where unknown)::

    {"valid": bool, "problem": str | None, "complete": bool,
     "match_id": str, "rules": str (in words), "players": int (2-4),
     "direction": "clockwise" | "counter-clockwise", "teams": bool,
     "pass_locks_out": bool, "revolution": bool, "deals": "seed" | "explicit",
     "seats": [{"seat": int, "name": str, "team": "A" | "B" | None}],
     "hands": [{"hand": int (0-based), "leader": int, "must_include": "3D" | None,
                "deal": [[card, ...] per seat, weakest first],
                "turns": [{"id": int | str (the record's turn id), "seat": int,
                           "cards": [card, ...] | None (a pass), "label": str,
                           "lead": bool,
                           "next": int | None (seat to move after it; None: hand over),
                           "left": int (the mover's cards left),
                           and only when true or not empty:
                           "by_referee": true, "won": true (the trick ended with it),
                           "locked": [seat, ...] (locked out after it),
                           "reversed": true (the order is reversed after it)}],
                "result": None | {"winner", "winning_team", "cards_left", "penalties",
                                  "scores", "cumulative"}}],
     "faults": [{"hand": int | None, "at": int (turns of that hand played before it),
                 "seat": int | None, "kind": str, "reason": str (the referee's fixed words),
                 "detail": str | None (the bot's own words: its owner's view only),
                 "strike": bool,
                 "strikes": str, "forfeited": bool}],
     "faults_omitted": int,
     "final": None | {"scores": [int], "places": [int]}}

Cards are the engine's text (``3D``, ``TH``: rank ``3``-``9 T J Q K A 2``, suit ``D C H S``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bigtwo import PASS, Combination, Game, RulesError, RuleSet
from bigtwo.jsontext import loads_bounded
from bigtwo.record import decompress

from ..public_record import fault_reason, public_events
from ..record import RecordError, replay_events
from ..replay_view import rules_summary
from ..text import printable

__all__ = ["MAX_FAULTS", "replay_data"]

NAME_CHARS = 40
"""A seat's bot name as shown (names are someone else's words)."""
DETAIL_CHARS = 300
"""A fault's detail as shown (an exception message can be long)."""
MAX_FAULTS = 500
"""Faults kept; a record with more (a bot that faults on every move) says how many were
left out rather than growing the page without bound."""


def stored_events(data: bytes) -> list[dict[str, Any] | None]:
    """A stored record's events (``bigtwo.record.compress``'d) in their public form
    (:func:`arena.public_record.public_events`: a record kept before details were kept
    apart is redacted here), for :func:`replay_data`: None for a line that is not JSON (or
    nested too deep), so that the viewer names the line instead of failing."""
    events: list[dict[str, Any] | None] = []
    for line in decompress(data).decode("utf-8", "replace").splitlines():
        if line.strip():
            try:
                events.append(loads_bounded(line))
            except ValueError:
                events.append(None)
    return public_events(events)


def replay_data(events: list[Any]) -> dict[str, Any]:
    """The viewer's data for a record's events (as :func:`bigtwo.record.read_events` reads
    them, without the line numbers).  Never raises for a bad record: a record that fails the
    engine's check gives ``valid`` False, ``problem`` naming the event (``record:N``, N
    counting events from 1), and everything up to that event."""
    builder = _Builder()
    try:
        rep = replay_events(_numbered(events), "record", on_event=builder)
    except RecordError as exc:
        builder.fail(str(exc))
    else:
        builder.out["complete"] = rep.complete
    return builder.out


def _numbered(events: list[Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The events with their numbers (from 1), refusing what is no event as the file reader
    refuses such a line."""
    for n, event in enumerate(events, 1):
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise RecordError(f"record:{n}: not a record event")
        yield n, event


def _seat_or_none(value: Any, players: int) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < players
    return value if ok else None


def _turn_id(value: Any) -> int | str:
    """The record's own turn id (shown next to a move): an int, or capped text."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return printable(value, 24)


class _Builder:
    """``on_event`` of the replay: called with each event once the engine has checked it,
    with the engine's game in the state right after it."""

    def __init__(self) -> None:
        self.players = 4
        self.out: dict[str, Any] = {
            "valid": True,
            "problem": None,
            "complete": False,
            "match_id": "?",
            "rules": "?",
            "players": self.players,
            "direction": "clockwise",
            "teams": False,
            "pass_locks_out": False,
            "revolution": False,
            "deals": "seed",
            "seats": [],
            "hands": [],
            "faults": [],
            "faults_omitted": 0,
            "final": None,
        }
        self.seen_header = False

    def fail(self, problem: str) -> None:
        self.out["valid"] = False
        self.out["problem"] = printable(problem, DETAIL_CHARS)
        if not self.seen_header:
            self._seats({})  # something to draw: seats named "?"

    def __call__(self, kind: str, game: Game | None, ev: dict[str, Any]) -> None:
        if kind == "match":
            if not self.seen_header:  # a later one starts a ladder batch's next segment
                self._header(ev)
        elif kind == "deal" and game is not None:
            self._deal(game)
        elif kind == "turn" and game is not None:
            self._turn(game, ev)
        elif kind == "fault":
            self._fault(ev)
        elif kind == "hand_end" and game is not None and self.out["hands"]:
            self._hand_end(game)
        elif kind == "match_end" and game is not None:
            self.out["final"] = {"scores": list(game.scores), "places": game.places()}
        elif kind == "aborted" and self.out["problem"] is None:
            self.out["problem"] = "the match was aborted: " + printable(
                ev.get("reason"), DETAIL_CHARS
            )

    # ----- events ----------------------------------------------------------------------
    def _header(self, header: dict[str, Any]) -> None:
        self.seen_header = True
        try:
            rules = RuleSet.from_dict(header["rules"])  # checked already: it parses
        except (KeyError, RulesError, TypeError, ValueError):  # pragma: no cover
            return
        self.players = rules.players
        self.out |= {
            "match_id": printable(header.get("match_id", "?"), 80),
            "rules": rules_summary(rules),
            "players": rules.players,
            "direction": rules.direction,
            "teams": rules.teams,
            "pass_locks_out": rules.pass_locks_out,
            "revolution": rules.revolution,
            "deals": "explicit" if header.get("deals") == "explicit" else "seed",
        }
        self._seats(header)

    def _seats(self, header: dict[str, Any]) -> None:
        names = ["?"] * self.players
        seats = header.get("seats")
        for i, entry in enumerate(seats if isinstance(seats, list) else []):
            if i < self.players and isinstance(entry, dict) and "bot" in entry:
                names[i] = printable(entry["bot"], NAME_CHARS)
        teams = bool(self.out["teams"])
        self.out["seats"] = [
            {"seat": s, "name": names[s], "team": ("A" if s % 2 == 0 else "B") if teams else None}
            for s in range(self.players)
        ]

    def _deal(self, game: Game) -> None:
        must = game.must_include
        self.out["hands"].append(
            {
                "hand": game.hand_no,
                "leader": game.turn,
                "must_include": None if must is None else str(must),
                "deal": [[str(c) for c in game.hand(s)] for s in range(game.players)],
                "turns": [],
                "result": None,
            }
        )

    def _turn(self, game: Game, ev: dict[str, Any]) -> None:
        action = game.history[-1]
        move = action.move
        over = game.hand_over
        won = not over and game.trick is None and not (move is PASS and action.lead)
        if isinstance(move, Combination):
            cards: list[str] | None = [str(c) for c in move.cards]
            label = move.category.label
        else:
            cards, label = None, "hands the lead on" if action.lead else "pass"
        turn: dict[str, Any] = {
            "id": _turn_id(ev.get("turn")),
            "seat": action.seat,
            "cards": cards,
            "label": label,
            "lead": action.lead,
            "next": None if over else game.turn,
            "left": game.counts[action.seat],
        }
        # the rarer facts only when true: a long match's data stays about half as big
        if ev.get("by_referee") is True:
            turn["by_referee"] = True
        if won or over:
            turn["won"] = True
        if game.locked_out:
            turn["locked"] = sorted(game.locked_out)
        if game.reversed:
            turn["reversed"] = True
        self.out["hands"][-1]["turns"].append(turn)

    def _fault(self, ev: dict[str, Any]) -> None:
        faults: list[dict[str, Any]] = self.out["faults"]
        if len(faults) >= MAX_FAULTS:
            self.out["faults_omitted"] += 1
            return
        hands = self.out["hands"]
        faults.append(
            {
                "hand": len(hands) - 1 if hands else None,
                "at": len(hands[-1]["turns"]) if hands else 0,
                "seat": _seat_or_none(ev.get("seat"), self.players),
                "kind": printable(ev.get("kind"), 24),
                "reason": printable(
                    ev.get("reason") or fault_reason(ev.get("kind"), None), DETAIL_CHARS
                ),
                "detail": printable(ev["detail"], DETAIL_CHARS) if "detail" in ev else None,
                "strike": ev.get("strike") is True,
                "strikes": printable(ev.get("strikes"), 12),
                "forfeited": ev.get("forfeited") is True,
            }
        )

    def _hand_end(self, game: Game) -> None:
        r = game.results[-1]
        self.out["hands"][-1]["result"] = {
            "winner": r.winner,
            "winning_team": list(r.winning_team) if r.winning_team else None,
            "cards_left": list(r.cards_left),
            "penalties": list(r.penalties),
            "scores": list(r.scores),
            "cumulative": list(r.cumulative),
        }
