"""How many games the ladder's rating needs to put 8 synthetic bots, about 17 Elo apart, in
their exact order 90% of the time — with duplicate deals (each deal played in all four
seat rotations and rated as one block) and with independent deals.

    python bench/ratings.py [--reps 30] [--luck-share 0.5] [--json]

The synthetic model (arena.ladder.simulate): a hand's performance = skill + the seat's deal
luck (shared by a deal's rotations under duplicate play) + Gumbel play noise.  Target (issue
5): at most 1,000 games with duplicate deals.
"""

from __future__ import annotations

import argparse
import json
import random
import sys

from arena.ladder.ratings import fit_plackett_luce
from arena.ladder.simulate import exact_order, play_blocks

SIZES = [250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000, 12000]


def success_rate(elos: dict, games: int, duplicate: bool, reps: int, luck: float) -> float:
    """Fraction of simulated ladders that rank every bot exactly right."""
    hits = 0
    for rep in range(reps):
        rng = random.Random(f"{games}/{duplicate}/{rep}")
        blocks = play_blocks(elos, games, rng, duplicate=duplicate, luck_share=luck)
        fit = fit_plackett_luce(blocks, intervals=False)
        hits += exact_order([r.bot for r in fit.ratings], elos)
    return hits / reps


def games_needed(elos: dict, duplicate: bool, reps: int, luck: float, out: list) -> int | None:
    for games in SIZES:
        rate = success_rate(elos, games, duplicate, reps, luck)
        out.append({"games": games, "duplicate": duplicate, "exact_order": rate})
        print(
            f"  {'duplicate' if duplicate else 'independent':11} {games:6d} games: "
            f"exact order {rate:.0%}",
            file=sys.stderr,
            flush=True,
        )
        if rate >= 0.9:
            return games
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30, help="simulated ladders per size")
    parser.add_argument(
        "--luck-share",
        dest="luck",
        type=float,
        default=0.5,
        help="share of a hand's randomness that comes from the deal",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.reps < 5 or not 0 <= args.luck < 1:
        parser.error("--reps must be ≥ 5 and --luck-share in [0, 1)")
    elos = {f"bot{i}": 17.0 * i for i in range(8)}
    curve: list = []
    dup = games_needed(elos, True, args.reps, args.luck, curve)
    ind = games_needed(elos, False, args.reps, args.luck, curve)
    result = {
        "duplicate_games_for_90pct": dup,
        "independent_games_for_90pct": ind,
        "reps": args.reps,
        "luck_sd": args.luck,
        "curve": curve,
    }
    if args.json:
        print(json.dumps(result))
    else:
        fmt = lambda n: f"{n:,}" if n else f"> {SIZES[-1]:,}"  # noqa: E731
        print(
            f"8 bots 17 Elo apart, 90% exact order: duplicate deals {fmt(dup)} games, "
            f"independent deals {fmt(ind)} games ({args.reps} simulated ladders per size; "
            "target: duplicate <= 1,000)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
