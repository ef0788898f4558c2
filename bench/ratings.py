"""How many games the ladder's rating needs to put 8 synthetic bots, 17 Elo apart, in their
exact order 90% of the time — with duplicate deals (each deal played in all four seat
rotations, one block of evidence: the ladder's official rating on every game's and every
card set's order; "(totals)": Plackett–Luce on the block's summed points instead) and with
independent deals (every hand its own order).

    python bench/ratings.py [--reps 40] [--luck-share 0.4,0.6,0.75] [--score performance]

The synthetic model (arena.ladder.simulate): a hand's performance = skill + the seat's deal
luck (the same for every bot that holds those cards: it cancels over a deal's rotations)
+ Gumbel play noise, calibrated so that 17 Elo means what Elo says for one hand.  A hand's
points are its performance (``--score places``: only its finishing order, a pessimistic
bound).  ``--luck-share`` is the deal's part of a hand's randomness; measured in real hk
Big Two it is 0.79 / 0.59 / 0.42 for heuristic bots playing 2% / 5% / 10% random moves.

For each setting the script plays ``--reps`` simulated ladders at each size, fits the
exact-order rate against log(games) with a logistic curve, and prints where that curve
crosses 90% (with the raw rates).  Target (issue 5): at most 1,000 games with duplicate
deals.
"""

from __future__ import annotations

import argparse
import json
import random
import sys

from curves import crossing

from arena.ladder.ratings import fit_plackett_luce
from arena.ladder.simulate import SCORES, exact_order, play_blocks

DUPLICATE_SIZES = [300, 500, 750, 1000, 1500, 2000, 3000]
INDEPENDENT_SIZES = [1000, 2000, 3000, 4000, 6000, 8000]
ELOS = {f"bot{i}": 17.0 * i for i in range(8)}
TARGET = 0.9


MODES = {  # label: (duplicate deals, what a block gives the fit)
    "duplicate": (True, "rankings"),
    "duplicate-totals": (True, "totals"),
    "independent": (False, "rankings"),
}


def hits(games: int, mode: str, reps: int, luck: float, score: str) -> list[bool]:
    """For each simulated ladder: did the fit rank every bot exactly right?"""
    duplicate, unit = MODES[mode]
    out = []
    for rep in range(reps):
        rng = random.Random(f"{games}/{duplicate}/{luck}/{rep}")
        blocks = play_blocks(
            ELOS, games, rng, duplicate=duplicate, luck_share=luck, score=score, unit=unit
        )
        fit = fit_plackett_luce(blocks, intervals=False)
        out.append(exact_order([r.bot for r in fit.ratings], ELOS))
    return out


def measure(mode: str, reps: int, luck: float, score: str) -> dict:
    sizes = DUPLICATE_SIZES if MODES[mode][0] else INDEPENDENT_SIZES
    points: list[tuple[int, bool]] = []
    rates = {}
    for games in sizes:
        got = hits(games, mode, reps, luck, score)
        points += [(games, h) for h in got]
        rates[games] = sum(got) / reps
        print(
            f"    {mode:16} {games:6,} games: exact order {rates[games]:.0%}",
            file=sys.stderr,
            flush=True,
        )
        if rates[games] == 1.0 and games >= 2 * sizes[0]:
            break
    games90 = crossing(points, TARGET)
    return {"games_for_90pct": round(games90) if games90 else None, "rates": rates}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=40, help="simulated ladders per size")
    parser.add_argument(
        "--luck-share",
        default="0.4,0.6,0.75",
        help="the deal's share of a hand's randomness, in [0, 1); a comma list for several",
    )
    parser.add_argument("--score", choices=SCORES, default="performance")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args()
    try:
        shares = [float(x) for x in args.luck_share.split(",")]
    except ValueError:
        parser.error(f"--luck-share: not a number list: {args.luck_share!r}")
    if args.reps < 5 or not all(0 <= s < 1 for s in shares):
        parser.error("--reps must be ≥ 5 and every --luck-share in [0, 1)")
    results = []
    for luck in shares:
        print(f"  luck share {luck}:", file=sys.stderr, flush=True)
        results.append(
            {"luck_share": luck, **{m: measure(m, args.reps, luck, args.score) for m in MODES}}
        )
    if args.json:
        print(json.dumps({"reps": args.reps, "score": args.score, "results": results}))
        return 0
    fmt = lambda n: f"{n:,}" if n else "n/a"  # noqa: E731
    print(
        f"8 bots 17 Elo apart, games for 90% exact order ({args.reps} ladders per size, "
        f"points = {args.score}; target: duplicate <= 1,000):"
    )
    print(f"  {'luck share':>10}  {'duplicate':>9}  {'(totals)':>9}  {'independent':>11}  ratio")
    for r in results:
        d, t, i = (r[m]["games_for_90pct"] for m in MODES)
        ratio = f"{i / d:.1f}x" if d and i else "-"
        print(f"  {r['luck_share']:>10}  {fmt(d):>9}  {fmt(t):>9}  {fmt(i):>11}  {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
