"""Sandbox costs, measured in one run:

- time from "start the bots" to all four connected (the last Hello), for docker (images
  built beforehand: a build is a one-off per bot version) and process;
- hands/s of the same match (four random bots, the same seed and hands) under inproc,
  process and docker.

    python bench/sandbox.py [--hands 40] [--repeat 3] [--json]

Targets (issue 4): four containers ready in under 2 s; docker within 20% of process in
hands/s once started.  Hands/s here is measured from the first deal to the end, so start-up
is not in it (it is the first figure).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time

from arena.bots import resolve
from arena.match import run_match
from arena.referee.session import MatchSession
from arena.referee.time_control import TimeControl
from arena.sandbox.containers import docker_client
from bigtwo import RuleSet


async def one_match(sandbox: str, hands: int) -> tuple[float | None, float]:
    rules = RuleSet.preset("hk").replace(match_end="hands", match_end_value=hands)
    bots = [resolve("random")] * 4
    marks: dict[str, float] = {}

    def on_hand_end(session: MatchSession, result) -> None:  # type: ignore[no-untyped-def]
        marks.setdefault("first_hand_end", time.perf_counter())
        marks["last_hand_end"] = time.perf_counter()

    summary = await run_match(bots, rules, 1, TimeControl(), sandbox, on_hand_end=on_hand_end)
    # hands/s after start-up: from the end of hand 1 to the end of the last hand
    span = marks["last_hand_end"] - marks["first_hand_end"]
    return summary.seats_ready_s, (hands - 1) / span


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3, help="matches per backend")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.hands < 2 or args.repeat < 1:
        parser.error("--hands must be ≥ 2 and --repeat ≥ 1")
    backends = ["inproc", "process"]
    if docker_client(timeout=5) is not None:
        backends.append("docker")
        asyncio.run(one_match("docker", 2))  # build the images before timing anything
    else:
        print("(no Docker engine answers: docker skipped)", file=sys.stderr)
    out: dict[str, dict] = {}
    for backend in backends:
        ready, rate = [], []
        for _ in range(args.repeat):
            r, hps = asyncio.run(one_match(backend, args.hands))
            if r is not None:
                ready.append(r)
            rate.append(hps)
        out[backend] = {
            "seats_ready_s": round(statistics.median(ready), 3) if ready else None,
            "hands_per_s": round(statistics.median(rate), 1),
        }
    if "docker" in out:
        out["docker_vs_process_hands_per_s"] = round(
            out["docker"]["hands_per_s"] / out["process"]["hands_per_s"], 3
        )
    if args.json:
        print(json.dumps(out))
        return 0
    for backend in backends:
        o = out[backend]
        ready = f"{o['seats_ready_s']:.3f} s" if o["seats_ready_s"] is not None else "-"
        print(
            f"{backend:8} four bots connected in {ready:>9}   {o['hands_per_s']:7.1f} hands/s "
            f"(median of {args.repeat}, {args.hands} hands each)"
        )
    if "docker" in out:
        print(
            f"docker / process hands/s: {out['docker_vs_process_hands_per_s']} "
            "(target >= 0.8); docker ready target < 2 s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
