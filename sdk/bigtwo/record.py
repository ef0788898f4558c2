"""The match record's format, in one place: JSON Lines, one event a line, each line flushed
as it is written (a killed run keeps what it played).

The SDK owns the format, not the arena, because both write records and only one direction
of import exists: :func:`bigtwo.play_local` (which must run with the SDK alone) writes a
record ``arena replay`` accepts, and the arena depends on the SDK anyway.  So the events'
kinds and fields, the writer, the reader and the stored (compressed) form live here;
``arena.record`` keeps the replay checker and re-exports the writer and reader, through
which the referee writes; ``play_local`` builds and writes its events here, and the ladder
reads and stores records here.  Pure standard library, like the engine.

Events, each a JSON object with a ``type``:

- ``match``: the header, always first — ``match_id``, ``rules`` (``RuleSet.to_dict``),
  ``seed``, ``seats`` (``seat``, ``bot``, optionally ``log`` and the seat's own
  ``time_control``), ``time_control`` (the referee's; none in a local match),
  ``sandbox``, ``deals`` (``"seed"``: dealt from the seed, or ``"explicit"``: every hand
  dealt as its ``deal`` event says, as an independent hand), ``started_at``; a ladder
  batch adds ``segment``, a ladder match ``ladder``.
- ``deal``: ``hand``, ``leader``, ``hands`` (every seat's cards).
- ``turn``: ``hand``, ``turn`` (its id), ``seat``, ``move``, ``by_referee``, ``ms``.
- ``fault``: ``seat``, ``kind``, ``hand``, ``turn``, ``detail``, ``strike``, ``strikes``,
  ``forfeited``.
- ``hand_end``: the hand's result (``HandResult.to_dict``).
- ``match_end``: ``hands`` and ``seats`` as the match's summary has them.
- ``aborted``: ``reason`` (not every bot started; no hand was played).
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .jsontext import JSONTextError, loads_bounded

if TYPE_CHECKING:
    from .game import Game, HandResult
    from .rules import RuleSet

MAX_LINE_CHARS = 32 * 2**20
"""A record line longer than this is refused unread (the longest event, ``match_end``,
lists every hand's result: about 180 bytes a hand)."""

ENCODING = "jsonl+gzip"
"""The stored form (a ladder keeps each match's record so): :func:`compress`."""


def line(event: dict[str, Any]) -> str:
    """One event as its line of the record."""
    return json.dumps(event, separators=(",", ":")) + "\n"


class RecordWriter:
    """Appends events to a record file, flushing each line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] = open(path, "w", encoding="utf-8")  # noqa: SIM115

    def __call__(self, event: dict[str, Any]) -> None:
        self._file.write(line(event))
        self._file.flush()

    def close(self) -> None:
        """Close the file; every line is already flushed, so a killed match keeps what it played."""
        self._file.close()


class RecordError(ValueError):
    """A record that is unreadable or disagrees with the rules; names the line."""


def read_events(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """A record file's events with their line numbers (blank lines skipped); RecordError
    names the first line that is no event."""
    try:
        f = open(path, encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        raise RecordError(f"{path}: {exc.strerror or exc}") from None
    with f:
        try:
            yield from parse_lines(_bounded_lines(f, str(path)), str(path))
        except UnicodeDecodeError:
            raise RecordError(f"{path}: not a text file") from None


def read_text_events(text: str, where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The events of a record held in memory (a ladder keeps its records in its database),
    read with :func:`read_events`' bounds; ``where`` names it in errors."""
    import io

    yield from parse_lines(_bounded_lines(io.StringIO(text), where), where)


def _bounded_lines(f: IO[str], where: str) -> Iterator[str]:
    """A file's lines, none read whole past ``MAX_LINE_CHARS`` (a line without end is not
    held in memory whole)."""
    n = 0
    while True:
        text = f.readline(MAX_LINE_CHARS + 1)
        if not text:
            return
        n += 1
        if len(text) > MAX_LINE_CHARS:
            raise RecordError(f"{where}:{n}: a line longer than {MAX_LINE_CHARS} characters")
        yield text


def parse_lines(lines: Iterable[str], where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The events of a record's lines (``where`` names it in errors).  Hostile text is
    refused with a RecordError naming its line, never another exception: nesting deeper
    than any event's, a line too long (:func:`bigtwo.jsontext.loads_bounded`)."""
    for n, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            event = loads_bounded(text, max_chars=MAX_LINE_CHARS)
        except JSONTextError as exc:
            raise RecordError(f"{where}:{n}: {exc}") from None
        if not isinstance(event, dict) or "type" not in event:
            raise RecordError(f"{where}:{n}: not a record event")
        yield n, event


def compress(events: Iterable[dict[str, Any]]) -> bytes:
    """The record's lines, gzip-compressed (``mtime=0``: the same record always compresses
    to the same bytes)."""
    text = "".join(line(e) for e in events)
    return gzip.compress(text.encode(), compresslevel=9, mtime=0)


def decompress(data: bytes) -> bytes:
    """The record file's bytes again, from :func:`compress`'s."""
    return gzip.decompress(data)


# ----- the events, as the referee and play_local record them ---------------------------


def header(
    match_id: str,
    rules: RuleSet,
    seed: int | str,
    seats: list[dict[str, Any]],
    sandbox: dict[str, Any],
    explicit: bool,
    time_control: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``match`` event (``explicit``: the hands are dealt as the ``deal`` events say)."""
    event: dict[str, Any] = {
        "type": "match",
        "match_id": match_id,
        "rules": rules.to_dict(),
        "seed": seed,
        "seats": seats,
    }
    if time_control is not None:
        event["time_control"] = time_control
    event |= {
        "sandbox": sandbox,
        "deals": "explicit" if explicit else "seed",
        "started_at": time.time(),
    }
    return event


def deal_event(game: Game) -> dict[str, Any]:
    """The ``deal`` event of the hand ``game`` is about to play."""
    return {
        "type": "deal",
        "hand": game.hand_no,
        "leader": game.turn,
        "hands": [[str(c) for c in game.hand(s)] for s in range(game.players)],
    }


def turn_event(
    hand: int, turn: int, seat: int, move: object, by_referee: bool, ms: float
) -> dict[str, Any]:
    """The ``turn`` event of a move played (``move`` as its text; ``ms`` the time taken)."""
    return {
        "type": "turn",
        "hand": hand,
        "turn": turn,
        "seat": seat,
        "move": str(move),
        "by_referee": by_referee,
        "ms": round(ms, 3),
    }


def fault_event(seat: int, fault: dict[str, Any], strikes: int, forfeited: bool) -> dict[str, Any]:
    """The ``fault`` event (``fault``: the fault's own fields, its ``to_dict``)."""
    return {"type": "fault", "seat": seat, **fault, "strikes": strikes, "forfeited": forfeited}


def hand_end_event(result: HandResult) -> dict[str, Any]:
    """The ``hand_end`` event of a hand's result: the record holds every seat's remaining
    cards, so a replay can check the scores."""
    return {"type": "hand_end", **result.to_dict()}


def match_end_event(summary: dict[str, Any]) -> dict[str, Any]:
    """The ``match_end`` event of a match's summary (its ``hands`` and ``seats``)."""
    return {"type": "match_end", "hands": summary["hands"], "seats": summary["seats"]}


def aborted_event(reason: str) -> dict[str, Any]:
    """The ``aborted`` event: the match stopped early (interrupted, a referee error), so a
    reader knows the record ends there on purpose rather than being cut off."""
    return {"type": "aborted", "reason": reason}
