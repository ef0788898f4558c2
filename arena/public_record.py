"""What of a match's record and result is public, and what is its bots' own.

A fault's ``detail`` quotes the bot (its exception's message, the line of its source that
raised, the last line it wrote to stderr) and so is private to the bot's owner, as its logs
are.  The privacy rule is applied where the data is stored, not page by page: the forms a
ladder keeps as public — its match records (``MatchRecord``), its match results
(``Match.result``), the Play page's game records — are made by :func:`public_events` and
:func:`public_summary`, which keep of each fault only its kind, its place (seat, hand, turn,
strike count, forfeit) and a ``reason`` from the fixed vocabulary below, never a word the
bot chose.  The details live apart, in the ladder's ``faults`` table (written in the match's
own transaction), and pages show them only through the one owner-or-organizer rule
(``arena.web.security.owner_or_organizer``).  Readers of stored records pass them through
these functions again, so rows written before this rule existed are served redacted too.

Fields are kept by name (a list of what may go out), never removed by name: a field added
to the referee's events later stays private until it is added here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

KINDS = ("timeout", "illegal", "protocol", "crash", "disconnect")
"""The referee's fault kinds; anything else is shown as ``fault``."""

REASONS: tuple[tuple[str, str, str], ...] = (
    # (kind, how the referee's own text begins, the public reason)
    ("crash", "the bot ended before connecting", "the bot ended before connecting"),
    ("crash", "the bot ended during the match", "the bot ended during the match"),
    ("disconnect", "the bot ended during the match", "the bot ended during the match"),
    ("crash", "the bot's act() raised", "the bot's act() raised an exception"),
    ("illegal", "the bot returned no play", "the bot returned no play"),
    ("disconnect", "never connected within", "the bot never connected in time"),
    ("disconnect", "stream broke", "the bot's connection broke"),
    ("timeout", "the bot does not read its messages", "the bot does not read its messages"),
    ("timeout", "no action within", "no action within the time allowed"),
    ("protocol", "unexpected ", "an unexpected message during play"),
    ("protocol", "a late action for turn", "an action for a turn not asked"),
    ("protocol", "an action for turn", "an action for a turn not asked"),
    ("protocol", "unknown error code", "an unknown error code"),
    ("protocol", "an action that both passes", "an action that both passes and plays"),
    ("protocol", "card id", "a card id out of range"),
)
"""The public reasons, chosen by the referee's own opening words (which come before any
quote of the bot, so a bot cannot choose its reason)."""

GENERIC = {
    "timeout": "too slow",
    "illegal": "an illegal play",
    "protocol": "a protocol error",
    "crash": "the bot crashed",
    "disconnect": "the bot disconnected",
}
"""A kind's reason when the referee's text is not one of the above."""

VOCABULARY = frozenset({r for _, _, r in REASONS} | set(GENERIC.values()) | {"a fault"})
"""Every reason a public record can hold."""

FAULT_FIELDS = ("type", "seat", "kind", "reason", "hand", "turn", "strike", "strikes", "forfeited")
"""What of a fault is public (``type`` and ``seat`` where the form has them)."""

SEAT_FIELDS = ("seat", "bot", "time_control")
"""What of a record header's seat is public (not ``log``: where its output is kept)."""


def fault_kind(value: Any) -> str:
    return value if isinstance(value, str) and value in KINDS else "fault"


def fault_reason(kind: Any, detail: Any) -> str:
    """The public reason for a fault of ``kind`` whose referee text is ``detail``: always
    one of :data:`VOCABULARY`."""
    kind = fault_kind(kind)
    text = detail if isinstance(detail, str) else ""
    for k, opening, reason in REASONS:
        if k == kind and text.startswith(opening):
            return reason
    return GENERIC.get(kind, "a fault")


def _scalar(value: Any) -> Any:
    """A number, a bool or None as it is; anything else (never written by the referee) None."""
    return value if value is None or isinstance(value, int | float | bool) else None


def public_fault(fault: dict[str, Any]) -> dict[str, Any]:
    """A fault (a record's ``fault`` event, or one of a result's seat's ``faults``) as the
    public may see it."""
    out: dict[str, Any] = {}
    for key in FAULT_FIELDS:
        if key not in fault:
            continue
        if key == "type":
            out[key] = "fault"
        elif key == "kind":
            out[key] = fault_kind(fault[key])
        elif key == "reason":
            continue  # made again below: a stored reason is not trusted to be the vocabulary's
        else:
            out[key] = _scalar(fault[key])
    if "kind" not in out:
        out["kind"] = "fault"
    reason = fault.get("reason")
    out["reason"] = (
        reason
        if isinstance(reason, str) and reason in VOCABULARY
        else fault_reason(fault.get("kind"), fault.get("detail"))
    )
    return out


def _public_seat(seat: Any) -> Any:
    if not isinstance(seat, dict):
        return seat
    return {k: v for k, v in seat.items() if k in SEAT_FIELDS}


def public_event(event: dict[str, Any]) -> dict[str, Any]:
    """One record event as the public may see it (faults redacted, header seats without
    their log's path)."""
    kind = event.get("type")
    if kind == "fault":
        return public_fault(event)
    if kind == "match" and isinstance(event.get("seats"), list):
        return {**event, "seats": [_public_seat(s) for s in event["seats"]]}
    if kind == "match_end":  # its seats are the result's: their faults, their logs
        return public_summary(event)
    return event


def public_events(events: Iterable[Any]) -> list[Any]:
    """A record's events as the public may see them (anything that is no event as it is:
    the viewer names it)."""
    return [public_event(e) if isinstance(e, dict) else e for e in events]


def public_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """A match's result (``run_match``'s summary, or a record's ``match_end`` event) as the
    public may see it: each seat's faults redacted, no seat's log path."""
    seats = []
    for seat in summary.get("seats") or []:
        if not isinstance(seat, dict):
            seats.append(seat)
            continue
        seat = {k: v for k, v in seat.items() if k != "log"}
        if isinstance(seat.get("faults"), list):
            seat["faults"] = [public_fault(f) for f in seat["faults"] if isinstance(f, dict)]
        seats.append(seat)
    return {**summary, "seats": seats}


FaultKey = tuple[int, str, int | None, int | None]
"""A fault's place in a match: seat, kind, hand, turn (how a detail finds its fault)."""


def fault_key(seat: Any, fault: dict[str, Any]) -> FaultKey | None:
    hand, turn = fault.get("hand"), fault.get("turn")
    if not isinstance(seat, int):
        return None
    return (
        seat,
        fault_kind(fault.get("kind")),
        hand if isinstance(hand, int) else None,
        turn if isinstance(turn, int) else None,
    )


def with_details(events: list[Any], details: dict[FaultKey, list[str]]) -> list[Any]:
    """The record's events with the ``detail`` of each fault the caller may see put back
    (``details``: by :func:`fault_key`, in order; a fault of another seat keeps none) —
    for an owner's own view and the operator's ``arena replay MATCH --db``."""
    left = {k: list(v) for k, v in details.items()}
    out = []
    for e in events:
        if isinstance(e, dict) and e.get("type") == "fault":
            key = fault_key(e.get("seat"), e)
            found = left.get(key) if key is not None else None
            if found:
                e = {**e, "detail": found.pop(0)}
        out.append(e)
    return out
