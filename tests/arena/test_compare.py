"""`arena compare`: the sequential test on paired deals, end to end and statistically."""

import itertools
import json
import subprocess
import sys
from pathlib import Path

from arena.ladder.compare import engine_samples, run_engine_compare
from arena.ladder.sprt import SPRT
from bigtwo import RuleSet
from bigtwo.loader import load_bot_class

ROOT = Path(__file__).resolve().parents[2]
RAISER = str(ROOT / "tests" / "adversarial" / "bots" / "raiser.py")  # raises in every act()
RandomBot = load_bot_class(str(ROOT / "sample_bots" / "random"))


def compare(*args):
    return subprocess.run(
        [sys.executable, "-m", "arena", "compare", "--sandbox", "inproc", "--json", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_heuristic_is_better_than_random_within_its_budget():
    proc = compare("--elo1", "50", "--max-matches", "25", "heuristic", "random")
    assert proc.returncode == 0, proc.stderr
    verdict = json.loads(proc.stdout)
    assert verdict["decision"] == "better" and verdict["samples"] <= 100
    assert verdict["llr"] >= verdict["upper"] and verdict["elo_low"] > 0


def test_random_is_not_better_than_heuristic_within_its_budget():
    proc = compare("--elo1", "50", "--max-matches", "25", "random", "heuristic")
    assert proc.returncode == 1, proc.stderr
    verdict = json.loads(proc.stdout)
    assert verdict["decision"] == "not better" and verdict["llr"] <= verdict["lower"]


def test_undecided_at_the_budget_exits_2():
    proc = compare("--max-matches", "1", "--batch", "2", "random", "greedy")
    assert proc.returncode == 2 and json.loads(proc.stdout)["decision"] == "undecided"


def test_a_forfeit_stops_the_test():
    """The fallback that plays a forfeited seat is not the bot: a crashing NEW is not
    better (exit 1), a crashing OLD decides nothing (exit 2); both say why."""
    new_crashes = compare("--max-matches", "5", RAISER, "random")
    assert new_crashes.returncode == 1, new_crashes.stderr
    verdict = json.loads(new_crashes.stdout)
    assert verdict["decision"] == "not better" and "NEW (raiser) forfeited" in verdict["reason"]
    assert "RuntimeError: boom" in verdict["reason"]
    old_crashes = compare("--max-matches", "5", "random", RAISER)
    assert (
        old_crashes.returncode == 2 and "OLD (raiser)" in json.loads(old_crashes.stdout)["reason"]
    )


def test_bad_arguments_are_clear_errors():
    proc = compare("--elo0", "5", "--elo1", "5", "random", "greedy")
    assert proc.returncode == 2 and "elo1" in proc.stderr and "Traceback" not in proc.stderr
    proc = compare("--opponent", "random", "random", "greedy")
    assert proc.returncode == 2 and "1 opponents" in proc.stderr


def test_false_positive_rate_of_random_against_itself_stays_near_alpha():
    """The same bot twice, over a fixed set of seeds: "better" about alpha of the time."""
    rules = RuleSet.preset("hk")
    runs, better = 60, 0
    for run in range(runs):
        counter = itertools.count()

        def make(run=run, counter=counter):
            return RandomBot(seed=f"{run}/{next(counter)}")

        samples = engine_samples(make, make, [make, make, make], rules, f"fp/{run}")
        verdict = run_engine_compare(samples, SPRT(elo0=0, elo1=150, alpha=0.05), 400)
        better += verdict.decision == "better"
    assert better / runs <= 0.10  # alpha = 0.05 plus sampling error over 60 runs
