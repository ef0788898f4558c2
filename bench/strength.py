"""How strong a bot is: points per hand against a fixed field, on duplicate deals.

    python bench/strength.py random greedy heuristic [--vs lowest] [--hands 2000]
        [--rules hk] [--jobs 1] [--seed strength] [--json]

For every bot named and every opponent (``--vs``, repeatable; default ``lowest``, the
lowest-first baseline below), each deal is played once per seat with the bot in that seat
and copies of the opponent in all the others (duplicate play: the deal's luck cancels
out), in-process with :func:`bigtwo.play_local`.  ``--hands`` counts the hands the bot
plays (deals × seats).  Reported per bot and opponent:

- ``rules``: mean points per hand under the rule set's own scoring (higher is better);
- ``cards``: mean points per hand "cards left" — each loser pays its cards left to the
  winner, ×2 with 10–12 cards, ×3 with 13 or more (the measure of issue 13 and of
  arXiv:1808.10442, comparable across rule sets);
- each ± its standard error, taken over deals (a deal's rotations are not independent);
- ``win``: the share of hands the bot (its team, under ``teams``) won;
- the bot's move time (each ``act`` call): median and 99th percentile, in ms, wall clock
  (what a referee sees) and the CPU time of the thread (what it is on a loaded machine,
  where a process waiting for a core overruns its wall-clock budget).

A bot is a sample bot's name (``sample_bots/NAME``), ``lowest``, or anything
``play_local`` loads (``path/bot.py[:Class]``, a folder).  ``--jobs`` plays deals in
that many processes (move times then compete for the cores: keep 1 when timing).
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import json
import multiprocessing
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bigtwo import PASS, Bot, Observation, RuleSet, deal, play_local
from bigtwo.combos import Move
from bigtwo.loader import load_bot_class

ROOT = Path(__file__).resolve().parents[1]


class LowestFirst(Bot):
    """The baseline of issue 13: the legal play whose highest card is lowest; it passes
    only when it has no play.  Kept here, not in sample_bots/: under the usual rules it
    plays as ``greedy`` does (they differ only in how five-card hands and revolutions are
    ordered), and every sample bot joins a ladder run without bots named."""

    name = "lowest"

    def act(self, observation: Observation) -> Move:
        strength = observation.rules.strength
        plays = [m for m in observation.legal_moves if m is not PASS]
        if not plays:
            return PASS
        return min(plays, key=lambda m: max(strength(c) for c in m.cards))


class Timed:
    """A bot whose ``act`` calls are timed; every other attribute is the bot's own."""

    def __init__(self, bot: Any, times: list[float], cpu: list[float]) -> None:
        self._bot = bot
        self._times = times
        self._cpu = cpu
        self.display_name = getattr(bot, "display_name", type(bot).__name__)

    def act(self, observation: Observation) -> Any:
        start, cpu = time.perf_counter(), time.thread_time()
        move = self._bot.act(observation)
        self._times.append((time.perf_counter() - start) * 1000)
        self._cpu.append((time.thread_time() - cpu) * 1000)
        return move

    def __getattr__(self, name: str) -> Any:
        return getattr(self._bot, name)


def factory(spec: str, seed: str) -> Callable[[], Any]:
    """A maker of fresh bot instances for ``spec`` (a fresh one for every match: no state
    is shared between matches).  A bot whose constructor takes ``seed`` gets a distinct,
    reproducible one per instance, so a run repeats exactly."""
    if spec == "lowest":
        return LowestFirst
    sample = ROOT / "sample_bots" / spec
    cls = load_bot_class(str(sample if (sample / "bot.py").is_file() else spec))
    if "seed" not in inspect.signature(cls).parameters:
        return cls
    counter = itertools.count()
    return lambda: cls(seed=f"{seed}/{spec}/{next(counter)}")


def cards_left_penalty(n: int) -> int:
    """Issue 13's cards-left measure: n cards, ×2 with 10–12, ×3 with 13 or more."""
    return n * (1 if n < 10 else 2 if n < 13 else 3)


