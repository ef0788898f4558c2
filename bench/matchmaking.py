"""How many matches a bot needs before the ratings are right, with the ladder's round-by-round
planner (arena.ladder.schedule.plan_round) and with uniform random groups.

    python bench/matchmaking.py [--sizes 30,200,1000] [--runs 10] [--seed 0] [--json]
    python bench/matchmaking.py --quick      # a small run, for smoke-testing

Each run draws a synthetic field: bots with skills normal with sd 150 Elo, and above them a
top cluster of 10 bots 20 Elo apart (the best of the rest + 20, + 40, …).  Every match is
``--deals`` duplicate deals (the ladder's default: 4), each played in its four seat
rotations by arena.ladder.simulate.play_blocks (deal share of the randomness 0.6), and rated
as the ladder rates a block (each game's and each card set's order).  The same field is
then played round by round twice:

- *planner*: each round is ``plan_round`` on the standings after the previous round (the
  Plackett–Luce fit's rating and standard error of every bot, its matches, the pairs that
  have met);
- *uniform*: each round is ceil(n / 4) groups of four drawn uniformly at random — the same
  number of matches a round (the planner's first round has a few more: its bridges).

After each round (the uniform schedule: at checkpoints, every round at first, then every
~10% more) it fits the ratings and checks three things against the true skills: Spearman's
rank correlation >= 0.95, the top-10 set exact, the top-3 order exact.  For each it prints
the matches per bot (the bots' mean number of matches) at which the share of runs meeting
it reaches 90% (bench/curves.crossing: rates made monotone, interpolated in log(rounds)),
">N" when it did not within ``--max-rounds``.  A run stops early once all three have held
for the last half of its rounds (at least five checkpoints); later checkpoints count as met
(a small bias towards fewer matches, the same rule for both schedules).  It also prints
the bots never seated after the first round and at the end (must be 0 for the planner).
Target (issue 22): the planner needs at most half the matches of uniform groups for the
top-3 order, at every size.

Measured with the planner of ad76a2f (one cover a round; seed 0, deal share 0.6, 4 deals
a match; matches per bot until 90% of runs meet the check):

    bots  runs  schedule  never seated r1  spearman>=.95  top-10 set  top-3 order
      30    20  planner          0              2.2          13.2        15.4
      30    20  uniform         13              3.2          20.1        23.5   (1.5x)
     200     8  planner          0              2.2           8.8         9.4
     200     8  uniform         80              3.8          20.4         >80   (>= 8.5x)
    1000     4  planner          0              2.2           8.1        21.8
    1000     4  uniform        368              2.9          21.4         >60   (>= 2.75x)

With one extra group a round at the top of the table (schedule.EXTRA_GROUPS; the matches
per bot count it):

    bots  runs  rounds  schedule  spearman>=.95  top-10 set  top-3 order
      30    20      60  planner        2.3          11.0        15.9   (1.48x; before 15.4)
      30    40      60  planner        2.2          12.6        11.0   (before: 22.4)
      30    40      60  uniform        3.9          19.9        34.1   (3.1x; before 1.52x)
     200     4      40  planner        2.3           6.4         3.4   (before: 8.4, 9.1)
     200     4      40  uniform        3.6          21.2         >40   (>= 11.7x)

The top-3 figure at 30 bots is the 90th percentile of 20 or 40 runs, so two or four slow
runs set it: 20 runs say the extra group changes nothing (15.4 -> 15.9, uniform 23.5),
40 runs on the same seeds say it halves it (22.4 -> 11.0, uniform 34.1).  Most runs settle
the top three in half the rounds with it (median round 4 rather than 8); the slowest are
fields whose 3rd and 4th draw close for many rounds by luck.  Without extra seats the
target cannot be met at 30 bots: the planner fed the true skills (groups always of the
true top four, no exploration) needed 16.5 on the 20 fields, as a round that seats every
bot once gives a top bot one match, already against its three nearest rivals.

The fit is the ladder's likelihood (arena.ladder.ratings.fit_plackett_luce: Plackett–Luce
on every order, the same ridge) computed by a warm-started L-BFGS over the orders kept as
one array, as each round adds to them — fit_plackett_luce starts from zero and builds
an n × n Hessian, covariance and superiority table (a million pairs at 1,000 bots) at
every call, and the planner refits after every round.  The standard
error the planner is given is the Fisher information's diagonal, widened by
``STDERR_WIDEN`` for the correlation of a block's orders (fit_plackett_luce's sandwich
estimate does that properly): the bench measures the planner, not the fit.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import sys
import time
from dataclasses import dataclass, field

import numpy as np
from curves import crossing

from arena.ladder.ratings import ELO_PER_UNIT, PRIOR
from arena.ladder.schedule import Standing, plan_round
from arena.ladder.simulate import play_blocks

SEATS = 4
CLUSTER = 10
CLUSTER_GAP = 20.0
FIELD_SD = 150.0
LUCK_SHARE = 0.6
TARGET = 0.9
STDERR_WIDEN = 1.1
"""The orders of a block (a deal's four games and four card sets) are correlated, so their
Fisher information overstates the evidence, and its diagonal ignores the covariance:
fit_plackett_luce's sandwich stderr is about 1.1 times this one on 30-bot fields (measured
with ``--calibrate``)."""
CHECKS = ("spearman", "top10", "top3")
SCHEDULERS = ("planner", "uniform")


def make_field(n: int, rng: random.Random) -> dict[int, float]:
    """Bot id -> true Elo: n − 10 normal, and the top cluster above the best of them.  Ids
    are shuffled so that no order of ids says anything of strength."""
    rest = [rng.gauss(0, FIELD_SD) for _ in range(n - CLUSTER)]
    top = max(rest) if rest else 0.0
    skills = rest + [top + CLUSTER_GAP * (k + 1) for k in range(CLUSTER)]
    ids = list(range(n))
    rng.shuffle(ids)
    return dict(zip(ids, skills, strict=True))


class Orders:
    """Every order the fit has seen, as one array of bot indices best first, and a
    warm-started Plackett–Luce fit over them (the ladder's likelihood, with its ridge)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.chunks: list[np.ndarray] = []
        self.rows = np.zeros((0, SEATS), dtype=np.intp)
        self.theta = np.zeros(n)

    def add(self, blocks: list) -> None:
        rows = [
            sorted(ranking, key=ranking.__getitem__, reverse=True)
            for block in blocks
            for ranking in block
            if len(ranking) == SEATS
        ]
        if rows:
            self.chunks.append(np.array(rows, dtype=np.intp))

    def _nll(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        nll = PRIOR * float(theta @ theta) / 2
        grad = PRIOR * theta.copy()
        s = theta[self.rows]
        for k in range(SEATS - 1):
            tail = s[:, k:]
            m = tail.max(axis=1, keepdims=True)
            w = np.exp(tail - m)
            z = w.sum(axis=1, keepdims=True)
            nll -= float(np.sum(s[:, k] - m[:, 0] - np.log(z[:, 0])))
            grad -= np.bincount(self.rows[:, k], minlength=self.n)
            grad += np.bincount(self.rows[:, k:].ravel(), (w / z).ravel(), self.n)
        return nll, grad

    def fit(self) -> tuple[np.ndarray, np.ndarray]:
        """(Elo, stderr) of every bot, Elo anchored at the field's mean."""
        from scipy.optimize import minimize

        if self.chunks:
            self.rows = np.concatenate([self.rows, *self.chunks])
            self.chunks = []
        res = minimize(self._nll, self.theta, jac=True, method="L-BFGS-B")
        self.theta = res.x
        s = self.theta[self.rows]
        info = np.full(self.n, PRIOR)
        for k in range(SEATS - 1):
            w = np.exp(s[:, k:] - s[:, k:].max(axis=1, keepdims=True))
            p = w / w.sum(axis=1, keepdims=True)
            info += np.bincount(self.rows[:, k:].ravel(), (p * (1 - p)).ravel(), self.n)
        elo = ELO_PER_UNIT * (self.theta - self.theta.mean())
        return elo, STDERR_WIDEN * ELO_PER_UNIT / np.sqrt(info)


@dataclass
class Run:
    """One scheduler on one field: per checkpoint round, the checks met."""

    rounds: list[int] = field(default_factory=list)
    met: dict[str, list[bool]] = field(default_factory=lambda: {c: [] for c in CHECKS})
    matches_per_bot: list[float] = field(default_factory=list)
    unseated_first: int = 0
    unseated_end: int = 0
    seconds: float = 0.0


def checks(elo: np.ndarray, truth: np.ndarray) -> dict[str, bool]:
    order, best = np.argsort(-elo, kind="stable"), np.argsort(-truth, kind="stable")
    rank_fit, rank_true = np.empty(len(elo)), np.empty(len(elo))
    rank_fit[order] = np.arange(len(elo))
    rank_true[best] = np.arange(len(elo))
    rho = float(np.corrcoef(rank_fit, rank_true)[0, 1])
    return {
        "spearman": rho >= 0.95,
        "top10": set(order[:CLUSTER].tolist()) == set(best[:CLUSTER].tolist()),
        "top3": order[:3].tolist() == best[:3].tolist(),
    }


def checkpoints(max_rounds: int) -> list[int]:
    out, r = [], 1
    while r <= max_rounds:
        out.append(r)
        r = r + 1 if r < 10 else max(r + 1, round(r * 1.1))
    return out


def play(
    scheduler: str,
    skills: dict[int, float],
    max_rounds: int,
    deals: int,
    rng: random.Random,
    seed: str,
) -> Run:
    start = time.perf_counter()
    n = len(skills)
    truth = np.array([skills[b] for b in range(n)])
    orders = Orders(n)
    seats = np.zeros(n, dtype=int)
    met: dict[tuple[int, int], int] = {}
    elo: np.ndarray | None = None
    stderr: np.ndarray | None = None
    marks = set(checkpoints(max_rounds))
    run = Run()
    held_since: int | None = None
    for round_no in range(1, max_rounds + 1):
        if scheduler == "planner":
            standings = [
                Standing(
                    b,
                    int(seats[b]),
                    elo=None if elo is None else float(elo[b]),
                    stderr=None if stderr is None else float(stderr[b]),
                    new=round_no == 1,
                )
                for b in range(n)
            ]
            groups = plan_round(standings, round_no=round_no, seed=seed, met=met).groups
        else:
            groups = tuple(
                tuple(sorted(rng.sample(range(n), SEATS))) for _ in range(math.ceil(n / SEATS))
            )
        blocks = []
        for g in groups:
            blocks += play_blocks(
                {b: skills[b] for b in g}, deals * SEATS, rng, luck_share=LUCK_SHARE
            )
            for b in g:
                seats[b] += 1
            for a, b in itertools.combinations(g, 2):
                met[(a, b)] = met.get((a, b), 0) + 1
        orders.add(blocks)
        if round_no == 1:
            run.unseated_first = int((seats == 0).sum())
        if scheduler == "planner" or round_no in marks:
            elo, stderr = orders.fit()
        if round_no not in marks:
            continue
        assert elo is not None
        got = checks(elo, truth)
        run.rounds.append(round_no)
        run.matches_per_bot.append(float(seats.mean()))
        for c in CHECKS:
            run.met[c].append(got[c])
        if not all(got.values()):
            held_since = None
        elif held_since is None:
            held_since = round_no
        stable = [r for r in run.rounds if held_since is not None and r >= held_since]
        if held_since is not None and len(stable) >= 5 and round_no >= 2 * held_since:
            break
    run.unseated_end = int((seats == 0).sum())
    run.seconds = time.perf_counter() - start
    return run


def summarise(runs: list[Run], max_rounds: int) -> dict:
    """Matches per bot at which each check is met in 90% of runs."""
    marks = checkpoints(max_rounds)
    out: dict = {
        "never_seated_after_round_1": max(r.unseated_first for r in runs),
        "never_seated_at_end": max(r.unseated_end for r in runs),
        "seconds": round(sum(r.seconds for r in runs), 1),
    }
    # matches per bot at each checkpoint round (runs that stopped early: extrapolated at
    # their last rate), for converting a crossing round into matches
    rate = [r.matches_per_bot[-1] / r.rounds[-1] for r in runs if r.rounds]
    per_round = sum(rate) / len(rate)
    first = [r.matches_per_bot[0] for r in runs if r.rounds]
    offset = sum(first) / len(first) - per_round  # the planner's first round: its bridges
    for c in CHECKS:
        points = []
        for r in runs:
            got = dict(zip(r.rounds, r.met[c], strict=True))
            last = r.rounds[-1]
            for m in marks:
                points.append((m, got[m] if m <= last else True))
        rounds = crossing(points, TARGET)
        out[c] = None if rounds is None else round(offset + per_round * rounds, 1)
    out["max_matches"] = round(offset + per_round * max_rounds, 1)
    return out


def measure(n: int, runs: int, seed: int, max_matches: int, deals: int) -> dict:
    result: dict = {"bots": n}
    all_runs: dict[str, list[Run]] = {s: [] for s in SCHEDULERS}
    for i in range(runs):
        skills = make_field(n, random.Random(f"{seed}/{n}/{i}/field"))
        for s in SCHEDULERS:
            rng = random.Random(f"{seed}/{n}/{i}/{s}")
            run = play(s, skills, max_matches, deals, rng, seed=f"{seed}/{n}/{i}")
            all_runs[s].append(run)
            done = {
                c: next((r for r, ok in zip(run.rounds, run.met[c], strict=True) if ok), None)
                for c in CHECKS
            }
            print(
                f"  {n:5} bots  run {i + 1}/{runs}  {s:8} {run.rounds[-1]:4} rounds "
                f"{run.seconds:6.1f} s  first met at round: "
                + ", ".join(f"{c} {done[c] or '-'}" for c in CHECKS),
                file=sys.stderr,
                flush=True,
            )
    for s in SCHEDULERS:
        result[s] = summarise(all_runs[s], max_matches)
    p, u = result["planner"]["top3"], result["uniform"]["top3"]
    result["top3_ratio"] = (
        None if p is None else round((u or result["uniform"]["max_matches"]) / p, 2)
    )
    result["top3_ratio_is_lower_bound"] = u is None
    return result


def calibrate(seed: int) -> None:
    """The ratio of fit_plackett_luce's stderr to this bench's (before widening)."""
    from arena.ladder.ratings import fit_plackett_luce

    rng = random.Random(seed)
    skills = make_field(30, rng)
    blocks: list = []
    for _ in range(20):
        for _ in range(8):
            g = rng.sample(range(30), SEATS)
            blocks += play_blocks({b: skills[b] for b in g}, 16, rng, luck_share=LUCK_SHARE)
    orders = Orders(30)
    orders.add(blocks)
    _, se = orders.fit()
    ref = fit_plackett_luce(blocks).by_bot()
    ratio = np.median([ref[b].stderr for b in range(30)] / (se / STDERR_WIDEN))
    print(f"fit_plackett_luce stderr / Fisher diagonal: median {ratio:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="30,200,1000", help="field sizes, a comma list")
    parser.add_argument("--runs", type=int, default=10, help="fields per size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--max-rounds",
        type=int,
        default=150,
        help="give up after this many rounds (about one match a bot each)",
    )
    parser.add_argument("--deals", type=int, default=4, help="deals a match (as `ladder run`)")
    parser.add_argument(
        "--quick", action="store_true", help="a small run (20 bots, 2 runs, 8 rounds)"
    )
    parser.add_argument("--calibrate", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args()
    if args.calibrate:
        calibrate(args.seed)
        return 0
    try:
        sizes = [int(x) for x in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes: not a list of integers: {args.sizes!r}")
    if args.quick:
        sizes, args.runs, args.max_rounds = [20], 2, 8
    if args.runs < 1 or args.max_rounds < 1 or args.deals < 1:
        parser.error("--runs, --max-rounds and --deals must be positive")
    if any(n < CLUSTER + SEATS for n in sizes):
        parser.error(f"every size must be at least {CLUSTER + SEATS}")
    results = []
    for n in sizes:
        print(f"{n} bots:", file=sys.stderr, flush=True)
        results.append(measure(n, args.runs, args.seed, args.max_rounds, args.deals))
    if args.json:
        print(
            json.dumps(
                {
                    "runs": args.runs,
                    "seed": args.seed,
                    "deals": args.deals,
                    "luck_share": LUCK_SHARE,
                    "max_rounds": args.max_rounds,
                    "results": results,
                }
            )
        )
        return 0
    fmt = lambda r, c: (  # noqa: E731
        f"{r[c]:.1f}" if r[c] is not None else f">{r['max_matches']:.0f}"
    )
    print(
        f"Matches per bot until each check holds in 90% of {args.runs} runs (deal share "
        f"{LUCK_SHARE}, {args.deals} deals a match; target: planner <= half of uniform, top-3)"
    )
    print(
        f"  {'bots':>5}  {'schedule':8}  {'never seated (r1/end)':>21}  {'spearman>=.95':>13}"
        f"  {'top-10 set':>10}  {'top-3 order':>11}"
    )
    for r in results:
        for s in SCHEDULERS:
            x = r[s]
            unseated = f"{x['never_seated_after_round_1']}/{x['never_seated_at_end']}"
            print(
                f"  {r['bots']:>5}  {s:8}  {unseated:>21}  {fmt(x, 'spearman'):>13}"
                f"  {fmt(x, 'top10'):>10}  {fmt(x, 'top3'):>11}"
            )
        ratio = r["top3_ratio"]
        bound = "≥ " if r["top3_ratio_is_lower_bound"] else ""
        print(f"  {'':>5}  uniform / planner, top-3: {bound}{ratio}x" if ratio else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
