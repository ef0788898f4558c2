"""``arena ladder show`` and ``arena ladder export``: a ladder's leaderboard as a table (or
JSON) and its deal blocks for analysis elsewhere; also the live top of the leaderboard
that ``ladder run`` shows while it plays."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from ..text import printable
from .common import _shown, ladder_app, open_ladder
from .options import DbOpt


def _probability(p: float) -> str:
    return ">0.999" if p >= 0.9995 else "<0.001" if p < 0.0005 else f"{p:.3f}"


def print_leaderboard(
    engine: Any, name: str, as_json: bool, matrix: bool = False, all_: bool = False
) -> None:
    """Ladder ``name``'s leaderboard: JSON on stdout, or a table with what its marks mean
    (and the superiority matrix with ``matrix``)."""
    from rich.table import Table

    from ..ladder.explain import OrderNote
    from ..ladder.queries import leaderboard_rows
    from ..ladder.ratings import SEPARATED_P

    rows = leaderboard_rows(engine, name, retired=all_)
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    table = Table(
        title=_shown(f"Ladder {printable(name, 60)}: Elo ± 95% (Plackett–Luce on deal blocks)")
    )
    for col in (
        "#",
        "bot",
        "Elo",
        "95%",
        "OpenSkill",
        "matches",
        "pts/hand",
        "1st",
        "faults",
        "forfeits",
        "next",
    ):
        table.add_column(col, justify="left" if col == "bot" else "right", no_wrap=True)
    rated = [r for r in rows if r["rated"]]
    for r in rows:
        if not r["rated"]:  # entered, no rating yet: listed, never ranked
            note = "— not yet played" if not r["matches"] else "— no complete deal yet"
            bot = _shown(r["bot"], 30)
            if r["retired"]:
                bot.append(" (retired)", style="dim")
            table.add_row("", bot, note, "", "", str(r["matches"]), *[""] * 5)
            continue
        bot = _shown(r["bot"], 30)
        if r["retired"]:
            bot.append(" (retired)", style="dim")
        table.add_row(
            str(r["rank"]),
            bot,
            f"{r['elo']:+.0f}",
            f"{r['elo_low']:+.0f}..{r['elo_high']:+.0f}" if r["in_field"] else "unbounded*",
            f"{r['openskill']:.1f}",
            str(r["matches"]),
            f"{r['points_per_hand']:+.2f}" if r["points_per_hand"] is not None else "-",
            str(r["first_places"]),
            str(r["faults"]),
            str(r["forfeits"]),
            "" if r is rated[-1] else ">" if r["separated_from_next"] else "~",
        )
    console = Console(highlight=False, width=max(120, Console().width))
    console.print(table)
    for r in rated:  # the ranks are Elo, not points: say why where they disagree
        if r.get("order_note"):
            explained = OrderNote.from_json(r["order_note"])
            why = f"#{explained.rank} above #{explained.rank + 1} with fewer points a hand: "
            console.print(Text.assemble((why, "bold"), printable(explained.text, 2000)))
    print_final_state(console, engine, name)
    console.print(
        f"next: > separated from the next: P(stronger than it) ≥ {SEPARATED_P} (95% interval "
        "of the Elo difference excludes 0); ~ not yet"
    )
    if matrix and len(rated) > 1:
        grid = Table(title="P(row stronger than column)", caption=f"* separated: P ≥ {SEPARATED_P}")
        grid.add_column("", no_wrap=True)
        for r in rated:
            grid.add_column(_shown(r["bot"], 30), justify="right", no_wrap=True)
        for r in rated:
            cells = []
            for o in rated:
                p = 0.5 if o is r else r["superiority"][o["bot"]]
                mark = "*" if o is not r and p >= SEPARATED_P else ""
                cells.append("" if o is r else _probability(p) + mark)
            grid.add_row(_shown(r["bot"], 30), *cells)
        console.print(grid)
    if any(r["retired"] for r in rows):
        console.print("(retired): no new matches; its finished ones count for everyone's ratings")
    if any(r["forfeits"] for r in rows):
        console.print(
            "forfeits: seats a bot lost to faults; from then on a fallback played them, and "
            "the ratings count those hands as last place"
        )
    if not all(r["in_field"] for r in rated):
        console.print(
            "* has finished behind (or ahead of) part of the field in every block so far: "
            "no finite rating yet; the mean anchor leaves it out"
        )


def print_final_state(console: Console, engine: Any, name: str) -> None:
    """A line under the table when the ladder is final or in its final phase."""
    from ..ladder.final import final_state, settings_of

    phase, marker = final_state(settings_of(engine, name))
    if marker is not None:
        console.print(_shown(f"FINAL {marker.summary()}", 2000), soft_wrap=True)
    elif phase is not None:
        console.print(
            _shown(
                f"final evaluation under way since {phase.started}: the top {phase.k}, "
                f"budget {phase.budget} match(es) (`arena ladder final` goes on with it)",
                2000,
            ),
            soft_wrap=True,
        )


def top(engine: Any, name: str, n: int = 3) -> str:
    """The live top of the leaderboard, for the progress line."""
    from ..ladder.queries import leaderboard_rows

    try:
        rows = leaderboard_rows(engine, name)
    except Exception:  # never let the live view stop a ladder
        return "matches"
    rows = [r for r in rows if r["rated"]]
    if not rows:
        return "matches"
    return "  ".join(f"{r['rank']}. {printable(r['bot'], 24)} {r['elo']:+.0f}" for r in rows[:n])


@ladder_app.command("export")
def ladder_export(
    name: Annotated[str, typer.Option(help="Ladder name.")] = "default",
    db: DbOpt = "arena.db",
    csv_: Annotated[bool, typer.Option("--csv", help="CSV (the default is JSON).")] = False,
) -> None:
    """Every finished deal block (match, deal, seed, bot, points over its rotations), for
    analysis elsewhere: JSON lines, or CSV with --csv."""
    import csv

    from ..ladder.queries import export_blocks

    records = export_blocks(open_ladder(db, name)[0], name)
    if csv_:  # text for people and spreadsheets: names made harmless (JSON escapes its own)
        for r in records:
            r["bot"] = printable(r["bot"], 200)
        writer = csv.DictWriter(sys.stdout, fieldnames=["match", "deal", "seed", "bot", "points"])
        writer.writeheader()
        writer.writerows(records)
    else:
        for r in records:
            sys.stdout.write(json.dumps(r) + "\n")


@ladder_app.command("show")
def ladder_show(
    name: Annotated[str, typer.Option(help="Ladder name.")] = "default",
    db: DbOpt = "arena.db",
    as_json: Annotated[
        bool, typer.Option("--json", help="The leaderboard as one JSON list on stdout.")
    ] = False,
    matrix: Annotated[
        bool,
        typer.Option(
            "--matrix", help="Also print P(row bot stronger than column bot) for every pair."
        ),
    ] = False,
    all_: Annotated[bool, typer.Option("--all", help="Also the retired bots (marked).")] = False,
) -> None:
    """Print a ladder's leaderboard (rank, bot, Elo ± 95% interval, matches, ...).

    The "next" column and --matrix share one criterion: two bots are separated
    when P(one stronger than the other) ≥ 0.975 by the ratings' normal
    approximation (the 95% interval of their Elo difference excludes 0).
    Bots entered but not rated yet are listed last ("not yet played").
    The rank is the Elo (who finished ahead of whom in each deal), not the
    points a hand: where a bot stands above the next with fewer points a
    hand, a line under the table says why, with the numbers from the deals.
    Retired bots are hidden unless --all; their matches still count for
    everyone's ratings.  A final ladder (`arena ladder final`) says so under
    the table.

    --json prints a list in rank order, then the unrated (`rated` false,
    `rank` null); each object also holds `superiority` (for every other bot,
    the probability that this one is stronger), `retired` and `order_note`
    (that line and its numbers, on the upper row of such a pair; else null)."""
    print_leaderboard(open_ladder(db, name)[0], name, as_json, matrix, all_)
