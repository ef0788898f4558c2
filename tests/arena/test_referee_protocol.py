"""The referee against hostile clients over a real Unix socket: wrong tokens, a second
stream for a seat, garbage, a 64 MiB message, floods of out-of-turn actions; and proof that
no bot ever receives another seat's cards."""

import asyncio
import contextlib
import shutil
import tempfile
from pathlib import Path

import grpc
import pytest

from arena.referee.service import RefereeServer
from arena.referee.session import MatchSession, SeatSpec
from arena.referee.time_control import TimeControl
from bigtwo import RuleSet, deal
from bigtwo.client import SeatView, decide, play_match
from bigtwo.loader import load_bot_class
from bigtwo.v1 import referee_pb2 as pb
from bigtwo.v1 import referee_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parents[2]
Greedy = load_bot_class(str(ROOT / "sample_bots" / "greedy"))
RULES = RuleSet.preset("hk").replace(match_end="hands", match_end_value=1)
TC = TimeControl(move_ms=2000, bank_ms=2000, startup_ms=5000, max_strikes=3)


class Arena:
    """A referee server with sessions, and honest bots for the seats a test does not drive."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="rt-")
        self.server = RefereeServer()
        self.address = self.server.listen_unix(Path(self.dir) / "r.sock")
        self.tasks: list[asyncio.Task] = []

    async def __aenter__(self):
        await self.server.start()
        return self

    async def __aexit__(self, *exc):
        for t in self.tasks:
            t.cancel()
            with contextlib.suppress(BaseException):
                await t
        await self.server.stop(0)
        shutil.rmtree(self.dir, ignore_errors=True)

    def session(self, seed=1, rules=RULES) -> MatchSession:
        s = MatchSession(rules, [SeatSpec(f"bot{i}") for i in range(4)], seed, TC)
        self.server.add(s)
        return s

    def start(self, honest=(1, 2, 3), **kw):
        """A session with its match running and honest bots in the ``honest`` seats."""
        session = self.session(**kw)
        runner = asyncio.create_task(session.run())
        self.honest(session, honest)
        return session, runner

    @contextlib.asynccontextmanager
    async def seat(self, session, seat=0, **opts):
        """A raw stream for ``seat``, already past its Hello."""
        async with self.channel(**opts) as ch:
            call = pb_grpc.RefereeStub(ch).Play()
            await call.write(hello(session, seat))
            yield call

    def honest(self, session, seats):
        for i in seats:
            tok = session.seats[i].spec.token
            self.tasks.append(
                asyncio.create_task(play_match(Greedy(), self.address, session.match_id, i, tok))
            )

    def channel(self, **opts):
        return grpc.aio.insecure_channel(self.address, options=list(opts.items()))


def hello(session, seat, token=None):
    tok = session.seats[seat].spec.token if token is None else token
    return pb.BotMessage(
        hello=pb.Hello(match_id=session.match_id, seat=seat, token=tok, protocol_version=1)
    )


async def first_reply(arena, *messages):
    """Open a stream, send messages, return the status code the referee ends it with."""
    async with arena.channel() as ch:
        call = pb_grpc.RefereeStub(ch).Play()
        for m in messages:
            await call.write(m)
        try:
            while await call.read() is not grpc.aio.EOF:
                pass
        except grpc.aio.AioRpcError as exc:
            return exc.code(), exc.details()
        return (await call.code()), ""


LIMIT_S = 60
"""Every scenario is bounded: a referee that hangs fails its test instead of the suite."""


@pytest.fixture
async def arena():
    """A live referee on a Unix socket of this test's own, stopped (and its bots' tasks
    cancelled) when the test ends."""
    async with Arena() as live:
        yield live


@pytest.fixture
async def match(arena):
    """A match session running on ``arena``, honest bots in seats 1-3, seat 0 left to the
    test: ``(session, runner)``, where ``runner`` is the task that returns its summary."""
    return arena.start()


@pytest.fixture
async def seat(arena, match):
    """Seat 0's raw stream of ``match``, already past its Hello."""
    async with arena.seat(match[0]) as call:
        yield call


def honest_seats_clean(summary, bad=0):
    for s in summary.seats:
        if s.seat != bad:
            assert s.faults == () and not s.forfeit


async def test_authentication_refusals_and_then_a_normal_match(arena):
    async with asyncio.timeout(LIMIT_S):
        session = arena.session()
        runner = asyncio.create_task(session.run())
        code, why = await first_reply(arena, hello(session, 0, session.seats[1].spec.token))
        assert code == grpc.StatusCode.UNAUTHENTICATED and "wrong token" in why
        code, _ = await first_reply(arena, pb.BotMessage(action=pb.Action(turn_id=1)))
        assert code == grpc.StatusCode.UNAUTHENTICATED
        other = pb.BotMessage(hello=pb.Hello(match_id="nope", seat=0, token="x"))
        assert (await first_reply(arena, other))[0] == grpc.StatusCode.NOT_FOUND
        code, _ = await first_reply(arena, hello(session, 7, token="x"))
        assert code == grpc.StatusCode.UNAUTHENTICATED
        arena.honest(session, range(4))
        summary = await runner
        honest_seats_clean(summary, bad=None)
        code, _ = await first_reply(arena, hello(session, 0))
        assert code in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ALREADY_EXISTS)


