"""Purpose-written bad bots: each match still finishes, the fault and strikes are recorded
against the right seat, the honest seats are untouched, and the record still replays."""

import time

import pytest

from arena.record import replay

from .conftest import play

HONEST = ["good", "good", "good"]


def check(result, record_file, bad_seat=0):
    assert result["match_over"]
    for seat in result["seats"]:
        if seat["seat"] != bad_seat:
            assert seat["faults"] == [] and not seat["forfeit"], seat
    assert replay(record_file).complete  # every move, the referee's included, is legal
    return result["seats"][bad_seat]


def test_sleeping_past_the_deadline(record_file):
    start = time.monotonic()
    result = play(["sleeper", *HONEST], move_ms=150, bank_ms=100, max_strikes=2, record=record_file)
    bad = check(result, record_file)
    assert [f["kind"] for f in bad["faults"]] == ["timeout", "timeout"]
    assert bad["forfeit"] and bad["strikes"] == 2
    assert time.monotonic() - start < 20


def test_time_bank_absorbs_an_overrun(record_file):
    result = play(
        ["sleeper", *HONEST], move_ms=200, bank_ms=60_000, max_strikes=1, record=record_file
    )
    bad = check(result, record_file)
    assert bad["faults"] == []  # 0.6 s moves are paid from the bank


@pytest.mark.parametrize(
    "name, kind, words",
    [
        ("illegal", "illegal", "passing is not allowed"),
        ("not_held", "illegal", "you do not hold"),
        ("raiser", "crash", "RuntimeError: boom"),
        ("junk_return", "illegal", "returned no play"),
    ],
)
def test_bad_actions_cost_strikes_then_forfeit(name, kind, words, record_file):
    result = play([name, *HONEST], max_strikes=3, record=record_file)
    bad = check(result, record_file)
    assert bad["faults"][0]["kind"] == kind and words in bad["faults"][0]["detail"]
    assert bad["faults"][0]["hand"] == 0 and bad["faults"][0]["turn"] >= 1
    assert bad["strikes"] == 3 and bad["forfeit"]


def test_exiting_mid_match(record_file):
    result = play(["exiter", *HONEST], record=record_file)
    bad = check(result, record_file)
    assert [f["kind"] for f in bad["faults"]] == ["disconnect"] and bad["forfeit"]


def test_crash_at_start(record_file):
    result = play(["crash_at_start", *HONEST], record=record_file)
    bad = check(result, record_file)
    assert bad["faults"][0]["kind"] == "crash" and bad["forfeit"]
    assert "broken on purpose" in bad["faults"][0]["detail"]


def test_never_connecting(record_file):
    start = time.monotonic()
    result = play(["never_connects", *HONEST], startup_ms=1500, record=record_file)
    bad = check(result, record_file)
    assert (
        bad["faults"][0]["kind"] == "disconnect" and "never connected" in bad["faults"][0]["detail"]
    )
    assert time.monotonic() - start < 15


def test_the_next_match_is_normal():
    play(["raiser", *HONEST], max_strikes=1)
    result = play(["greedy", "greedy", "heuristic", "random"], hands=2)
    assert all(s["faults"] == [] for s in result["seats"])
