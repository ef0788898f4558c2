"""The human seat's relay (issue 12's groundwork), against the real referee over real gRPC:
turns relayed with the legal moves, refusals answered with the engine's reason and nothing
sent, a time-out played by the referee and said, a person who leaves handled as a bot that
disconnects."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from arena.bots import resolve
from arena.match import run_match
from arena.referee.time_control import TimeControl
from arena.web.human import NOT_YOUR_TURN, HumanSeat
from bigtwo import RuleSet

from testkit import free_port


async def _match(
    person: HumanSeat, drive: Any, tc: TimeControl, hands: int = 1, **more: Any
) -> dict:
    """A match of ``hands`` hk hands: the person in seat 0, sample bots in-process."""
    rules = RuleSet.preset("hk").replace(match_end="hands", match_end_value=hands)
    bots = [resolve("remote:you"), resolve("random"), resolve("greedy"), resolve("heuristic")]
    tasks: list[asyncio.Task] = []

    def seated(creds, _name) -> None:
        tasks.append(asyncio.create_task(person.play(creds)))
        tasks.append(asyncio.create_task(drive(person, tasks)))

    summary = await run_match(
        bots, rules, "human-seat-test", tc, "inproc",
        listen_tcp=f"127.0.0.1:{free_port()}", on_remote=seated, **more,
    )  # fmt: skip
    for t in tasks:
        t.cancel()
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    failed = [o for o in outcomes if isinstance(o, Exception)]
    assert not failed, failed  # the relay and the test's person never failed
    return summary


@pytest.fixture
def person() -> HumanSeat:
    """The person's seat (seat 0): the relay a test drives as the browser would."""
    return HumanSeat()


async def _next(person: HumanSeat, kind: str) -> dict:
    while True:
        update = await asyncio.wait_for(person.updates.get(), 30)
        if update["type"] in (kind, "match_end", "closed"):
            return update


async def test_turns_are_relayed_and_refusals_send_nothing(person: HumanSeat):
    refusals: list[str] = []
    moves: list[dict] = []

    async def drive(person: HumanSeat, _tasks) -> None:
        while True:
            update = await _next(person, "turn")
            if update["type"] != "turn":
                return
            tid = update["turn_id"]
            if not refusals:  # before the first move: three wrong answers, nothing sent
                held = update["cards"]
                refusals.append(await person.answer(tid, [held[0], held[1], held[2]]) or "")
                refusals.append(await person.answer(tid, ["2S", "2S"]) or "")
                refusals.append(await person.answer(tid + 1, "pass") or "")
            first = update["legal"][0]["cards"] or "pass"
            assert await person.answer(tid, first) is None
            moves.append(update)
            assert await person.answer(tid, first) == NOT_YOUR_TURN  # answered already

    summary = await _match(person, drive, TimeControl(move_ms=10_000))
    me = summary.seats[0]
    assert me.faults == () and not me.forfeit  # the refusals never reached the referee
    assert moves and all(m["legal"] for m in moves)
    assert refusals[0].endswith("is not a combination under these rules") or "beat" in refusals[0]
    assert refusals[1]  # a card twice: the engine's words
    assert refusals[2] == NOT_YOUR_TURN
    assert summary.match_over and len(summary.hands) == 1


async def test_a_time_out_is_played_by_the_referee_and_said(person: HumanSeat):
    updates: list[dict] = []

    async def drive(person: HumanSeat, _tasks) -> None:
        waited = False
        while True:
            update = await asyncio.wait_for(person.updates.get(), 30)
            updates.append(update)
            if update["type"] in ("match_end", "closed"):
                return
            if update["type"] == "turn":
                if not waited:  # sit on the first turn: the referee's clock runs out
                    waited = True
                    stale = update["turn_id"]
                    continue
                assert await person.answer(stale, "pass") == NOT_YOUR_TURN
                first = update["legal"][0]["cards"] or "pass"
                assert await person.answer(update["turn_id"], first) is None

    summary = await _match(person, drive, TimeControl(move_ms=1000, bank_ms=0))
    faults = [u for u in updates if u["type"] == "fault"]
    assert faults and faults[0]["kind"] == "timeout"
    mine = [u for u in updates if u["type"] == "move" and u["seat"] == 0]
    assert mine[0]["by_referee"] and not any(m["by_referee"] for m in mine[1:])
    assert summary.seats[0].faults[0].kind == "timeout"
    assert not summary.seats[0].forfeit


async def test_a_person_who_leaves_is_a_disconnected_seat_and_the_match_ends(person: HumanSeat):
    async def drive(person: HumanSeat, tasks) -> None:
        await _next(person, "turn")
        tasks[0].cancel()  # the tab closes: the seat's stream ends

    summary = await _match(person, drive, TimeControl(move_ms=1000, bank_ms=0), hands=2)
    assert summary.match_over and len(summary.hands) == 2  # the fallback played on
    me = summary.seats[0]
    assert me.forfeit and me.faults
    assert all(not s.forfeit for s in summary.seats[1:])


def _answer_after(delay: float, updates: list[dict]) -> Any:
    async def drive(person: HumanSeat, _tasks) -> None:
        while True:
            update = await asyncio.wait_for(person.updates.get(), 30)
            updates.append(update)
            if update["type"] in ("match_end", "closed"):
                return
            if update["type"] == "turn" and delay >= 0:
                await asyncio.sleep(delay)
                first = update["legal"][0]["cards"] or "pass"
                await person.answer(update["turn_id"], first)

    return drive


async def test_a_persons_own_time_control_is_the_one_their_seat_is_held_to(person, tmp_path):
    """The match's clock is 200 ms a move, the person's 3 s: answers after 0.4 s are in
    time for the person (and the record says whose clock was whose)."""
    updates: list[dict] = []
    record = tmp_path / "m.jsonl"
    summary = await _match(
        person, _answer_after(0.4, updates), TimeControl(move_ms=200, bank_ms=0),
        seat_time={0: TimeControl(move_ms=3000, bank_ms=0)}, record_path=record,
    )  # fmt: skip
    assert not summary.seats[0].faults, summary.seats[0].faults
    assert [u["move_ms"] for u in updates if u["type"] == "turn"][:1] == [3000]
    start = next(u for u in updates if u["type"] == "match_start")
    assert start["move_ms"] == 3000
    header = json.loads(record.read_text().splitlines()[0])
    assert header["time_control"]["move_ms"] == 200
    assert header["seats"][0]["time_control"]["move_ms"] == 3000
    assert "time_control" not in header["seats"][1]


async def test_a_short_personal_clock_runs_out_before_the_matchs(person):
    updates: list[dict] = []
    started = time.monotonic()
    summary = await _match(
        person, _answer_after(-1, updates), TimeControl(move_ms=20_000, bank_ms=0),
        seat_time={0: TimeControl(move_ms=300, bank_ms=0, max_strikes=1)},
    )  # fmt: skip
    me = summary.seats[0]
    assert me.faults[0].kind == "timeout" and me.forfeit  # one strike, its own
    assert time.monotonic() - started < 15  # 300 ms, not the match's 20 s
