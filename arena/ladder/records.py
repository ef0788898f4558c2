"""Each ladder match's own record, cut from the record of the batch it was played in, kept
gzip-compressed in the database (``store.MatchRecord``) so that ``arena replay MATCH_ID``
can check and show it later.

A batch (``running.play_batch``) is recorded as one file: one header per rotation (each
rotation is played by fresh bot instances, as its own referee session of independent
hands) and every hand numbered by its place in the batch's deal list.  That file does not
replay as it is (its headers interleave, and its running totals span the batch), and it
holds other matches.  A match's record is therefore rewritten as one game of its own
hands, in deal order (deal 1 in each rotation, then deal 2, ...): every deal, move, fault
and hand result exactly as the referee recorded it, hands renumbered from 0, and only the
sums that span hands (``cumulative``, the final scores) made this match's.  Each hand is
independent (duplicate play: dealt as written, led like a first hand), so the engine checks
the rewritten record move by move just as it would have checked the original.

What is kept is the record's public form (:func:`arena.public_record.public_events`): a
fault's kind, place and fixed reason, never its detail (the bot's own words, kept in the
``faults`` table for its owner).
"""

from __future__ import annotations

from typing import Any

from bigtwo.record import compress, match_end_event

from ..public_record import public_events
from ..referee.results import MatchResult

STRUCTURE = ("match", "match_end", "aborted")
"""Events rebuilt for each match rather than copied."""


def _hand(event: dict[str, Any]) -> int | None:
    hand = event.get("hand")
    return hand if isinstance(hand, int) and not isinstance(hand, bool) else None


def split_record(
    events: list[dict[str, Any]],
    parts: list[MatchResult],
    match_ids: list[int | None],
) -> list[list[dict[str, Any]]]:
    """The events of each match of a batch: ``events`` the batch record's, ``parts`` each
    match's result (``split_match``'s, in deal-list order), ``match_ids`` their ladder ids.
    Events outside any hand (a fault at a start) go with the first match, as
    ``split_match`` puts their faults."""
    header = next(e for e in events if e.get("type") == "match")
    by_hand: dict[int, list[dict[str, Any]]] = {}
    loose: list[dict[str, Any]] = []
    for e in events:
        if e.get("type") in STRUCTURE:
            continue
        hand = _hand(e)
        if hand is None:
            loose.append(e)
        else:
            by_hand.setdefault(hand, []).append(e)
    out = []
    lo = 0
    for j, (part, mid) in enumerate(zip(parts, match_ids, strict=True)):
        n = len(part.hands)
        rules = {**header["rules"], "match_end": "hands", "match_end_value": n}
        mine: list[dict[str, Any]] = [
            {
                **header,
                "match_id": f"ladder match {mid}" if mid is not None else header["match_id"],
                "rules": rules,
                "seed": part.seed if part.seed is not None else header.get("seed"),
                "ladder": {
                    "match": mid,
                    "batch": part.batch.to_json() if part.batch else None,
                    "played_as": "one referee session per rotation, by fresh bot instances; "
                    "shown as one game of this match's hands in deal order",
                },
            }
        ]
        mine[0].pop("segment", None)  # one game, not a rotation of the batch
        if j == 0:
            mine += loose
        running = [0] * len(part.seats)
        for h in range(lo, lo + n):
            for e in by_hand.get(h, []):
                e = {**e, "hand": h - lo}
                if e.get("type") == "hand_end":
                    running = [a + b for a, b in zip(running, e["scores"], strict=True)]
                    e["cumulative"] = list(running)
                mine.append(e)
        mine.append(match_end_event(part.to_json()))
        out.append(mine)
        lo += n
    return out


def kept_records(
    events: list[dict[str, Any]],
    parts: list[MatchResult],
    match_ids: list[int | None],
) -> list[bytes | None]:
    """Each match's public record, compressed (``split_record``, ``public_events``,
    ``bigtwo.record.compress``);
    None for all of them when the batch's record cannot be cut (a record of an unexpected shape): a
    match's result is never lost for the sake of its record — ``arena replay`` then says
    the match has none."""
    try:
        return [compress(public_events(e)) for e in split_record(events, parts, match_ids)]
    except (KeyError, TypeError, ValueError, StopIteration):
        return [None] * len(parts)
