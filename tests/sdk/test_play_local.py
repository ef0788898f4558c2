"""``bigtwo.play_local``: the in-process runner calls a bot's hooks as the network client
does, with the same observations field by field (checked against a real referee over a
real gRPC socket on the same seeded games), judges faults as the referee does, and writes
records that ``arena replay`` accepts."""

import asyncio
import contextlib
import dataclasses
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from arena.ladder.duplicate import rotated_deals
from arena.referee.service import RefereeServer
from arena.referee.session import MatchSession, SeatSpec
from arena.referee.time_control import TimeControl
from bigtwo import (
    PASS,
    Bot,
    IllegalMoveError,
    InvalidReturn,
    Observation,
    RuleSet,
    deal,
    play_local,
)
from bigtwo.client import play_match
from bigtwo.loader import load_bot_class
from bigtwo.record import RecordWriter, read_events

from testkit import arena_main

ROOT = Path(__file__).resolve().parents[2]
TC = TimeControl(move_ms=5000, bank_ms=5000, startup_ms=10_000, max_strikes=3)


def snapshot(obs: Observation) -> dict:
    """Every field of an observation, as it is at the call (the wire's ``history`` is the
    client's live list: copied, so later moves do not change what was seen)."""
    out = {}
    for f in dataclasses.fields(Observation):
        value = getattr(obs, f.name)
        out[f.name] = tuple(value) if f.name == "history" else value
    return out


class Recorder(Bot):
    """Plays a seeded random legal move and logs every call it gets.  ``crash_at``,
    ``junk_at``, ``illegal_at``: its n-th act() (from 1) raises, returns no play, or plays
    a card it does not hold."""

    def __init__(self, seed, crash_at=(), junk_at=(), illegal_at=()):
        self.rng = random.Random(seed)
        self.log = []
        self.acts = 0
        self.crash_at, self.junk_at, self.illegal_at = crash_at, junk_at, illegal_at

    def act(self, observation):
        self.log.append(("act", snapshot(observation)))
        self.acts += 1
        if self.acts in self.crash_at:
            raise ValueError("kaput")
        if self.acts in self.junk_at:
            return None
        if self.acts in self.illegal_at:
            mine = {int(c) for c in observation.hand}
            return [next(c for c in range(52) if c not in mine)]
        return self.rng.choice(observation.legal_moves)

    def on_match_start(self, observation):
        self.log.append(("match_start", snapshot(observation)))

    def on_hand_start(self, observation):
        self.log.append(("hand_start", snapshot(observation)))

    def on_event(self, action):
        self.log.append(("event", action))

    def on_hand_end(self, result):
        self.log.append(("hand_end", result))

    def on_match_end(self, scores, places):
        self.log.append(("match_end", (scores, places)))

    def on_fault(self, kind, detail):
        self.log.append(("fault", (kind, detail)))


async def over_the_wire(rules, seed, bots, deals=None, record=None) -> dict:
    """The match played by a real referee, each bot behind the network client (``record``:
    the referee's record writer); bounded, so a referee that hangs fails the test."""
    async with asyncio.timeout(120):
        folder = tempfile.mkdtemp(prefix="pl-")
        server = RefereeServer()
        address = server.listen_unix(Path(folder) / "r.sock")
        await server.start()
        tasks = []
        try:
            seats = [SeatSpec(f"bot{i}") for i in range(rules.players)]
            session = MatchSession(rules, seats, seed, TC, deals=deals, record=record)
            server.add(session)
            runner = asyncio.create_task(session.run())
            for i, bot in enumerate(bots):
                tok = session.seats[i].spec.token
                tasks.append(
                    asyncio.create_task(play_match(bot, address, session.match_id, i, tok))
                )
            summary = await runner
            await asyncio.gather(*tasks)  # every bot has handled its match end
            return summary
        finally:
            for t in tasks:
                t.cancel()
                with contextlib.suppress(BaseException):
                    await t
            await server.stop(0)
            shutil.rmtree(folder, ignore_errors=True)


def assert_same_calls(wire: list, local: list, seat: int) -> None:
    """The two logs agree call by call and, for observations, field by field (the message
    names the first difference)."""
    for i, (w, lo) in enumerate(zip(wire, local, strict=False)):
        assert w[0] == lo[0], f"seat {seat} call {i}: {w[0]} over the wire, {lo[0]} locally"
        if isinstance(w[1], dict):
            for name, value in w[1].items():
                assert value == lo[1][name], (
                    f"seat {seat} call {i} ({w[0]}), field {name}: wire {value!r}, "
                    f"local {lo[1][name]!r}"
                )
        else:
            assert w[1] == lo[1], f"seat {seat} call {i} ({w[0]}): {w[1]!r} != {lo[1]!r}"
    assert len(wire) == len(local), f"seat {seat}: {len(wire)} calls vs {len(local)}"


