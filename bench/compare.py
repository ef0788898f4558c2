"""How many deals `arena compare` takes to decide: Wald's prediction against measurement.

    python bench/compare.py [--runs 60] [--pilot 1000] [--synthetic-runs 1000] [--json]

`arena compare` prints, before it starts, the average number of deals its sequential test
needs at its bounds (:meth:`arena.ladder.sprt.SPRT.expected_samples`, Wald's average sample
number in the test's own normal model).  This script checks that prediction two ways:

1. engine: the compare test run to its decision (no budget) on samples from the engine
   in-process (``engine_samples``: the same paired deals, rotations and opponents — the
   sample bots — as the command, without the referee), ``--runs`` times per setting, on
   fresh seeds each run.  The prediction needs NEW's true normalized Elo: 0 for a bot
   against itself, otherwise estimated from ``--pilot`` separate samples (its 95% interval
   gives the prediction's range).
2. synthetic: the same test on normal (and skewed, centred-exponential) samples whose
   normalized effect is known exactly, ``--synthetic-runs`` times per setting — including
   the old default bounds (elo1 10, docs/ratings.md), where a decision takes thousands of deals.

For each setting: predicted and measured mean deals to a decision (± its standard error),
the share of runs decided within 1× and 2× the prediction (the command suggests a budget of
twice the expected count: about 9 runs in 10 decide within it), and how often the verdict
was "better".
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import time
from pathlib import Path

from arena.ladder.compare import engine_samples, run_engine_compare
from arena.ladder.sprt import NELO_SCALE, SPRT
from bigtwo import RuleSet
from bigtwo.loader import load_bot_class

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ("random", "greedy", "heuristic")
ENGINE_SETTINGS = [  # NEW, OLD, elo0, elo1
    ("random", "random", 0.0, 150.0),
    ("heuristic", "random", 0.0, 50.0),
    ("heuristic", "greedy", 0.0, 100.0),
]
SYNTHETIC_SETTINGS = [  # elo0, elo1, true normalized Elo, distribution, runs (× --synthetic-runs)
    (0.0, 50.0, 0.0, "normal", 1.0),
    (0.0, 50.0, 25.0, "normal", 1.0),
    (0.0, 50.0, 50.0, "normal", 1.0),
    (0.0, 50.0, 330.0, "normal", 1.0),
    (0.0, 50.0, 0.0, "skewed", 1.0),
    (0.0, 50.0, 50.0, "skewed", 1.0),
    (0.0, 10.0, 0.0, "normal", 0.1),
    (0.0, 10.0, 186.0, "normal", 0.1),
]


def factories(seed: str):  # type: ignore[no-untyped-def]
    """Bot factories by name; random bots get distinct seeds (runs repeat exactly)."""
    classes = {n: load_bot_class(str(ROOT / "sample_bots" / n)) for n in SAMPLE}
    counter = itertools.count()

    def make(name: str):  # type: ignore[no-untyped-def]
        if name == "random":
            return lambda: classes[name](seed=f"{seed}/{next(counter)}")
        return classes[name]

    return make


def summarize(ns: list[int], decisions: list[str], predicted: float) -> dict:
    runs = len(ns)
    mean = statistics.mean(ns)
    return {
        "predicted": round(predicted, 1),
        "measured": round(mean, 1),
        "stderr": round(statistics.stdev(ns) / runs**0.5, 1) if runs > 1 else None,
        "ratio": round(mean / predicted, 3),
        "within_1x": round(sum(n <= predicted for n in ns) / runs, 3),
        "within_2x": round(sum(n <= 2 * predicted for n in ns) / runs, 3),
        "better": round(decisions.count("better") / runs, 3),
        "runs": runs,
    }


def engine(runs: int, pilot: int, cap: int) -> list[dict]:
    rules = RuleSet.preset("hk")
    out = []
    for new, old, elo0, elo1 in ENGINE_SETTINGS:
        started = time.perf_counter()
        make = factories(f"bench/{new}/{old}")
        pool = [make(n) for n in SAMPLE]
        if new == old:
            true, half = 0.0, 0.0
        else:
            xs = list(
                itertools.islice(
                    engine_samples(make(new), make(old), pool, rules, f"pilot/{new}/{old}"), pilot
                )
            )
            true = NELO_SCALE * statistics.mean(xs) / statistics.stdev(xs)
            half = NELO_SCALE * 1.959964 / len(xs) ** 0.5
        test = SPRT(elo0=elo0, elo1=elo1)
        # the prediction over the true value's interval (not monotone: slowest in between)
        spread = [test.expected_samples(true + half * (i / 20 - 1)) for i in range(41)]
        ns, decisions = [], []
        for run in range(runs):
            samples = engine_samples(make(new), make(old), pool, rules, f"run/{new}/{old}/{run}")
            verdict = run_engine_compare(samples, SPRT(elo0=elo0, elo1=elo1), cap)
            ns.append(verdict.samples)
            decisions.append(verdict.decision)
        row = {
            "setting": f"{new} vs {old}, --elo0 {elo0:g} --elo1 {elo1:g}",
            "true_nelo": round(true, 1),
            "true_nelo_95": [round(true - half, 1), round(true + half, 1)],
            **summarize(ns, decisions, test.expected_samples(true)),
            "predicted_range": [round(min(spread), 1), round(max(spread), 1)],
            "seconds": round(time.perf_counter() - started, 1),
        }
        out.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    return out


def synthetic(runs: int, cap: int) -> list[dict]:
    out = []
    for elo0, elo1, true, dist, share in SYNTHETIC_SETTINGS:
        rng = random.Random(f"{elo0}/{elo1}/{true}/{dist}")
        t = true / NELO_SCALE
        n_runs = max(10, int(runs * share))
        ns, decisions = [], []
        for _ in range(n_runs):
            if dist == "normal":
                samples = (rng.gauss(t, 1.0) for _ in itertools.count())
            else:  # mean t, standard deviation 1, a long right tail
                samples = (t + rng.expovariate(1.0) - 1.0 for _ in itertools.count())
            verdict = run_engine_compare(samples, SPRT(elo0=elo0, elo1=elo1), cap)
            ns.append(verdict.samples)
            decisions.append(verdict.decision)
        predicted = SPRT(elo0=elo0, elo1=elo1).expected_samples(true)
        row = {
            "setting": f"{dist}, --elo0 {elo0:g} --elo1 {elo1:g}",
            "true_nelo": true,
            **summarize(ns, decisions, predicted),
        }
        out.append(row)
    return out


def table(title: str, rows: list[dict]) -> None:
    print(f"\n{title}")
    print(
        f"{'setting':<44} {'true nElo':>16} {'predicted':>16} {'measured':>14} "
        f"{'ratio':>6} {'≤1×':>5} {'≤2×':>5} {'better':>6}"
    )
    for r in rows:
        true = f"{r['true_nelo']:+.0f}"
        if "true_nelo_95" in r and r["true_nelo_95"][0] != r["true_nelo_95"][1]:
            true += f" ({r['true_nelo_95'][0]:+.0f}..{r['true_nelo_95'][1]:+.0f})"
        predicted = f"{r['predicted']:.1f}"
        if "predicted_range" in r and r["predicted_range"][0] != r["predicted_range"][1]:
            predicted += f" ({r['predicted_range'][0]:.0f}..{r['predicted_range'][1]:.0f})"
        measured = f"{r['measured']:.1f} ± {r['stderr']:.1f}"
        print(
            f"{r['setting']:<44} {true:>16} {predicted:>16} {measured:>14} {r['ratio']:>6.2f} "
            f"{r['within_1x']:>5.2f} {r['within_2x']:>5.2f} {r['better']:>6.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=60, help="compare runs per engine setting")
    parser.add_argument("--pilot", type=int, default=1000, help="samples to estimate true nElo")
    parser.add_argument("--synthetic-runs", type=int, default=1000)
    parser.add_argument("--cap", type=int, default=100_000, help="samples before giving up")
    parser.add_argument("--skip-engine", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = {"synthetic": synthetic(args.synthetic_runs, args.cap)}
    if not args.skip_engine:
        results["engine"] = engine(args.runs, args.pilot, args.cap)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    table("synthetic samples (normalized Elo known exactly)", results["synthetic"])
    if "engine" in results:
        table("engine samples, sample bots as opponents (hk)", results["engine"])


if __name__ == "__main__":
    main()
