"""The organizer's ladder commands — ``arena ladder list``, ``faults``, ``retire`` and
``plot`` — and the ladder side of ``arena replay MATCH_ID``: the commands an organizer uses
to look after a ladder, in one place (what they ask of the database is
:mod:`arena.ladder.queries`).

Every name shown here — ladders', bots', a fault's words — came from someone else (a bot's
file name, its exception text): printed through ``_shown`` / ``printable`` only."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ..text import printable
from .common import _fail, _shown, ladder_app, open_db, open_ladder, store_errors
from .options import DbOpt

if TYPE_CHECKING:  # the commands import arena.ladder.queries (SQLAlchemy) when they run
    from ..ladder.history import History, RatingPoint

LadderOpt = Annotated[str, typer.Option("--name", "--ladder", help="Ladder name.")]
DETAIL_CAP = 300
"""A fault's detail as a table shows it (a bot's own words: escaped, then cut)."""
JSON_DETAIL_CAP = 4000
RUN_MAKES_ONE = " (`arena ladder run` makes one)"
"""What a missing database's error adds here: these commands never create one."""


# ----- arena ladder list -------------------------------------------------------------------
@ladder_app.command("list")
def ladder_list(
    db: DbOpt = "arena.db",
    as_json: Annotated[bool, typer.Option("--json", help="One JSON list on stdout.")] = False,
) -> None:
    """Every ladder in the database, with its rules, bots and matches.

    For each ladder: its name, rules, bots (active, and retired), matches
    played and pending, and when it last finished a match (UTC).
    """
    from bigtwo import RuleSet

    from ..ladder import queries
    from ..replay_view import rules_summary

    rows = queries.ladder_overview(open_db(db, RUN_MAKES_ONE))
    for row in rows:
        try:
            row["rules"] = rules_summary(RuleSet.from_dict(row["rules"]))
        except Exception:  # a ladder of an older rules format: still listed
            row["rules"] = "?"
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    console = Console(highlight=False)
    if not rows:
        console.print(_shown(f"{db}: no ladders yet (`arena ladder run` makes one)"))
        return
    table = Table(title=_shown(f"Ladders in {printable(db, 80)}"))
    for col in ("ladder", "rules", "bots", "played", "pending", "last played (UTC)"):
        left = col in ("ladder", "rules")
        table.add_column(col, justify="left" if left else "right", no_wrap=not left)
    for r in rows:
        bots = str(r["bots"]) + (f" (+{r['retired']} retired)" if r["retired"] else "")
        last = r["last_played"][:19].replace("T", " ") if r["last_played"] else "never"
        table.add_row(
            _shown(r["name"], 40),
            _shown(r["rules"], 60),
            bots,
            str(r["played"]),
            str(r["pending"]),
            last,
        )
    console.print(table)


# ----- arena ladder faults -----------------------------------------------------------------
@ladder_app.command("faults")
def ladder_faults(
    bot: Annotated[str, typer.Argument(help="BOT (every version) or BOT@vN (version N).")],
    name: LadderOpt = "default",
    db: DbOpt = "arena.db",
    limit: Annotated[int, typer.Option(min=1, help="Show at most this many, newest first.")] = 20,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON list on stdout (hands from 0 there).")
    ] = False,
) -> None:
    """The faults a bot made in a ladder's matches, newest first.

    Each fault: its match (give the id to `arena replay`), the hand, the
    referee's turn id, the kind, and what happened.

    The table counts hands from 1, a match's first hand being hand 1, as
    `arena replay` and the match tables show them; --json counts from 0, as
    all JSON and records do ("-" or null: outside any hand, e.g. at start-up).
    A fault's text is the bot's own words: shown escaped and cut at 300
    characters (--json: 4000).

    Example: arena ladder faults my_bot@v2 --name default --limit 5
    """
    from ..ladder import queries

    engine, ladder_id = open_ladder(db, name, RUN_MAKES_ONE)
    with store_errors():
        total, kinds, rows = queries.bot_faults(engine, ladder_id, bot, limit, JSON_DETAIL_CAP)
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    console = Console(highlight=False, width=max(120, Console().width))
    if not rows:
        console.print(_shown(f"{bot}: no faults in ladder '{printable(name, 60)}'"))
        return
    table = Table(title=_shown(f"Faults of {printable(bot, 40)} in ladder {printable(name, 60)}"))
    for col in ("match", "bot", "hand", "turn", "kind", "detail"):
        table.add_column(col, justify="right" if col in ("match", "hand", "turn") else "left")
    for r in rows:
        table.add_row(
            str(r["match"]),
            _shown(r["bot"], 30),
            "-" if r["hand"] is None else str(r["hand"] + 1),  # for people: from 1
            "-" if r["turn"] is None else str(r["turn"]),
            _shown(r["kind"], 20),
            _shown(r["detail"], DETAIL_CAP),
        )
    console.print(table)
    by_kind = ", ".join(f"{printable(k, 20)} {n}" for k, n in sorted(kinds.items()))
    console.print(
        _shown(
            f"{total} fault(s) in all ({by_kind}); shown: the newest {len(rows)}; hands from 1. "
            f"Replay one: arena replay MATCH --db {db}"
        )
    )


