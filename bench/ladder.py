"""Ladder throughput and statistical efficiency.

1. Matches per minute of a real ladder (bots over gRPC, four deals × four rotations per
   match) for the process and docker sandboxes (docker when an engine answers and has the
   base image), played by a fixed field of fast sample bots (``--field``, by default
   random, greedy and heuristic: each answers in well under a millisecond), so that the
   figure is the arena's — its sandboxes, referee and store — and not a bot's thinking.
   The expert sample bot spends 100 ms a move: with it in the field (as in a ladder of all
   the sample bots) the run measured about 7 matches a minute, its search.
2. How many matches the ladder needs to rank a field correctly 95% of the time, with
   duplicate deals versus independent random deals.  Counted in matches of one deal
   (``--deals 1``: four hands), so that small differences show.  The hands are played by
   the engine in-process (the same bots and rules, no referee) into a pool of matches, and
   ladders of m matches are resampled from it; a logistic curve in log(m) fitted to the
   outcomes gives where 95% is crossed.  Both deal modes are rated two ways:
     - official: as the ladder rates them — a duplicate deal is one block of evidence
       holding every game's and every card set's order; without duplicate deals every
       hand is its own block;
     - totals: Plackett–Luce on each match's summed points.
   Two fields: the sample bots (heuristic > greedy > random, random filling the fourth
   seat) and a close field of four heuristic bots that play a random legal move
   0%, 10%, 25% or 50% of the time (stronger the less they do).

    python bench/ladder.py [--pool 800] [--resamples 200] [--matches 8] [--fields sample,close]
                             [--sandboxes process,docker] [--field random,greedy,heuristic]
                             [--baseline-python PY [--repeat 3]] [--json]

With ``--baseline-python``, throughput is measured alternately with this checkout and with
the ``arena`` that interpreter imports (another version in its own venv), ``--repeat``
times each, and the ratio of the medians printed: the machine is shared, so only a ratio
taken in one run means much.

Targets: duplicate deals need at most half as many matches (issue 5); throughput with a
fresh bot instance per rotation within 25% of the version before it (issue 8).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from curves import crossing

from arena.ladder.duplicate import block_rankings, rotated_deals
from arena.ladder.ratings import fit_plackett_luce
from bigtwo import Bot, RuleSet, deal, play_local
from bigtwo.loader import load_bot_class

ROOT = Path(__file__).resolve().parents[1]
ROTATIONS = 4
THROUGHPUT_DEALS = 4
FAST_FIELD = ("random", "greedy", "heuristic")
"""The throughput ladder's bots by default: sample bots that answer at once (three
entrants: one of them fills the fourth seat, as a ladder of three does)."""
GRID = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384)
Hand = dict[str, float]


class Erratic(Bot):
    """A bot that plays a random legal move with probability ``eps``, else asks ``base``."""

    def __init__(self, base, eps: float, seed: int) -> None:  # type: ignore[no-untyped-def]
        self.base, self.eps, self.rng = base, eps, random.Random(seed)

    def act(self, observation):  # type: ignore[no-untyped-def]
        if self.eps and self.rng.random() < self.eps:
            return self.rng.choice(observation.legal_moves)
        return self.base.act(observation)


def sample_field() -> tuple[list[str], list, list[str]]:
    classes = {
        n: load_bot_class(str(ROOT / "sample_bots" / n)) for n in ("random", "greedy", "heuristic")
    }
    seats = ["random", "greedy", "heuristic", "random"]
    bots = [  # the random bots seeded, so that a run can be repeated exactly
        classes[n](seed=f"bench/{i}") if n == "random" else classes[n]()
        for i, n in enumerate(seats)
    ]
    return seats, bots, ["heuristic", "greedy", "random"]


def close_field() -> tuple[list[str], list, list[str]]:
    heuristic = load_bot_class(str(ROOT / "sample_bots" / "heuristic"))
    eps = [0.0, 0.1, 0.25, 0.5]
    names = [f"heuristic~{round(e * 100)}%" for e in eps]
    return names, [Erratic(heuristic(), e, i) for i, e in enumerate(eps)], names


FIELDS: dict[str, Callable[[], tuple[list[str], list, list[str]]]] = {
    "sample": sample_field,
    "close": close_field,
}


def play(rules: RuleSet, hands: list[list[int]], seats: list) -> list[float]:
    """One hand, played in-process (:func:`bigtwo.play_local`); each seat's points."""
    return [float(x) for x in play_local(seats, rules, deals=[hands]).scores]


def per_entrant(names: list[str], scores: list[float]) -> Hand:
    """Seat points as entrant points (the mean of its seats when it holds several)."""
    out: dict[str, list[float]] = {}
    for name, score in zip(names, scores, strict=True):
        out.setdefault(name, []).append(score)
    return {name: sum(v) / len(v) for name, v in out.items()}


def summed(hands: list[Hand]) -> Hand:
    total: Hand = {}
    for hand in hands:
        for bot, points in hand.items():
            total[bot] = total.get(bot, 0.0) + points
    return total


