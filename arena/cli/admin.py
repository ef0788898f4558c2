"""The organizer's ladder commands — ``arena ladder list``, ``faults``, ``retire`` and
``plot`` — and the ladder side of ``arena replay MATCH_ID``.  Registered on ``ladder_app``
when ``arena.cli`` imports this module (kept apart from cli.py so that the commands an
organizer uses to look after a ladder live in one place).

Every name shown here — ladders', bots', a fault's words — came from someone else (a bot's
file name, its exception text): printed through ``_shown`` / ``printable`` only."""

from __future__ import annotations

import gzip
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from ..text import printable
from . import _fail, _shown, ladder_app

DbOpt = Annotated[str, typer.Option(help="SQLite file or database URL.")]
LadderOpt = Annotated[str, typer.Option("--name", "--ladder", help="Ladder name.")]
DETAIL_CAP = 300
"""A fault's detail as a table shows it (a bot's own words: escaped, then cut)."""
JSON_DETAIL_CAP = 4000


# ----- finding a ladder --------------------------------------------------------------------
def ladder_names(session: Session) -> list[str]:
    from ..ladder.store import Ladder

    return list(session.scalars(select(Ladder.name).order_by(Ladder.name)))


def no_ladder(name: str, names: list[str], db: str) -> str:
    """The error for a ladder name that is not in the database: the names that are."""
    if not names:
        return f"no ladder named {name!r}; {db} holds no ladder yet (`arena ladder run` makes one)"
    shown = ", ".join(printable(n, 60) for n in names[:30])
    more = f" and {len(names) - 30} more (`arena ladder list`)" if len(names) > 30 else ""
    return f"no ladder named {name!r}; ladders here: {shown}{more}"


def open_db(db: str) -> Engine:
    """The database, which must exist (these commands never create one)."""
    from sqlalchemy.exc import SQLAlchemyError

    from ..ladder.store import open_engine

    if "://" not in db and not Path(db).exists():
        raise _fail(f"--db {db}: no such database (`arena ladder run` makes one)")
    try:
        return open_engine(db)
    except SQLAlchemyError as exc:
        raise _fail(f"--db {db}: {str(exc).splitlines()[0]}") from None


def open_ladder(db: str, name: str) -> tuple[Engine, int]:
    """The database and the id of its ladder ``name``; an unknown name is an error that
    lists the ladders there are."""
    from ..ladder.store import Ladder

    engine = open_db(db)
    with Session(engine) as session:
        ladder_id = session.scalar(select(Ladder.id).where(Ladder.name == name))
        if ladder_id is None:
            raise _fail(no_ladder(name, ladder_names(session), db))
    return engine, ladder_id


# ----- bots by name ------------------------------------------------------------------------
def parse_bot(text: str) -> tuple[str, int | None]:
    """``BOT`` (every version) or ``BOT@vN`` (version N), as the leaderboard labels them."""
    base, sep, number = text.rpartition("@v")
    if sep and base and number.isdigit():
        return base, int(number)
    return text, None


def entrants(session: Session, ladder_id: int) -> list[Any]:
    """The ladder's entries, with their versions and bots, by bot name then version."""
    from ..ladder.store import Entry

    found = list(session.scalars(select(Entry).where(Entry.ladder_id == ladder_id)))
    return sorted(found, key=lambda e: (e.version.bot.name, e.version.number))


