"""The public form of a record and a result (``arena.public_record``): fields kept by name,
so nothing the bot wrote — its detail, a reason it forged, a field the referee adds later —
goes out; every reason is one of the fixed vocabulary's."""

from __future__ import annotations

from arena.public_record import (
    VOCABULARY,
    fault_reason,
    public_events,
    public_fault,
    public_summary,
    with_details,
)

SECRET = "BOTWORDS"


def test_a_fault_keeps_its_kind_and_place_and_a_fixed_reason_only():
    fault = {
        "type": "fault",
        "seat": 2,
        "kind": "crash",
        "hand": 1,
        "turn": 7,
        "detail": f"the bot's act() raised: RuntimeError: {SECRET}",
        "strike": True,
        "strikes": 1,
        "forfeited": False,
        "stderr": SECRET,  # a field the referee might add one day: not public until listed
        "reason": SECRET,  # a stored reason that is not the vocabulary's is made again
    }
    out = public_fault(fault)
    assert SECRET not in repr(out)
    assert out == {
        "type": "fault",
        "seat": 2,
        "kind": "crash",
        "reason": "the bot's act() raised an exception",
        "hand": 1,
        "turn": 7,
        "strike": True,
        "strikes": 1,
        "forfeited": False,
    }
    # a kind or a place that is text is no longer text
    odd = public_fault({"kind": SECRET, "hand": SECRET, "detail": SECRET})
    assert SECRET not in repr(odd) and odd["kind"] == "fault" and odd["reason"] in VOCABULARY


def test_the_reason_is_chosen_by_the_referee_words_before_any_quote():
    said = {
        ("crash", "the bot ended before connecting: exit code 1: " + SECRET),
        ("crash", "the bot's act() raised: " + SECRET),
        ("illegal", "the bot returned no play: " + SECRET),
        ("illegal", f"3D 4S: {SECRET}"),
        ("timeout", "no action within 1000 ms plus the time bank"),
        ("disconnect", SECRET),
        ("protocol", "unexpected hello message in play"),
        ("mystery", "the bot's act() raised: x"),
    }
    for kind, detail in said:
        assert fault_reason(kind, detail) in VOCABULARY
        assert SECRET not in fault_reason(kind, detail)


def test_headers_results_and_match_ends_lose_logs_and_details_and_details_come_back():
    header = {"type": "match", "seats": [{"seat": 0, "bot": "a", "log": "/srv/logs/a.txt"}]}
    end = {
        "type": "match_end",
        "hands": [],
        "seats": [{"seat": 0, "log": "/x", "faults": [{"kind": "crash", "detail": SECRET}]}],
    }
    fault = {"type": "fault", "seat": 0, "kind": "crash", "hand": 0, "turn": 3, "detail": SECRET}
    events = public_events([header, fault, end, None])
    assert SECRET not in repr(events) and "/srv/logs" not in repr(events)
    assert events[-1] is None  # not an event: left for the viewer to name
    summary = public_summary({"seats": end["seats"]})
    assert SECRET not in repr(summary) and "log" not in summary["seats"][0]
    back = with_details(events, {(0, "crash", 0, 3): ["mine"]})
    assert back[1]["detail"] == "mine" and "detail" not in back[2]["seats"][0]["faults"][0]
    assert "detail" not in with_details(events, {(1, "crash", 0, 3): ["theirs"]})[1]
