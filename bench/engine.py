"""Engine speed, per preset: random-play hands per second on one core, and microseconds per
``legal_moves()`` call for a leader holding 13 cards.

    python bench/engine.py [--seconds 3] [--json]

Targets (issue 2): at least 1,000 random hands/s for ``hk`` and a leading-13-card
``legal_moves()`` under 200 µs.  "cold" is the first call on a fresh deal (it generates every
combination of the hand); "warm" is a repeated call on the same position (the game keeps
each seat's combinations and narrows them as cards leave the hand, so this is what most
turns cost).  The process pins itself to one CPU where the OS allows, so the figures are for
one core.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

from bigtwo import PRESETS, Game, RuleSet, deal


def random_hands_per_second(rules: RuleSet, seconds: float) -> tuple[float, float]:
    rng = random.Random(1)
    hands = moves = 0
    start = time.perf_counter()
    while True:
        g = Game(rules, seed=hands)
        while not g.hand_over:
            g.apply(rng.choice(g.legal_moves()))
            moves += 1
        hands += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return hands / elapsed, moves / hands


def leading_legal_moves_us(rules: RuleSet, samples: int = 400) -> tuple[float, float, float]:
    """Median µs of (cold, warm) legal_moves() for a free lead with 13 cards, and the mean
    number of legal leads."""
    players = rules.players
    cold, warm, counts = [], [], []
    clock = time.perf_counter_ns
    for seed in range(samples):
        hands = deal(rules, seed)
        hands = [h[:13] for h in hands]
        g = Game.from_hands(rules, hands, leader=seed % players)
        t0 = clock()
        moves = g.legal_moves()
        t1 = clock()
        g.legal_moves()
        t2 = clock()
        cold.append((t1 - t0) / 1000)
        warm.append((t2 - t1) / 1000)
        counts.append(len(moves))
    return statistics.median(cold), statistics.median(warm), statistics.mean(counts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per preset (default 3)")
    parser.add_argument("--presets", nargs="*", default=list(PRESETS), choices=list(PRESETS))
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    pinned = None
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        pinned = cpu
    results = {}
    for name in args.presets:
        rules = RuleSet.preset(name)
        leading_legal_moves_us(rules, 50)  # warm up the interpreter's caches
        hps, mph = random_hands_per_second(rules, args.seconds)
        cold, warm, nleads = leading_legal_moves_us(rules)
        results[name] = {
            "random_hands_per_s": round(hps),
            "moves_per_hand": round(mph, 1),
            "lead13_legal_moves_cold_us": round(cold, 1),
            "lead13_legal_moves_warm_us": round(warm, 1),
            "lead13_legal_moves_count": round(nleads, 1),
        }
        if not args.json:
            print(
                f"{name:7} {hps:8.0f} random hands/s ({mph:.0f} moves/hand)   "
                f"legal_moves() leading 13 cards: {cold:6.1f} µs cold, {warm:5.1f} µs warm "
                f"({nleads:.0f} moves)",
                flush=True,
            )
    info = {
        "python": sys.version.split()[0],
        "pinned_cpu": pinned,
        "seconds_per_preset": args.seconds,
    }
    if args.json:
        print(json.dumps({"machine": info, "presets": results}))
    else:
        print(f"(Python {info['python']}, pinned to CPU {pinned}, {args.seconds:g} s per preset)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