def pick_entries(session: Session, ladder_id: int, text: str) -> list[Any]:
    """The entries ``text`` names (``BOT``: all its versions; ``BOT@vN``: that one); an
    unknown bot or version is an error that lists what the ladder holds."""
    name, number = parse_bot(text)
    every = entrants(session, ladder_id)
    mine = [e for e in every if e.version.bot.name == name]
    if not mine:
        labels = ", ".join(printable(e.version.label, 40) for e in every[:40]) or "none"
        raise _fail(f"no bot {text!r} in this ladder; its bots: {labels}")
    if number is None:
        return mine
    picked = [e for e in mine if e.version.number == number]
    if not picked:
        versions = ", ".join(f"{name}@v{e.version.number}" for e in mine)
        raise _fail(f"{name!r} has no version {number} in this ladder; it has: {versions}")
    return picked


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

    from ..ladder.store import Entry, Ladder, Match
    from ..replay_view import rules_summary

    engine = open_db(db)
    rows = []
    with Session(engine) as session:
        for ladder in session.scalars(select(Ladder).order_by(Ladder.name)):
            entries = list(session.scalars(select(Entry).where(Entry.ladder_id == ladder.id)))
            status = dict(
                session.execute(
                    select(Match.status, func.count())
                    .where(Match.ladder_id == ladder.id)
                    .group_by(Match.status)
                ).all()
            )
            last = session.scalar(
                select(func.max(Match.finished)).where(Match.ladder_id == ladder.id)
            )
            try:
                rules = rules_summary(RuleSet.from_dict(ladder.rules))
            except Exception:  # a ladder of an older rules format: still listed
                rules = "?"
            rows.append(
                {
                    "name": ladder.name,
                    "rules": rules,
                    "bots": sum(not e.retired for e in entries),
                    "retired": sum(e.retired for e in entries),
                    "played": status.get("done", 0),
                    "pending": status.get("pending", 0) + status.get("running", 0),
                    "last_played": last.isoformat() if last else None,
                }
            )
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
    from ..ladder.store import FaultRow, Match

    engine, ladder_id = open_ladder(db, name)
    with Session(engine) as session:
        picked = pick_entries(session, ladder_id, bot)
        labels = {e.version_id: e.version.label for e in picked}
        where = (Match.ladder_id == ladder_id, FaultRow.version_id.in_(list(labels)))
        total = session.scalar(select(func.count()).select_from(FaultRow).join(Match).where(*where))
        kinds = dict(
            session.execute(
                select(FaultRow.kind, func.count())
                .join(Match)
                .where(*where)
                .group_by(FaultRow.kind)
            ).all()
        )
        found = session.execute(
            select(FaultRow, Match.id)
            .join(Match)
            .where(*where)
            .order_by(Match.id.desc(), FaultRow.id.desc())
            .limit(limit)
        ).all()
        rows = [
            {
                "match": mid,
                "bot": labels[f.version_id],
                "hand": f.hand,  # from 0, as in all JSON and records
                "turn": f.turn,
                "kind": f.kind,
                "detail": f.detail[:JSON_DETAIL_CAP],
            }
            for f, mid in found
        ]
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
    from ..ladder.store import Match

    engine, ladder_id = open_ladder(db, name)
    with Session(engine) as session, session.begin():
        picked = pick_entries(session, ladder_id, bot)
        for e in picked:
            e.retired = not undo
        session.flush()
        from ..ladder.store import Entry

        out = {
            e.version_id
            for e in session.scalars(select(Entry).where(Entry.ladder_id == ladder_id))
            if e.retired
        }
        withdrawn = restored = 0
        for m in session.scalars(
            select(Match).where(
                Match.ladder_id == ladder_id, Match.status.in_(("pending", "withdrawn"))
            )
        ):
            holds = any(v in out for v in m.seats)
            if m.status == "pending" and holds:
                m.status, withdrawn = "withdrawn", withdrawn + 1
            elif m.status == "withdrawn" and not holds:
                m.status, restored = "pending", restored + 1
        ids = [e.version_id for e in picked]
        played = session.scalar(
            select(func.count())
            .select_from(Match)
            .where(Match.ladder_id == ladder_id, Match.status == "done")
        )
        mine = sum(
            1
            for seats in session.scalars(
                select(Match.seats).where(Match.ladder_id == ladder_id, Match.status == "done")
            )
            if any(v in ids for v in seats)
        )
        labels = ", ".join(printable(e.version.label, 40) for e in picked)
    console = Console(highlight=False)
    if undo:
        console.print(
            _shown(
                f"back in ladder '{printable(name, 60)}': {labels}; {restored} withdrawn "
                "match(es) pending again; the next `arena ladder run` plans its new matches"
            )
        )
        return
    console.print(
        _shown(
            f"retired from ladder '{printable(name, 60)}': {labels}. No new matches "
            f"({withdrawn} pending withdrawn); its {mine} finished match(es) of {played} keep "
            "counting for the others' ratings. `arena ladder show --all` shows it."
        )
    )


# ----- arena ladder plot -------------------------------------------------------------------
History = list[tuple[int, dict[str, tuple[float, float, float, bool]]]]
"""Points in time: (matches finished, bot → (Elo, low, high, in the main field)); outside
the main field a rating has no finite interval (see ``ratings``), so none is drawn."""


def from_snapshots(session: Session, ladder_id: int) -> History:
    """The ratings each ``arena ladder run`` stored when it ended."""
    from ..ladder.store import RatingSnapshot

    out: History = []
    for snap in session.scalars(
        select(RatingSnapshot)
        .where(RatingSnapshot.ladder_id == ladder_id)
        .order_by(RatingSnapshot.id)
    ):
        point = {
            r["bot"]: (r["elo"], r["elo_low"], r["elo_high"], r.get("in_field", True))
            for r in snap.ratings
            if isinstance(r, dict) and r.get("elo") is not None
        }
        if point:
            out.append((snap.matches, point))
    return out


