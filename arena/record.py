"""Match records: checked again by replaying them move by move through the engine.

The format itself (JSON Lines, the events' kinds and fields, the writer and the reader) is
:mod:`bigtwo.record`'s, defined once in the SDK because ``bigtwo.play_local`` writes records
too and the SDK cannot import the arena; ``RecordWriter``, ``RecordError`` and
``read_events`` are re-exported here for the arena's callers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bigtwo import Game, RulesError, RuleSet
from bigtwo.record import RecordError, RecordWriter, read_events

__all__ = ["RecordError", "RecordWriter", "Replay", "read_events", "replay", "replay_events"]


@dataclass
class Replay:
    """What replaying a record found."""

    header: dict[str, Any]
    game: Game | None
    turns: int = 0
    faults: list[dict[str, Any]] = field(default_factory=list)
    complete: bool = False


def replay(
    path: Path,
    on_turn: Callable[[Game, dict[str, Any]], None] | None = None,
    on_event: Callable[[str, Game | None, dict[str, Any]], None] | None = None,
) -> Replay:
    """Replay ``path`` through the engine, checking every deal, move and result.

    ``on_turn(game, event)`` is told of each move once the engine has played it;
    ``on_event(type, game, event)`` of every event (the header first, with ``game`` None
    when the record holds its own deals) once it has been checked, so what it shows agrees
    with the engine.  An exception either raises ends the replay and is passed on.

    Raises RecordError at the first disagreement (naming the line)."""
    return replay_events(read_events(path), path, on_turn, on_event)


def replay_events(
    numbered: Iterable[tuple[int, dict[str, Any]]],
    path: Path | str,
    on_turn: Callable[[Game, dict[str, Any]], None] | None = None,
    on_event: Callable[[str, Game | None, dict[str, Any]], None] | None = None,
) -> Replay:
    """:func:`replay` of events already read (each with its line number, every one a dict
    with a ``type``), e.g. a stored record the web viewer shows; ``path`` names the record
    in errors.  The same check, so the viewer and ``arena replay`` never disagree."""
    events = iter(numbered)
    try:
        n, header = next(events)
    except StopIteration:
        raise RecordError(f"{path}: empty record") from None
    if header.get("type") != "match":
        raise RecordError(f"{path}:{n}: the first event must be the match header")
    explicit = header.get("deals") == "explicit"
    try:
        rules = RuleSet.from_dict(header["rules"])
        game = None if explicit else Game(rules, seed=header["seed"])
    except (KeyError, RulesError, TypeError) as exc:
        raise RecordError(f"{path}:{n}: bad match header: {exc}") from None
    rep = Replay(header, game)
    if on_event:
        on_event("match", game, header)
    for n, ev in events:
        kind = ev["type"]
        where = f"{path}:{n}"
        try:
            if kind == "deal" and explicit:  # duplicate play: the record holds the deals
                if game is None:
                    rep.game = game = Game.from_hands(rules, ev["hands"], seed=header["seed"])
                elif game.hand_over and not game.match_over:
                    game.next_hand(ev["hands"], independent=True)
                else:
                    raise RecordError(f"{where}: a deal before the hand ended")
                if ev["hand"] != game.hand_no or ev["leader"] != game.turn:
                    raise RecordError(f"{where}: deal or leader differs from the rules'")
            elif game is None:  # only a record of explicit deals starts without a game
                raise RecordError(f"{where}: {kind} before the first deal")
            elif kind == "deal":
                if ev["hand"] != game.hand_no and game.hand_over and not game.match_over:
                    game.next_hand()
                dealt = [[str(c) for c in game.hand(s)] for s in range(game.players)]
                if ev["hand"] != game.hand_no or ev["hands"] != dealt:
                    raise RecordError(f"{where}: deal differs from the seed's deal")
            elif kind == "turn":
                if ev["seat"] != game.turn or ev["hand"] != game.hand_no:
                    raise RecordError(f"{where}: seat {ev['seat']} moved out of turn")
                why = game.refusal(ev["move"])
                if why is not None:
                    raise RecordError(f"{where}: illegal move {ev['move']!r}: {why}")
                game.apply(ev["move"])
                rep.turns += 1
            elif kind == "hand_end":
                result = game.results[-1].to_dict() if game.results else None
                if result is None or any(
                    result[k] != ev[k]
                    for k in ("hand", "winner", "cards_left", "scores", "cumulative")
                ):
                    raise RecordError(f"{where}: hand result differs from the engine's")
            elif kind == "fault":
                rep.faults.append(ev)
            elif kind == "match_end":
                scores = [s["score"] for s in ev["seats"]]
                if scores != list(game.scores):
                    raise RecordError(f"{where}: final scores differ from the engine's")
                rep.complete = True
        except (KeyError, TypeError) as exc:
            raise RecordError(f"{where}: malformed {kind} event: {exc}") from None
        # outside the checks: a KeyError of a viewer is not the record's fault
        if on_turn and kind == "turn" and game is not None:  # a turn was checked: a game
            on_turn(game, ev)
        if on_event:
            on_event(kind, rep.game, ev)
    if rep.game is None:
        raise RecordError(f"{path}: the record holds no deal")
    return rep