Match = dict[str, list]
"""One pooled match: rating → the blocks it gives that rating."""


def pools(rules: RuleSet, field: str, size: int) -> dict[str, list[Match]]:
    """``size`` matches of one deal each way: duplicate (the deal in all four rotations)
    and independent (four fresh deals, each in a random seating), each ready for both
    ratings: ``official`` — what the ladder rates (a duplicate block's game and card-set
    orders; with independent deals every hand is its own block, as a ladder without
    duplicate deals would rate it) — and ``totals`` (the match's summed points)."""
    names, seats, _ = FIELDS[field]()
    dup: list[Match] = []
    ind: list[Match] = []
    for k in range(size):
        rows = [play(rules, h, seats) for h in rotated_deals(rules, [f"{field}/{k}"], ROTATIONS)]
        hands = [per_entrant(names, r) for r in rows]
        dup.append(
            {"official": [block_rankings(names, rows, ROTATIONS)], "totals": [summed(hands)]}
        )
        rng = random.Random(f"ind/{field}/{k}")
        hands = []
        for i in range(ROTATIONS):
            cards = deal(rules, f"ind/{field}/{k}/{i}")
            order = rng.sample(range(4), 4)
            scores = play(rules, [[int(c) for c in cards[o]] for o in order], seats)
            hands.append(per_entrant(names, scores))
        ind.append({"official": hands, "totals": [summed(hands)]})
    return {"duplicate": dup, "independent": ind}


def right_order(matches: list[Match], rating: str, truth: list[str]) -> bool:
    fit = fit_plackett_luce([b for m in matches for b in m[rating]], intervals=False)
    return [r.bot for r in fit.ratings] == truth


def matches_needed(
    pool: list[Match], rating: str, truth: list[str], resamples: int, label: str
) -> float | None:
    rng = random.Random(f"resample/{label}")
    points: list[tuple[int, bool]] = []
    for m in GRID:
        if m > len(pool) // 2:
            break
        got = [right_order(rng.choices(pool, k=m), rating, truth) for _ in range(resamples)]
        points += [(m, ok) for ok in got]
        rate = sum(got) / resamples
        print(f"    {label:30} {m:3d} matches: right order {rate:.0%}", file=sys.stderr, flush=True)
        if rate >= 0.99:
            break
    return crossing(points, 0.95)


def wrong_separations(
    pool: list[Match], truth: list[str], sizes: list[int], resamples: int
) -> dict:
    """How honest the leaderboard's separation is on real games: over resampled ladders,
    the pairs it calls separated (``Fit.separated``: P(stronger) ≥ 0.975), and how many of
    those are in the wrong order (at most 2.5% is the issue's bound)."""
    rng = random.Random("calibration")
    separated = wrong = 0
    for m in sizes:
        for _ in range(resamples):
            fit = fit_plackett_luce([b for x in rng.choices(pool, k=m) for b in x["official"]])
            rated = fit.by_bot()
            for i, a in enumerate(truth):
                for b in truth[i + 1 :]:
                    if fit.separated(a, b):
                        separated += 1
                        wrong += int(rated[a].elo < rated[b].elo)  # int: --json
    return {"separated_pairs": separated, "wrong_order": wrong, "sizes": sizes}


def field_specs(field: list[str]) -> list[str]:
    """The bots as ``arena ladder run`` takes them: a sample bot's name as this checkout's
    folder (so that a baseline interpreter plays the very same bots), anything else as
    given (a path)."""
    return [
        str(ROOT / "sample_bots" / b) if (ROOT / "sample_bots" / b).is_dir() else b for b in field
    ]


def throughput(
    sandbox: str, matches: int, python: str = sys.executable, field: list[str] | None = None
) -> float:
    """Matches per minute of `arena ladder run` (start-up included) on ``field`` (by default
    :data:`FAST_FIELD`), with the ``arena`` that ``python`` imports (run from outside this
    checkout, so that its own is found)."""
    import subprocess

    bots = field_specs(list(field or FAST_FIELD))

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        proc = subprocess.run(
            [
                python,
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
                "--deals",
                str(THROUGHPUT_DEALS),
                "--json",
                *bots,
            ],
            capture_output=True,
            text=True,
            timeout=3600,
            cwd=tmp,
        )
        if proc.returncode != 0:
            raise SystemExit(f"ladder run failed: {proc.stderr.strip()[-300:]}")
        return matches / ((time.perf_counter() - start) / 60)