def from_matches(session: Session, ladder_id: int, points: int) -> History:
    """The ratings as they stood after each of ``points`` evenly spaced numbers of finished
    matches (in the order they finished), fitted again as ``ladder show`` fits them."""
    from ..ladder.ratings import fit_plackett_luce
    from ..ladder.runner import rated_blocks
    from ..ladder.store import BotVersion, Ladder, Match

    ladder = session.get(Ladder, ladder_id)
    assert ladder is not None
    done = list(
        session.scalars(
            select(Match)
            .where(Match.ladder_id == ladder_id, Match.status == "done")
            .order_by(Match.finished, Match.id)
        )
    )
    labels = {v.id: v.label for v in session.scalars(select(BotVersion))}
    rotations = ladder.settings["rotations"]
    marks = sorted({max(1, round(len(done) * k / points)) for k in range(1, points + 1)})
    out: History = []
    for n in marks if done else []:
        blocks = rated_blocks(done[:n], rotations)
        if len({b for block in blocks for order in block for b in order}) < 2:
            continue
        fit = fit_plackett_luce(blocks)
        out.append(
            (
                n,
                {
                    labels.get(r.bot, str(r.bot)): (r.elo, r.low, r.high, r.in_field)
                    for r in fit.ratings
                },
            )
        )
    return out


SPARK = "▁▂▃▄▅▆▇█"


def text_chart(history: History, console: Console, retired: set[str]) -> None:
    """Each bot's Elo over time as a line of blocks on one scale shared by all bots."""
    bots = sorted(
        {b for _, point in history for b in point},
        key=lambda b: -history[-1][1].get(b, (-math.inf,))[0],
    )
    values = [v[0] for _, point in history for v in point.values()]
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
                level = 0 if hi == lo else round((point[b][0] - lo) / (hi - lo) * (len(SPARK) - 1))
                spark += SPARK[level]
        mine = [point[b][0] for _, point in history if b in point]
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
        key=lambda b: -history[-1][1].get(b, (-math.inf,))[0],
    )
    fig, ax = plt.subplots(figsize=(9, 5.5), dpi=110)
    for b in bots:
        xs = [n for n, point in history if b in point]
        ys = [point[b] for _, point in history if b in point]
        label = printable(b, 40).replace("$", r"\$")  # a name is text, never mathtext
        label += " (retired)" if b in retired else ""
        style = "--" if b in retired else "-"
        line = ax.plot(xs, [y[0] for y in ys], style, marker="o", markersize=3, label=label)[0]
        bounded = [y if y[3] else (y[0], math.nan, math.nan, False) for y in ys]
        ax.fill_between(  # no band where the rating has no finite interval yet
            xs,
            [y[1] for y in bounded],
            [y[2] for y in bounded],
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
    engine, ladder_id = open_ladder(db, name)
    with Session(engine) as session:
        retired = {e.version.label for e in entrants(session, ladder_id) if e.retired}
        history = [] if source == "matches" else from_snapshots(session, ladder_id)
        used = "snapshots"
        if source == "matches" or (source == "auto" and len(history) < 2):
            history, used = from_matches(session, ladder_id, points), "matches"
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
class NamedRecord(os.PathLike):
    """A record file that ``arena replay`` names as the ladder match it is (its messages
    say ``ladder 'x' match 42:57``, not a temporary file's path)."""

    def __init__(self, path: Path, label: str) -> None:
        self.path, self.label = path, label

    def __fspath__(self) -> str:
        return str(self.path)

    def __str__(self) -> str:
        return self.label


@contextmanager
def ladder_record(db: str, match_id: int, ladder: str | None) -> Iterator[NamedRecord]:
    """A ladder match's kept record as a file for ``arena replay`` (removed afterwards)."""
    from ..ladder.store import Ladder, Match, MatchRecord

    engine = open_db(db)
    with Session(engine) as session:
        if (
            ladder is not None
            and session.scalar(select(Ladder.id).where(Ladder.name == ladder)) is None
        ):
            raise _fail(no_ladder(ladder, ladder_names(session), db))
        match = session.get(Match, match_id)
        owner = session.get(Ladder, match.ladder_id) if match is not None else None
        if match is None or (ladder is not None and owner is not None and owner.name != ladder):
            where = f"ladder {ladder!r}" if ladder is not None else db
            raise _fail(f"no match {match_id} in {where} (`arena ladder faults BOT` names some)")
        assert owner is not None
        rec = session.get(MatchRecord, match_id)
        if rec is None:
            why = (
                "it has not been played yet"
                if match.status != "done"
                else "it was played before ladders kept their records"
            )
            raise _fail(f"match {match_id} of ladder {owner.name!r} has no record: {why}")
        data = gzip.decompress(rec.data)
        label = f"ladder {owner.name!r} match {match_id}"
    engine.dispose()
    fd, tmp = tempfile.mkstemp(prefix=f"ladder-match-{match_id}-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        yield NamedRecord(Path(tmp), printable(label, 120))
    finally:
        Path(tmp).unlink(missing_ok=True)