# ----- arena ladder retire -----------------------------------------------------------------
@ladder_app.command("retire")
def ladder_retire(
    bot: Annotated[str, typer.Argument(help="BOT (every version) or BOT@vN (that version).")],
    name: LadderOpt = "default",
    db: DbOpt = "arena.db",
    undo: Annotated[bool, typer.Option("--undo", help="Bring it back instead.")] = False,
) -> None:
    """Retire a bot, or one version of it, from a ladder.

    BOT retires every version of it, BOT@vN only version N (e.g. an old one).
    No new matches are planned for it, its pending ones are withdrawn, and the
    leaderboard hides it (`arena ladder show --all` shows it, marked).
    Its finished matches keep counting for everyone's ratings: they were
    played, and the other bots' results in them stand. --undo brings it back.
    """
    from ..ladder import queries

    engine, ladder_id = open_ladder(db, name, RUN_MAKES_ONE)
    with store_errors():
        done = queries.retire(engine, ladder_id, bot, undo)
    labels = ", ".join(printable(label, 40) for label in done.labels)
    console = Console(highlight=False)
    if undo:
        console.print(
            _shown(
                f"back in ladder '{printable(name, 60)}': {labels}; {done.restored} withdrawn "
                "match(es) pending again; the next `arena ladder run` plans its new matches"
            )
        )
        return
    console.print(
        _shown(
            f"retired from ladder '{printable(name, 60)}': {labels}. No new matches "
            f"({done.withdrawn} pending withdrawn); its {done.mine} finished match(es) of "
            f"{done.played} keep counting for the others' ratings. `arena ladder show --all` "
            "shows it."
        )
    )


# ----- arena ladder plot -------------------------------------------------------------------
SPARK = "▁▂▃▄▅▆▇█"


def _elo(point: RatingPoint | None) -> float:
    """A bot's Elo at a point in time (below everyone's when it has none then)."""
    return -math.inf if point is None else point.elo


def text_chart(history: History, console: Console, retired: set[str]) -> None:
    """Each bot's Elo over time as a line of blocks on one scale shared by all bots."""
    bots = sorted(
        {b for _, point in history for b in point},
        key=lambda b: -_elo(history[-1][1].get(b)),
    )
    values = [v.elo for _, point in history for v in point.values()]
    lo, hi = min(values), max(values)
    table = Table(box=None, show_header=True, pad_edge=False)
    for col in ("bot", f"Elo from {history[0][0]} to {history[-1][0]} matches", "first", "last"):
        table.add_column(col, justify="left" if col != "first" and col != "last" else "right")
    for b in bots:
        spark = ""
        for _, point in history:
            if b not in point:
                spark += " "
            else:
                level = 0 if hi == lo else round((point[b].elo - lo) / (hi - lo) * (len(SPARK) - 1))
                spark += SPARK[level]
        mine = [point[b].elo for _, point in history if b in point]
        table.add_row(
            _shown(b, 30) + (" (retired)" if b in retired else ""),
            spark,
            f"{mine[0]:+.0f}",
            f"{mine[-1]:+.0f}",
        )
    console.print(table)
    console.print(f"scale: ▁ {lo:+.0f} … █ {hi:+.0f} Elo; one column per point in time")


