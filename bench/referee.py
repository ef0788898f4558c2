"""Referee speed, measured in one run on this machine:

(a) the transport's floor: a bare grpc.aio bidirectional ping-pong over a Unix socket,
    server → client a message the size of a typical turn batch (three moves and a turn
    request), client → server an Action-sized one, the client a separate process, timed
    at the server as the referee times a turn; and the same ping-pong through the seat
    gates the referee puts in front of gRPC (arena.referee.gate), the relay's cost;
(b) the referee's round trip per move (turn request sent → action received) with four
    random bots as separate processes (process sandbox), median and p99;
(c) hands/s of whole matches over gRPC, beside the in-process engine's random hands/s.

    python bench/referee.py [--pings 3000] [--hands 60] [--json]

Target (issue 3): (b) median ≤ 1.5 × (a) median, and (b) p99 ≤ 3 × (a) p99.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import grpc

from arena.bots import resolve
from arena.match import run_match
from arena.referee.gate import SeatGate
from arena.referee.time_control import TimeControl
from bigtwo import Game, RuleSet
from bigtwo.v1 import referee_pb2 as pb
from bigtwo.v1 import referee_pb2_grpc as pb_grpc


def _move(seat: int, cards: list[int]) -> pb.RefereeMessage:
    category = "single" if len(cards) == 1 else "pair"
    return pb.RefereeMessage(move=pb.MoveEvent(hand=2, seat=seat, cards=cards, category=category))


# What a seat receives when asked to act in a 4-player game: the other three seats' moves
# since its last turn, then the turn request (the referee batches them in one message).
TURN = pb.RefereeBatch(
    messages=[
        _move(1, [40]),
        _move(2, [45]),
        _move(3, [49]),
        pb.RefereeMessage(
            turn=pb.TurnRequest(
                turn_id=123,
                hand=2,
                move_ms_left=1000,
                bank_ms_left=9000,
                to_beat=[49],
                must_include=-1,
                cards_left=[9, 7, 11, 8],
                first_trick=False,
                locked_out=[],
            )
        ),
    ]
)
TURN_INDEX = len(TURN.messages) - 1

CLIENT = r"""
import asyncio, sys, grpc
from bigtwo.v1 import referee_pb2 as pb, referee_pb2_grpc as pb_grpc
async def main(address):
    async with grpc.aio.insecure_channel(address) as ch:
        call = pb_grpc.RefereeStub(ch).Play()
        await call.write(pb.BotMessage(hello=pb.Hello(match_id="ping", seat=0, token="t")))
        while True:
            msg = await call.read()
            if msg is grpc.aio.EOF:
                return
            await call.write(pb.BotMessage(action=pb.Action(turn_id=msg.messages[-1].turn.turn_id,
                                                             cards=[50])))
