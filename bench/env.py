"""Environment speed: PettingZoo AEC steps per second with random masked actions, on one
core, per rule set.

    nice -n 19 python bench/env.py [--seconds 5] [--json]

Target (issue 14): at least 20,000 steps/s for ``hk`` on one core.  The rate is counted
per second of this process's CPU time (what a core of its own would give; on a shared
machine the wall-clock rate is lower and is printed beside it).  A step is what a
training loop does for every move: ``env.last()`` (the observation vector and the action
mask of the seat to move), a uniformly random index among the mask's ones, ``env.step``.
The dead steps at the end of each hand (one per agent, action ``None``) are run but not
counted.  ``env()`` is the wrapped environment (PettingZoo's order enforcing wrapper, as
its classic games come); ``raw_env`` skips that wrapper.  The process pins itself to one
CPU where the OS allows, as bench/engine.py does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import numpy as np

from bigtwo.env import env, raw_env


def steps_per_second(e: Any, seconds: float) -> tuple[float, float, float]:
    """``(steps per CPU second, steps per wall second, steps per hand)`` of random masked
    play on ``e`` for ``seconds`` of CPU time."""
    rng = np.random.default_rng(1)
    e.reset(seed=1)
    steps = hands = 0
    start = time.perf_counter()
    cpu = time.process_time()
    while True:
        e.reset()
        for _agent in e.agent_iter():
            obs, _reward, terminated, truncated, _info = e.last()
            if terminated or truncated:
                e.step(None)
                continue
            legal = obs["action_mask"].nonzero()[0]
            e.step(int(legal[rng.integers(len(legal))]))
            steps += 1
        hands += 1
        used = time.process_time() - cpu
        if used >= seconds:
            wall = time.perf_counter() - start
            return steps / used, steps / wall, steps / hands


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per configuration")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
    configs: list[tuple[str, Any]] = [
        ("hk raw_env", raw_env("hk")),
        ("hk env()", env("hk")),
        ("family", raw_env("family")),
        ("pusoy", raw_env("pusoy")),
        ("hk 3 players", raw_env({"preset": "hk", "players": 3})),
        ("hk 2 players", raw_env({"preset": "hk", "players": 2})),
    ]
    results = {}
    for name, e in configs:
        rate, wall_rate, per_hand = steps_per_second(e, args.seconds)
        results[name] = {
            "steps_per_cpu_s": round(rate),
            "steps_per_wall_s": round(wall_rate),
            "steps_per_hand": round(per_hand, 1),
        }
        if not args.json:
            print(
                f"{name:14s} {rate:8,.0f} steps/CPU s  {wall_rate:8,.0f} steps/wall s"
                f"  ({per_hand:.0f} steps a hand)",
                flush=True,
            )
    v = sys.version_info
    if args.json:
        print(json.dumps({"python": f"{v.major}.{v.minor}.{v.micro}", "results": results}))
    else:
        print(
            f"(Python {v.major}.{v.minor}.{v.micro}, one CPU, {args.seconds:g} CPU s each; "
            "steps per CPU second is the figure on a core of one's own)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