async def play_both(rules, seed, make, deals=None):
    wire_bots, local_bots = make(), make()
    summary = await over_the_wire(rules, seed, wire_bots, deals)
    result = play_local(local_bots, rules, seed=seed, deals=deals)
    for seat, (w, lo) in enumerate(zip(wire_bots, local_bots, strict=True)):
        assert_same_calls(w.log, lo.log, seat)
    assert [s.score for s in summary.seats] == list(result.scores)
    return summary, result, wire_bots


CASES = {
    "hk, 3 hands": (RuleSet.preset("hk").replace(match_end="hands", match_end_value=3), "a"),
    "family, 3 players, revolution, no pass on the first trick": (
        RuleSet.preset("family").replace(
            players=3,
            revolution=True,
            no_pass_first_trick=True,
            bombs="anywhere",
            match_end="hands",
            match_end_value=3,
        ),
        "b",
    ),
    "pusoy (CSHD, locks out), 2 players, no lone two": (
        RuleSet.preset("pusoy").replace(
            players=2, no_lone_two_finish=True, match_end="hands", match_end_value=3
        ),
        "c",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_in_process_and_wire_observations_agree_field_by_field(case):
    rules, seed = CASES[case]

    def make():
        return [Recorder(f"{seed}/{i}") for i in range(rules.players)]

    summary, result, bots = await play_both(rules, seed, make)
    kinds = [k for k, _ in bots[0].log]
    assert kinds[0] == "match_start" and kinds[-1] == "match_end"
    assert kinds.count("hand_start") == 3 and kinds.count("act") > 3
    starts = [obs for k, obs in bots[0].log if k == "hand_start"]
    assert all(s["turn"] >= 0 for s in starts)  # the leader, not -1 (the wire said who)
    assert starts[0]["must_include"] == rules.lowest_card
    assert bots[0].log[0][1]["turn"] == -1  # before the deal nobody is to move
    assert summary.match_over and result.game.match_over


async def test_explicit_deals_agree_with_the_referees_duplicate_play():
    rules = RuleSet.preset("hk")
    deals = rotated_deals(rules, ["pl/0"], 4)

    def make():
        return [Recorder(f"d/{i}") for i in range(4)]

    summary, result, _ = await play_both(rules, "pl", make, deals=deals)
    assert len(result.hands) == 4 == len(summary.hands)
    assert [list(h.scores) for h in summary.hands] == [list(h.scores) for h in result.hands]


async def test_faults_are_judged_and_told_as_the_referee_does():
    rules = RuleSet.preset("hk").replace(match_end="hands", match_end_value=2)

    def make():
        return [
            Recorder("f/0", crash_at=(1,), junk_at=(2,), illegal_at=(3,)),  # forfeits
            Recorder("f/1", illegal_at=(2,)),
            Recorder("f/2"),
            Recorder("f/3"),
        ]

    summary, result, bots = await play_both(rules, "f", make)
    faults = [(f.kind, f.detail) for f in summary.seats[0].faults]
    assert [(f.kind, f.detail) for f in result.faults if f.seat == 0] == faults
    assert [k for k, _ in faults] == ["crash", "illegal", "illegal"]
    assert "ValueError: kaput" in faults[0][1] and "test_play_local.py" in faults[0][1]
    assert "returned no play" in faults[1][1] and "you do not hold" in faults[2][1]
    assert result.forfeited == (True, False, False, False)
    assert [s.forfeit for s in summary.seats] == list(result.forfeited)
    told = [v for k, v in bots[0].log if k == "fault"]
    assert told == faults
    assert bots[0].acts == 3  # a forfeited seat is not asked again


def test_record_is_accepted_by_arena_replay(tmp_path):
    Greedy = load_bot_class(str(ROOT / "sample_bots" / "greedy"))
    for name, kw in {
        "seed": {"seed": 11},
        "deals": {"deals": rotated_deals(RuleSet.preset("hk"), ["r/0", "r/1"], 4)},
        "faults": {"seed": 12},
    }.items():
        path = tmp_path / f"{name}.jsonl"
        bots = [Recorder("r", junk_at=(1,)) if name == "faults" else Greedy()] + [
            Recorder(f"r/{i}") for i in range(3)
        ]
        rules = RuleSet.preset("hk").replace(match_end="hands", match_end_value=2)
        result = play_local(bots, rules, record=path, **kw)
        assert result.record == path
        proc = arena_main("replay", str(path), "--quiet")
        said = " ".join(proc.stdout.split())  # the console wraps long lines
        assert proc.returncode == 0, said + proc.stderr
        assert "all legal; record complete" in said
        assert f"{len(result.faults)} faults" in said
        assert f"scores {list(result.scores)}" in said


async def test_the_referee_and_play_local_write_the_same_record(tmp_path):
    """One format (``bigtwo.record``): the same seeded game recorded by a real referee and
    by ``play_local`` gives the same events, field for field and in the same order, but
    for what only one of them knows (the header's id, start time, bot names, sandbox and
    time control; each move's time; the referee's connection facts about a seat)."""
    rules = RuleSet.preset("hk").replace(match_end="hands", match_end_value=2)
    wire_path, local_path = tmp_path / "wire.jsonl", tmp_path / "local.jsonl"
    writer = RecordWriter(wire_path)
    try:
        await over_the_wire(rules, "rec", [Recorder(f"rec/{i}") for i in range(4)], record=writer)
    finally:
        writer.close()
    play_local([Recorder(f"rec/{i}") for i in range(4)], rules, seed="rec", record=local_path)
    wire = [e for _, e in read_events(wire_path)]
    local = [e for _, e in read_events(local_path)]
    assert [k for k in wire[0] if k != "time_control"] == list(local[0])
    for key in ("rules", "seed", "deals"):
        assert wire[0][key] == local[0][key]
    assert [e["type"] for e in wire] == [e["type"] for e in local]
    assert "deal" in {e["type"] for e in wire} and wire[-1]["type"] == "match_end"
    for w, lo in zip(wire[1:-1], local[1:-1], strict=True):
        w.pop("ms", None)
        lo.pop("ms", None)
        assert list(w) == list(lo) and w == lo
    assert wire[-1]["hands"] == local[-1]["hands"]
    for w, lo in zip(wire[-1]["seats"], local[-1]["seats"], strict=True):
        assert {k: w[k] for k in lo if k != "bot"} == {k: v for k, v in lo.items() if k != "bot"}


def test_defaults_and_errors():
    Random = load_bot_class(str(ROOT / "sample_bots" / "random"))
    result = play_local([Random, Random], seed=3)  # classes are made; hk for two players
    assert result.game.rules.players == 2 and sum(result.places) >= 3
    assert result.to_dict()["seats"][0]["bot"] == "random"
    greedy = str(ROOT / "sample_bots" / "greedy")  # where to find a bot, as bigtwo.run takes it
    assert play_local([greedy, Random], seed=3).names == ("greedy", "random")
    with pytest.raises(ValueError, match="3 bots for a 4-player game"):
        play_local([Random] * 3, "hk")
    with pytest.raises(ValueError, match="deals is a list of deals"):
        play_local([Random] * 4, deals=[["3D"], ["4D"], ["5D"], ["6D"]])
    with pytest.raises(TypeError, match="is not a bot"):
        play_local([object()] * 4)


def test_hands_is_a_count_as_on_the_command_line():
    """``hands=N`` plays N hands (``arena match --hands N``); explicit deals are
    ``deals=[...]``, and a list given as ``hands`` is refused with a word on why."""
    Random = load_bot_class(str(ROOT / "sample_bots" / "random"))
    result = play_local([Random] * 4, seed=5, hands=3)
    assert len(result.hands) == 3 and result.game.match_over
    assert result.game.rules.match_end == "hands" and result.game.rules.match_end_value == 3
    dealt = [deal(RuleSet.preset("hk"), "d", i) for i in range(2)]
    assert len(play_local([Random] * 4, deals=dealt).hands) == 2
    assert len(play_local([Random] * 4, deals=dealt, hands=2).hands) == 2
    assert len(play_local([Random] * 4, deals=iter(dealt)).hands) == 2  # any iterable
    with pytest.raises(TypeError, match=r"hands is a number of hands.*deals="):
        play_local([Random] * 4, hands=dealt)
    for wrong in (True, 2.0, "3"):
        with pytest.raises(TypeError, match="hands is a number of hands"):
            play_local([Random] * 4, hands=wrong)
    with pytest.raises(ValueError, match="hands must be at least 1"):
        play_local([Random] * 4, hands=0)
    with pytest.raises(ValueError, match="2 deals but hands=3"):
        play_local([Random] * 4, deals=dealt, hands=3)
    with pytest.raises(TypeError, match="deals is a list of deals"):
        play_local([Random] * 4, deals=5)


def test_strict_raises_the_bots_error_where_it_happened():
    class Boom(Bot):
        def act(self, observation):
            raise ValueError("kaput")

    class Junk(Bot):
        def act(self, observation):
            return 3.5

    class Cheat(Bot):
        def act(self, observation):
            return PASS  # the opening lead may not pass

    for bot, error in ((Boom, ValueError), (Junk, InvalidReturn), (Cheat, IllegalMoveError)):
        with pytest.raises(error):
            play_local([bot] * 4, strict=True)
        result = play_local([bot] * 4)  # not strict: faults, forfeits, the match ends
        assert result.game.match_over and result.faults and any(result.forfeited)


def test_play_local_needs_no_grpc():
    code = "import sys, bigtwo.local, bigtwo; print('grpc' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