asyncio.run(main(sys.argv[1]))
"""


class PingPong(pb_grpc.RefereeServicer):
    """Pings its clients in turn, like a referee asking seats to move in rotation."""

    def __init__(self, n: int, peers: int) -> None:
        self.n = n
        self.peers = peers
        self.times: list[float] = []
        self.contexts: list = []
        self.all_in = asyncio.Event()
        self.done = asyncio.Event()

    async def Play(self, request_iterator, context):
        await context.read()  # hello
        self.contexts.append(context)
        if len(self.contexts) == self.peers:
            self.all_in.set()
        await self.done.wait()

    async def run(self) -> None:
        await self.all_in.wait()
        for i in range(self.n):
            context = self.contexts[i % self.peers]
            TURN.messages[TURN_INDEX].turn.turn_id = i
            t0 = time.perf_counter()
            await context.write(TURN)
            await context.read()
            self.times.append((time.perf_counter() - t0) * 1000)
        self.done.set()


async def bare_ping_pong(n: int, peers: int, gated: bool = False) -> list[float]:
    """Round trips of a bare ping-pong with ``peers`` client processes answering in turn
    (``gated``: each through its own seat gate, as in a match)."""
    folder = tempfile.mkdtemp(prefix="bench-")
    address = f"unix://{folder}/p.sock"
    server = grpc.aio.server()
    service = PingPong(n, peers)
    pb_grpc.add_RefereeServicer_to_server(service, server)
    server.add_insecure_port(address)
    await server.start()
    gates = [SeatGate(Path(folder) / f"g{i}.sock", f"{folder}/p.sock") for i in range(peers)]
    for gate in gates:
        gate.start()
    targets = [f"unix://{g.path}" for g in gates] if gated else [address] * peers
    procs = [
        await asyncio.create_subprocess_exec(sys.executable, "-c", CLIENT, target)
        for target in targets
    ]
    await asyncio.wait_for(service.run(), 300)
    await server.stop(0.5)
    for gate in gates:
        gate.close()
    for proc in procs:
        await proc.wait()
    shutil.rmtree(folder, ignore_errors=True)
    return service.times[min(200, n // 10) :]  # drop the warm-up


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(len(s) * q))]


def engine_hands_per_second(seconds: float = 2.0) -> float:
    rules = RuleSet.preset("hk")
    rng = random.Random(1)
    hands = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        g = Game(rules, seed=hands)
        while not g.hand_over:
            g.apply(rng.choice(g.legal_moves()))
        hands += 1
    return hands / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pings", type=int, default=3000, help="ping-pong round trips")
    parser.add_argument("--hands", type=int, default=60, help="hands in the gRPC match")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.pings < 100 or args.hands < 1:
        parser.error("--pings must be ≥ 100 and --hands ≥ 1")

    bare1 = asyncio.run(bare_ping_pong(args.pings, 1))
    bare4 = asyncio.run(bare_ping_pong(args.pings, 4))
    gated1 = asyncio.run(bare_ping_pong(args.pings, 1, gated=True))
    gated4 = asyncio.run(bare_ping_pong(args.pings, 4, gated=True))
    rules = RuleSet.preset("hk").replace(match_end="hands", match_end_value=args.hands)
    bots = [resolve("random")] * 4
    start = time.perf_counter()
    summary = asyncio.run(run_match(bots, rules, 1, TimeControl(), "process"))
    match_s = time.perf_counter() - start
    rt = summary.turn_round_trip
    engine = engine_hands_per_second()

    def floor(times: list[float]) -> dict:
        return {
            "median": round(statistics.median(times), 3),
            "p99": round(pct(times, 0.99), 3),
            "n": len(times),
        }

    out = {
        "bare_ping_pong_1_peer_ms": floor(bare1),
        "bare_ping_pong_4_peers_ms": floor(bare4),
        "gated_ping_pong_1_peer_ms": floor(gated1),
        "gated_ping_pong_4_peers_ms": floor(gated4),
        "referee_round_trip_ms": {"median": rt["median_ms"], "p99": rt["p99_ms"], "n": rt["n"]},
        "grpc_hands_per_s": round(args.hands / match_s, 1),
        "grpc_match_seconds_including_startup": round(match_s, 2),
        "engine_hands_per_s": round(engine),
    }
    for key, times, gated in (("1_peer", bare1, gated1), ("4_peers", bare4, gated4)):
        out[f"ratio_median_{key}"] = round(rt["median_ms"] / statistics.median(times), 2)
        out[f"ratio_p99_{key}"] = round(rt["p99_ms"] / pct(times, 0.99), 2)
        out[f"gate_cost_median_{key}"] = round(
            statistics.median(gated) / statistics.median(times), 2
        )
    if args.json:
        print(json.dumps(out))
        return 0
    r = out["referee_round_trip_ms"]
    for key, label in (("1_peer", "1 client process"), ("4_peers", "4 client processes in turn")):
        b = out[f"bare_ping_pong_{key}_ms"]
        print(
            f"(a) bare grpc.aio ping-pong, Unix socket, {label}: median {b['median']:.3f} ms, "
            f"p99 {b['p99']:.3f} ms  ({b['n']} round trips)"
        )
        g = out[f"gated_ping_pong_{key}_ms"]
        print(
            f"    the same through seat gates: median {g['median']:.3f} ms, p99 "
            f"{g['p99']:.3f} ms  (median {out[f'gate_cost_median_{key}']}x the bare one)"
        )
    print(
        f"(b) referee round trip per move, 4 random bots as processes: median "
        f"{r['median']:.3f} ms, p99 {r['p99']:.3f} ms  ({r['n']} moves)"
    )
    for key, label in (("1_peer", "1 client"), ("4_peers", "4 clients")):
        print(
            f"    ratio to (a) with {label}: median {out[f'ratio_median_{key}']}x "
            f"(target <= 1.5), p99 {out[f'ratio_p99_{key}']}x (target <= 3)"
        )
    print(
        f"(c) hands/s over gRPC: {out['grpc_hands_per_s']} ({args.hands} hands in "
        f"{match_s:.1f} s, bot start-up included); in-process engine: "
        f"{out['engine_hands_per_s']} random hands/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
