"""Ladder throughput and statistical efficiency.

1. Matches per minute of a real ladder (bots over gRPC, four deals × four rotations per
   match) for the process and docker sandboxes (docker when an engine answers and has the
   base image).
2. How many matches the ladder needs to rank the sample bots (heuristic > greedy > random)
   correctly 95% of the time, with duplicate deals versus independent random deals.  The
   matches are played by the engine in-process (the same bots and rules, no referee) into a
   pool, and ladders of m matches are resampled from it.

    python bench/ladder.py [--pool 160] [--resamples 200] [--json]

Target (issue 5): duplicate deals need at most half as many matches.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from arena.ladder.duplicate import rotated_deals
from arena.ladder.ratings import fit_plackett_luce
from bigtwo import Game, RuleSet, deal
from bigtwo.loader import load_bot_class

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["random", "greedy", "heuristic"]
TRUTH = ["heuristic", "greedy", "random"]
GROUP = ["random", "greedy", "heuristic", "random"]  # three bots fill four seats
DEALS, ROTATIONS = 4, 4


def bots():
    classes = {n: load_bot_class(str(ROOT / "sample_bots" / n)) for n in NAMES}
    return [classes[n]() for n in GROUP]


def play(rules: RuleSet, hands: list[list[int]], seats) -> list[int]:  # type: ignore[no-untyped-def]
    g = Game.from_hands(rules, hands)
    while not g.hand_over:
        g.apply(seats[g.turn].act(g.observation(g.turn)))
    return list(g.scores)


def duplicate_match(rules: RuleSet, k: int) -> list[dict[str, float]]:
    """One ladder match: DEALS deals × ROTATIONS rotations; a block per deal."""
    seats = bots()
    blocks = []
    deals = rotated_deals(rules, [f"bench/{k}/{i}" for i in range(DEALS)], ROTATIONS)
    for i in range(DEALS):
        totals: dict[str, float] = {}
        for hands in deals[i * ROTATIONS : (i + 1) * ROTATIONS]:
            for seat, score in enumerate(play(rules, hands, seats)):
                totals[GROUP[seat]] = totals.get(GROUP[seat], 0.0) + score / GROUP.count(
                    GROUP[seat]
                )
        blocks.append(totals)
    return blocks


def independent_match(rules: RuleSet, k: int) -> list[dict[str, float]]:
    """The same number of hands, each a fresh random deal in a random seating; every hand
    its own block."""
    rng = random.Random(f"bench-ind/{k}")
    seats = bots()
    blocks = []
    for i in range(DEALS * ROTATIONS):
        order = list(range(4))
        rng.shuffle(order)
        hands = deal(rules, f"bench-ind/{k}/{i}")
        scores = play(rules, [[int(c) for c in hands[order[s]]] for s in range(4)], seats)
        totals: dict[str, float] = {}
        for seat, score in enumerate(scores):
            totals[GROUP[seat]] = totals.get(GROUP[seat], 0.0) + score / GROUP.count(GROUP[seat])
        blocks.append(totals)
    return blocks


def matches_needed(pool: list[list[dict]], resamples: int, label: str) -> int | None:
    rng = random.Random(1)
    for m in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128):
        if m > len(pool):
            break
        ok = 0
        for _ in range(resamples):
            blocks = [b for match in rng.choices(pool, k=m) for b in match]
            fit = fit_plackett_luce(blocks, intervals=False)
            ok += [r.bot for r in fit.ratings] == TRUTH
        rate = ok / resamples
        print(f"  {label:11} {m:4d} matches: right order {rate:.0%}", file=sys.stderr, flush=True)
        if rate >= 0.95:
            return m
    return None


def throughput(sandbox: str, matches: int) -> float:
    """Matches per minute of `arena ladder run` (start-up included)."""
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "arena",
                "ladder",
                "run",
                "--db",
                f"{tmp}/b.db",
                "--sandbox",
                sandbox,
                "--rounds",
                str(matches),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=3600,
        )
        if proc.returncode != 0:
            raise SystemExit(f"ladder run failed: {proc.stderr.strip()[-300:]}")
        return matches / ((time.perf_counter() - start) / 60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", type=int, default=160, help="matches in each pool")
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--matches", type=int, default=8, help="matches per throughput run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.pool < 8 or args.resamples < 20 or args.matches < 1:
        parser.error("--pool ≥ 8, --resamples ≥ 20, --matches ≥ 1")
    rules = RuleSet.preset("hk")
    out: dict = {"matches_per_minute": {}}
    backends = ["process"]
    from arena.sandbox.containers import docker_client
    from arena.sandbox.images import DEFAULT_BASE

    client = docker_client(timeout=5)
    if client is not None:
        try:
            client.images.get(DEFAULT_BASE)
            backends.append("docker")
        except Exception:
            pass
    for backend in backends:
        out["matches_per_minute"][backend] = round(throughput(backend, args.matches), 1)
        print(
            f"{backend}: {out['matches_per_minute'][backend]} matches/minute "
            f"({DEALS} deals × {ROTATIONS} rotations, {os.cpu_count()} jobs)",
            file=sys.stderr,
            flush=True,
        )
    dup = [duplicate_match(rules, k) for k in range(args.pool)]
    ind = [independent_match(rules, k) for k in range(args.pool)]
    out["duplicate_matches_for_95pct"] = matches_needed(dup, args.resamples, "duplicate")
    out["independent_matches_for_95pct"] = matches_needed(ind, args.resamples, "independent")
    if args.json:
        print(json.dumps(out))
        return 0
    d, i = out["duplicate_matches_for_95pct"], out["independent_matches_for_95pct"]
    print(f"matches/minute: {out['matches_per_minute']}")
    print(
        f"matches to rank the sample bots right 95% of the time: duplicate {d}, "
        f"independent {i} (target: duplicate <= half of independent)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