def draw(history: History, title: str, out: Path, retired: set[str]) -> None:
    """The rating-over-time chart with matplotlib (Agg: no display needed)."""
    try:
        import matplotlib
    except ImportError:
        raise _fail(
            "--out needs matplotlib: pip install 'bigtwo-arena[plot]' "
            "(without --out the chart is drawn in the terminal)"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    bots = sorted(
        {b for _, point in history for b in point},
        key=lambda b: -_elo(history[-1][1].get(b)),
    )
    fig, ax = plt.subplots(figsize=(9, 5.5), dpi=110)
    for b in bots:
        xs = [n for n, point in history if b in point]
        ys = [point[b] for _, point in history if b in point]
        label = printable(b, 40).replace("$", r"\$")  # a name is text, never mathtext
        label += " (retired)" if b in retired else ""
        style = "--" if b in retired else "-"
        line = ax.plot(xs, [y.elo for y in ys], style, marker="o", markersize=3, label=label)[0]
        ax.fill_between(  # no band where the rating has no finite interval yet
            xs,
            [y.low if y.in_field else math.nan for y in ys],
            [y.high if y.in_field else math.nan for y in ys],
            color=line.get_color(),
            alpha=0.12,
            linewidth=0,
        )
    ax.axhline(0, color="grey", linewidth=0.6)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("matches finished")
    ax.set_ylabel("Elo (field mean 0); band: 95% interval")
    ax.set_title(title.replace("$", r"\$"), fontsize=11)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    try:
        fig.savefig(out)
    except OSError as exc:
        raise _fail(f"--out {out}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)


@ladder_app.command("plot")
def ladder_plot(
    name: LadderOpt = "default",
    db: DbOpt = "arena.db",
    out: Annotated[
        Path | None,
        typer.Option(help="Write the chart here (.svg, .png or .pdf; needs matplotlib)."),
    ] = None,
    source: Annotated[
        str,
        typer.Option(
            "--from",
            help="snapshots (stored at the end of each `ladder run`), matches (the ratings "
            "fitted again after every tenth or so of the finished matches) or auto "
            "(snapshots when there are two or more).",
        ),
    ] = "auto",
    points: Annotated[int, typer.Option(min=2, help="Points in time with --from matches.")] = 12,
) -> None:
    """Each bot's rating over time: an image with --out, else in the terminal.

    The Elo of each bot (with its 95% interval, as a band in the image) after
    each point in time: the snapshots `arena ladder run` stores when it ends,
    or the ratings fitted again over the finished matches (--from matches,
    also what auto uses while there are fewer than two snapshots).
    Retired bots are drawn too: their history stays.

    Example: arena ladder plot --out ratings.svg
    """
    if source not in ("auto", "snapshots", "matches"):
        raise _fail(f"--from {source!r}: choose auto, snapshots or matches")
    if out is not None and out.suffix.lower() not in (".svg", ".png", ".pdf"):
        raise _fail(f"--out {out}: give a .svg, .png or .pdf file")
    from ..ladder import queries

    engine, ladder_id = open_ladder(db, name, RUN_MAKES_ONE)
    retired = queries.retired_labels(engine, ladder_id)
    history, used = queries.rating_history(engine, ladder_id, source, points)
    if not history:
        raise _fail(f"ladder {name!r} has no ratings yet: `arena ladder run` plays its matches")
    what = "a snapshot per run" if used == "snapshots" else "fitted again over the matches"
    title = f"Ladder {printable(name, 40)}: rating over time ({what})"
    if out is None:
        console = Console(highlight=False)
        console.print(_shown(title))
        text_chart(history, console, retired)
        return
    draw(history, title, out, retired)
    Console(highlight=False).print(_shown(f"wrote {out} ({len(history)} points in time, {what})"))


# ----- arena replay MATCH_ID ---------------------------------------------------------------
def ladder_record(
    db: str, match_id: int, ladder: str | None
) -> tuple[Iterator[tuple[int, dict[str, Any]]], str]:
    """A ladder match's kept record for ``arena replay``: its events, read from the
    database with a record file's bounds, and the name it goes by (``ladder 'x' match 42``,
    in what is shown and in errors — never a temporary file's path)."""
    from bigtwo.record import read_text_events

    from ..ladder import queries

    engine = open_db(db, RUN_MAKES_ONE)
    try:
        with store_errors():
            data, label = queries.match_record(engine, match_id, ladder, db)
    finally:
        engine.dispose()
    name = printable(label, 120)
    # the arena wrote it as UTF-8 JSON; a damaged byte fails the check at its line
    return read_text_events(data.decode("utf-8", errors="replace"), name), name