def against_baseline(
    sandbox: str, matches: int, baseline: str, repeat: int, field: list[str]
) -> dict:
    """Throughput of this checkout and of the baseline's, run alternately; medians and
    their ratio."""
    import statistics

    runs: dict[str, list[float]] = {"this": [], "baseline": []}
    for _ in range(max(1, repeat)):
        for which, python in (("baseline", baseline), ("this", sys.executable)):
            runs[which].append(round(throughput(sandbox, matches, python, field), 1))
            print(f"{sandbox} {which}: {runs[which][-1]} matches/minute", file=sys.stderr)
    this, base = statistics.median(runs["this"]), statistics.median(runs["baseline"])
    print(
        f"{sandbox}: {this} matches/minute against {base} (median of {repeat}): {this / base:.2f}x",
        file=sys.stderr,
        flush=True,
    )
    return {"this": this, "baseline": base, "ratio": round(this / base, 3), "runs": runs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pool",
        type=int,
        default=800,
        help="one-deal matches in each pool (ladders use up to half)",
    )
    parser.add_argument("--resamples", type=int, default=200, help="ladders per size")
    parser.add_argument(
        "--fields",
        default=",".join(FIELDS),
        help=f"which fields to measure, comma-separated ({', '.join(FIELDS)}; empty: none)",
    )
    parser.add_argument(
        "--matches", type=int, default=8, help="matches per throughput run (0: skip it)"
    )
    parser.add_argument(
        "--baseline-python",
        help="an interpreter whose `arena` is the version to compare with (its own venv)",
    )
    parser.add_argument(
        "--sandboxes", help="which sandboxes to time, comma-separated (default: all available)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="alternate runs per version")
    parser.add_argument(
        "--field",
        default=",".join(FAST_FIELD),
        help="the throughput ladder's bots, comma-separated: sample bot names or bot paths "
        f"(default: {','.join(FAST_FIELD)}, fast bots; add expert to include its 100 ms a "
        "move, which then dominates the figure)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    fields = [f for f in args.fields.split(",") if f]
    field = [b for b in args.field.split(",") if b]
    if len(set(field)) < 2:
        parser.error("--field: at least two distinct bots")
    if args.pool < 20 or args.resamples < 20 or args.matches < 0:
        parser.error("--pool ≥ 20, --resamples ≥ 20, --matches ≥ 0")
    if unknown := [f for f in fields if f not in FIELDS]:
        parser.error(f"--fields: unknown {', '.join(unknown)} (choose from {', '.join(FIELDS)})")
    rules = RuleSet.preset("hk")
    out: dict = {"matches_per_minute": {}, "throughput_field": field}
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
    if args.sandboxes:
        wanted = [b for b in args.sandboxes.split(",") if b]
        if missing := [b for b in wanted if b not in backends]:
            parser.error(f"--sandboxes: {', '.join(missing)} not available here ({backends})")
        backends = wanted
    for backend in backends if args.matches else []:
        if args.baseline_python:
            out.setdefault("against_baseline", {})[backend] = against_baseline(
                backend, args.matches, args.baseline_python, args.repeat, field
            )
            out["matches_per_minute"][backend] = out["against_baseline"][backend]["this"]
            continue
        out["matches_per_minute"][backend] = round(
            throughput(backend, args.matches, field=field), 1
        )
        print(
            f"{backend}: {out['matches_per_minute'][backend]} matches/minute "
            f"({THROUGHPUT_DEALS} deals × {ROTATIONS} rotations, {os.cpu_count()} jobs, "
            f"field {','.join(field)})",
            file=sys.stderr,
            flush=True,
        )
    table = []
    for field in fields:
        print(f"  field {field}: playing {args.pool} matches each way", file=sys.stderr, flush=True)
        made = pools(rules, field, args.pool)
        truth = FIELDS[field]()[2]
        for rating in ("official", "totals"):
            need = {
                mode: matches_needed(
                    made[mode], rating, truth, args.resamples, f"{field} {rating} {mode}"
                )
                for mode in made
            }
            table.append({"field": field, "rating": rating, **need})
        sizes = [m for m in (1, 2, 4, 16, 48, 96) if m <= args.pool // 2]
        calib = wrong_separations(made["duplicate"], truth, sizes, args.resamples // 2)
        out.setdefault("interval_check", {})[field] = calib
        print(
            f"    {field}: separated (P ≥ 0.975) {calib['separated_pairs']} pairs, "
            f"{calib['wrong_order']} of them in the wrong order",
            file=sys.stderr,
            flush=True,
        )
    out["matches_for_95pct"] = table
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"matches/minute ({', '.join(field)}): {out['matches_per_minute']}")
    if not table:
        return 0
    print("matches of one deal (4 hands) to rank the field right 95% of the time:")
    print(f"  {'field':7} {'rating':8} {'duplicate':>9} {'independent':>11}  ratio")
    fmt = lambda v: f"{v:.1f}" if v else f"> {GRID[-1]}"  # noqa: E731
    for row in table:
        d, i = row["duplicate"], row["independent"]
        ratio = f"{i / d:.2f}x" if d and i else "-"
        print(f"  {row['field']:7} {row['rating']:8} {fmt(d):>9} {fmt(i):>11}  {ratio}")
    print("target: duplicate <= half of independent (ratio >= 2) with the official rating")
    for field, c in out["interval_check"].items():
        print(
            f"{field}: official 95% intervals on resampled duplicate ladders of "
            f"{'/'.join(map(str, c['sizes']))} matches separated {c['separated_pairs']} pairs, "
            f"{c['wrong_order']} in the wrong order (bound: 2.5%)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