def _play_deals(job: tuple[str, str, dict[str, Any], str, list[int]]) -> dict[str, Any]:
    """Play deals ``indices`` with ``bot`` in every seat against ``opponent``; per deal the
    bot's mean score (rules, cards-left), wins, and the bot's move times."""
    bot_spec, opp_spec, rules_dict, seed, indices = job
    rules = RuleSet.from_dict(rules_dict)
    tag = f"{seed}/{indices[0]}"
    make_bot, make_opp = factory(bot_spec, tag + "/bot"), factory(opp_spec, tag + "/opp")
    n = rules.players
    times: list[float] = []
    cpu: list[float] = []
    per_deal = []
    for i in indices:
        cards = deal(rules, seed, i)
        rules_pts = cards_pts = wins = 0.0
        for seat in range(n):
            bots = [make_opp() for _ in range(n)]
            bots[seat] = Timed(make_bot(), times, cpu)
            result = play_local(bots, rules, seed=f"{seed}/{i}/{seat}", deals=[cards])
            if result.faults:
                raise RuntimeError(f"deal {i} seat {seat}: faults {result.faults}")
            hand = result.hands[0]
            rules_pts += hand.scores[seat]
            team = hand.winning_team or (hand.winner,)
            won = seat in team
            wins += won
            pens = [cards_left_penalty(c) for c in hand.cards_left]
            if rules.teams:
                lost = sum(p for s, p in enumerate(pens) if s not in team)
                cards_pts += lost if won else -lost
            else:
                cards_pts += sum(pens) if won else -pens[seat]
        per_deal.append((rules_pts / n, cards_pts / n, wins / n))
    return {"per_deal": per_deal, "times": times, "cpu": cpu}


def _mean_se(xs: Sequence[float]) -> tuple[float, float]:
    mean = statistics.fmean(xs)
    se = statistics.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else float("nan")
    return mean, se


def _pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def measure(
    bot: str, opponent: str, rules: RuleSet, hands: int, jobs: int, seed: str
) -> dict[str, Any]:
    """One row: ``bot`` against copies of ``opponent`` on ``hands`` // players deals."""
    deals = max(2, hands // rules.players)
    chunks = [list(range(k, deals, jobs * 4)) for k in range(min(deals, jobs * 4))]
    work = [(bot, opponent, rules.to_dict(), seed, c) for c in chunks]
    started = time.perf_counter()
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            parts = pool.map(_play_deals, work)
    else:
        parts = [_play_deals(w) for w in work]
    per_deal = [d for p in parts for d in p["per_deal"]]
    times = [t for p in parts for t in p["times"]]
    cpu = [t for p in parts for t in p["cpu"]]
    r_mean, r_se = _mean_se([d[0] for d in per_deal])
    c_mean, c_se = _mean_se([d[1] for d in per_deal])
    return {
        "bot": bot,
        "vs": opponent,
        "hands": len(per_deal) * rules.players,
        "rules_pts": round(r_mean, 3),
        "rules_se": round(r_se, 3),
        "cards_pts": round(c_mean, 3),
        "cards_se": round(c_se, 3),
        "win": round(statistics.fmean(d[2] for d in per_deal), 4),
        "move_ms_median": round(_pct(times, 0.5), 2),
        "move_ms_p99": round(_pct(times, 0.99), 2),
        "move_ms_max": round(max(times, default=float("nan")), 2),
        "cpu_ms_median": round(_pct(cpu, 0.5), 2),
        "cpu_ms_p99": round(_pct(cpu, 0.99), 2),
        "moves": len(times),
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bots", nargs="+", help="sample bot names, 'lowest', or bot paths")
    ap.add_argument("--vs", action="append", help="opponent (repeatable; default lowest)")
    ap.add_argument("--hands", type=int, default=2000, help="hands per bot (deals × seats)")
    ap.add_argument("--rules", default="hk", help="a preset name or a rules JSON file")
    ap.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", default="strength")
    ap.add_argument("--json", action="store_true", help="one JSON list on stdout")
    args = ap.parse_args(argv)
    if Path(args.rules).is_file():
        rules = RuleSet.from_json(Path(args.rules).read_text())
    else:
        rules = RuleSet.preset(args.rules)
    if args.set:
        rules = rules.replace(**dict(s.split("=", 1) for s in args.set))
    rows = []
    for opponent in args.vs or ["lowest"]:
        for bot in args.bots:
            row = measure(bot, opponent, rules, args.hands, max(1, args.jobs), args.seed)
            rows.append(row)
            if not args.json:
                print(
                    f"{bot:>12} vs {rules.players - 1}× {opponent:<10} {row['hands']:>5} hands  "
                    f"rules {row['rules_pts']:+7.2f} ± {row['rules_se']:.2f}  "
                    f"cards-left {row['cards_pts']:+7.2f} ± {row['cards_se']:.2f}  "
                    f"win {row['win']:6.1%}  move ms median {row['move_ms_median']:.2f} "
                    f"p99 {row['move_ms_p99']:.2f} max {row['move_ms_max']:.1f} "
                    f"(cpu median {row['cpu_ms_median']:.2f} p99 {row['cpu_ms_p99']:.2f})  "
                    f"({row['seconds']} s)",
                    flush=True,
                )
            else:
                print(json.dumps(row), file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