async def test_a_second_stream_for_a_seat_is_refused(arena):
    async with asyncio.timeout(LIMIT_S):
        session, runner = arena.start(honest=range(4))
        await session.started.wait()
        code, why = await first_reply(arena, hello(session, 2))
        assert code == grpc.StatusCode.ALREADY_EXISTS and "seat 2" in why
        honest_seats_clean(await runner, bad=None)


async def test_a_64_mib_message_cuts_only_that_seat_and_the_next_match_is_normal(arena):
    async with asyncio.timeout(LIMIT_S):
        session, runner = arena.start()
        async with arena.seat(session, **{"grpc.max_send_message_length": -1}) as call:
            big = pb.BotMessage(action=pb.Action(turn_id=1, error_detail="x" * (64 << 20)))
            with contextlib.suppress(Exception):
                await call.write(big)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                while await call.read() is not grpc.aio.EOF:
                    pass
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        summary = await runner
        honest_seats_clean(summary)
        bad = summary.seats[0]
        assert bad.forfeit and bad.faults[0].kind == "disconnect"
        _, runner = arena.start(honest=range(4), seed=2)
        honest_seats_clean(await runner, bad=None)


async def test_garbage_floods_and_out_of_turn_actions_are_faults(match, seat):
    session, runner = match
    async with asyncio.timeout(LIMIT_S):
        for i in range(200):  # out of turn, wrong turn ids, hellos again, empties
            msg = [
                pb.BotMessage(action=pb.Action(turn_id=10_000 + i)),
                hello(session, 0),
                pb.BotMessage(),
            ][i % 3]
            try:
                await seat.write(msg)
            except Exception:
                break
        with contextlib.suppress(grpc.aio.AioRpcError):
            while await seat.read() is not grpc.aio.EOF:
                pass
        summary = await runner
        honest_seats_clean(summary)
        bad = summary.seats[0]
        assert bad.forfeit
        assert {f.kind for f in bad.faults} <= {"protocol", "disconnect"}


async def test_raw_bytes_sent_to_a_bot_never_hold_another_seats_cards(arena):
    """Record every byte seat 0 receives; check every card id in it is one of its own, or
    one already played in public, at the moment it arrives."""

    async with asyncio.timeout(LIMIT_S):
        session, runner = arena.start(seed=5, rules=RULES.replace(match_end_value=3))
        received: list[bytes] = []
        async with arena.seat(session) as call:
            view = None
            bot = Greedy()
            while True:
                batch = await call.read()
                if batch is grpc.aio.EOF:
                    break
                received.append(batch.SerializeToString())
                for msg in batch.messages:
                    kind = msg.WhichOneof("msg")
                    if kind == "match_start":
                        view = SeatView(msg.match_start)
                    elif kind == "hand_start":
                        view.hand_start(msg.hand_start)
                    elif kind == "move":
                        view.move(msg.move)
                    elif kind == "turn":
                        obs = view.observation(msg.turn)
                        action = decide(bot, msg.turn.turn_id, obs)
                        await call.write(pb.BotMessage(action=action))
        summary = await runner
    assert len(summary.hands) == 3
    game_rules = RULES.replace(match_end_value=3)
    mine: set[int] = set()
    played: set[int] = set()
    seen_any = 0
    messages = [m for raw in received for m in pb.RefereeBatch.FromString(raw).messages]
    for msg in messages:
        kind = msg.WhichOneof("msg")
        body = getattr(msg, kind)
        if kind == "hand_start":
            mine = {int(c) for c in deal(game_rules, 5, body.hand)[0]}  # the seed's deal
            played = set()
            ids = set(body.cards)
            assert ids == mine
        elif kind == "move":
            played |= set(body.cards)
            ids = set(body.cards)
        elif kind == "turn":
            ids = set(body.to_beat) | ({body.must_include} - {-1})
        else:
            ids = set()
        assert ids <= mine | played, (kind, ids - mine - played)
        seen_any += len(ids)
    assert seen_any > 50
    for descriptor in pb.DESCRIPTOR.message_types_by_name.values():
        assert "seed" not in descriptor.fields_by_name


async def test_malformed_actions_are_protocol_faults(match, seat):
    """Card ids out of range, and an action that both passes and plays, on the seat's turn."""
    _, runner = match
    async with asyncio.timeout(LIMIT_S):
        bad = [
            pb.Action(cards=[99]),
            pb.Action(cards=[0], **{"pass": True}),
            pb.Action(error=7),
        ]
        sent = 0
        while True:
            batch = await seat.read()
            if batch is grpc.aio.EOF:
                break
            for msg in batch.messages:
                if msg.WhichOneof("msg") == "turn":
                    action = bad[sent % len(bad)]
                    action.turn_id = msg.turn.turn_id
                    await seat.write(pb.BotMessage(action=action))
                    sent += 1
        summary = await runner
    honest_seats_clean(summary)
    faults = summary.seats[0].faults
    assert [f.kind for f in faults] == ["protocol"] * 3
    assert "card id 99" in faults[0].detail
    assert "both passes and plays" in faults[1].detail
    assert "unknown error code 7" in faults[2].detail
    assert summary.seats[0].forfeit
