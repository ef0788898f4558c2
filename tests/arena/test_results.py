"""A match's result is typed (``arena.referee.results``) and its JSON unchanged: every shape
the arena has stored reads back and writes out as the same JSON, key order included, so no
database needs a migration."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
import pytest_asyncio

from arena.bots import resolve
from arena.ladder.duplicate import rotated_deals
from arena.ladder.running import Played
from arena.match import by_rotation, failed_to_start, run_match, split_match
from arena.public_record import public_summary
from arena.referee.results import Fault, HandScore, MatchResult, SeatResult
from arena.referee.time_control import TimeControl
from bigtwo import RuleSet

RULES = RuleSet.preset("hk").replace(match_end="hands", match_end_value=2)


def same_json(data: dict[str, Any]) -> None:
    """``data`` read and written again is the same text (values and key order)."""
    again = MatchResult.from_json(data).to_json()
    assert json.dumps(again) == json.dumps(data)


async def _played() -> tuple[MatchResult, MatchResult]:
    bots = [resolve(n) for n in ("heuristic", "greedy", "random", "greedy")]
    one = await run_match(bots, RULES, 5, TimeControl(), "inproc")
    deals = rotated_deals(RULES, ["x", "y"], 4)
    batch = await run_match(
        bots, RULES, 6, TimeControl(), "inproc", deals=deals, segments=by_rotation(8, 4)
    )
    return one, batch


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def played() -> tuple[MatchResult, MatchResult]:
    return await _played()


def test_a_real_match_and_its_stored_forms_round_trip(played):
    one, batch = played
    assert isinstance(one.seats[0], SeatResult) and isinstance(one.hands[0], HandScore)
    forms = [one, batch, *split_match(batch, [4, 4])]
    for result in forms:
        data = json.loads(json.dumps(result.to_json()))  # as a database gives it back
        same_json(data)
        same_json(public_summary(data))  # the ladder's stored (public) form
        assert MatchResult.from_json(data) == result
    assert [p.batch.index for p in forms[2:] if p.batch] == [0, 1]
    played = Played(batch, [{"type": "turn", "hand": 0}], b"gz")  # as a Ray task returns it
    assert pickle.loads(pickle.dumps(played)) == played
    assert batch.segments == 4 and batch.seats[0].forfeit_hands == ()


def test_the_json_is_the_keys_the_arena_always_wrote(played):
    one, batch = played
    data = one.to_json()
    assert list(data) == [
        "turn_round_trip", "match_id", "rules", "seed", "match_over", "hands", "seats",
        "sandbox", "sandbox_limits", "seats_ready_s",
    ]  # fmt: skip
    assert list(data["seats"][0]) == [
        "seat", "bot", "score", "penalty_points", "place", "forfeit", "forfeit_hand",
        "strikes", "faults", "connected",
    ]  # fmt: skip
    assert list(data["hands"][0]) == [
        "hand", "winner", "winning_team", "cards_left", "penalties", "scores", "cumulative",
    ]  # fmt: skip
    assert list(batch.to_json())[7:] == ["segments", "sandbox", "sandbox_limits", "seats_ready_s"]


OLD_SHAPES: list[dict[str, Any]] = [
    # before 0005 (faults with their detail, a seat's log path), before "connected" and
    # "turn_round_trip" were kept
    {
        "match_id": "a1",
        "rules": RULES.to_dict(),
        "seed": 3,
        "match_over": True,
        "hands": [
            {
                "hand": 0,
                "winner": 1,
                "winning_team": None,
                "cards_left": [3, 0, 2, 5],
                "penalties": [3, 0, 2, 5],
                "scores": [-3, 10, -2, -5],
                "cumulative": [-3, 10, -2, -5],
            }
        ],
        "seats": [
            {
                "seat": s,
                "bot": f"b{s}",
                "score": [-3, 10, -2, -5][s],
                "penalty_points": [3, 0, 2, 5][s],
                "place": [3, 1, 2, 4][s],
                "forfeit": s == 3,
                "forfeit_hand": 0 if s == 3 else None,
                "strikes": 1 if s == 3 else 0,
                "faults": (
                    [{"kind": "crash", "hand": 0, "turn": 4, "detail": "boom", "strike": True}]
                    if s == 3
                    else []
                ),
                "log": f"/logs/seat{s}.log",
            }
            for s in range(4)
        ],
        "sandbox": "process",
        "sandbox_limits": {"memory_mb": 512},
    },
    # the public form after 0005: a reason, no detail, no log
    {
        "turn_round_trip": {"n": 0},
        "match_id": "a2",
        "match_over": False,
        "hands": [],
        "seats": [
            {
                "seat": 0,
                "bot": "x",
                "score": 0,
                "penalty_points": 0,
                "place": 1,
                "forfeit": True,
                "forfeit_hand": 0,
                "strikes": 0,
                "faults": [
                    {
                        "kind": "crash",
                        "hand": None,
                        "turn": None,
                        "strike": False,
                        "reason": "the bot ended before connecting",
                    }
                ],
                "connected": False,
            }
        ],
        "aborted": "not every bot started (seat 0 x): no hand was played",
    },
    # tests/ladderkit's scripted results (no rules, seed, penalties or cards left)
    {
        "match_id": "ladder match 7",
        "match_over": True,
        "hands": [{"hand": 0, "winner": 0, "scores": [6, -2], "cumulative": [6.0, -2.0]}],
        "seats": [
            {
                "seat": 0,
                "bot": "steady",
                "score": 6.0,
                "place": 1,
                "forfeit": False,
                "forfeit_hand": None,
                "strikes": 0,
                "faults": [],
            },
            {
                "seat": 1,
                "bot": "loser",
                "score": -2.0,
                "place": 2,
                "forfeit": True,
                "forfeit_hand": 0,
                "strikes": 0,
                "faults": [],
            },
        ],
    },
]


@pytest.mark.parametrize("shape", OLD_SHAPES, ids=["pre-0005", "public", "scripted"])
def test_every_stored_shape_reads_and_writes_back_unchanged(shape):
    same_json(shape)
    result = MatchResult.from_json(shape)
    assert all(isinstance(f, Fault) for s in result.seats for f in s.faults)


def test_a_result_from_before_connected_was_kept_counts_its_bots_as_started():
    old = MatchResult.from_json(OLD_SHAPES[0])
    assert all(s.started for s in old.seats) and failed_to_start(old) == []
    public = MatchResult.from_json(OLD_SHAPES[1])
    assert [(s.bot, why) for s, why in failed_to_start(public)] == [
        ("x", "the bot ended before connecting")
    ]
