"""What the ladder commands ask of and change in the database, as functions over an
:class:`~sqlalchemy.engine.Engine`: find or create a ladder, enter bots, plan, read the
leaderboard, export the deal blocks, list ladders, a bot's faults, retire, rating
history, a match's kept record.

The one home of these operations, so that the ``arena`` command and the web layer run
the same ones and neither holds SQL.  Each function opens its own session and
transaction; a request the database cannot answer as asked (no such ladder, bot or
match) raises :class:`StoreError`, whose message is written for the person who asked
(it may quote names someone else chose: escape it before printing)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, func, inspect, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, joinedload

from bigtwo.record import decompress

from ..public_record import FaultKey, fault_key
from ..text import printable
from .history import History, RatingPoint
from .store import (
    Bot,
    BotVersion,
    DealResult,
    Entry,
    FaultRow,
    Ladder,
    Match,
    MatchRecord,
    RatingSnapshot,
    add_version,
    database_url,
    open_engine,
)


class StoreError(Exception):
    """The database cannot do what was asked; the message says why, for a person."""


# ----- the database and its ladders ---------------------------------------------------------
def database_exists(db: str) -> bool:
    """Whether ``db`` names a database that may exist: any URL, or a SQLite file that does
    (opening a missing file would create an empty one, which only ``ladder run`` should)."""
    return "://" in db or Path(db).exists()


def holds_ladders(db: str) -> bool:
    """Whether ``db`` already has the ladder tables, looked at without creating or
    upgrading anything (``ladder run`` with no bots named starts a new database with the
    sample bots, but never adds them to one that exists)."""
    if not database_exists(db):
        return False
    probe = create_engine(database_url(db))
    try:
        return inspect(probe).has_table("ladders")
    finally:
        probe.dispose()


def connect(db: str) -> Engine:
    """The engine for ``db``, its schema upgraded (:func:`~arena.ladder.store.open_engine`);
    a database that cannot be opened is a :class:`StoreError` naming it."""
    try:
        return open_engine(db)
    except SQLAlchemyError as exc:
        raise StoreError(f"--db {db}: {str(exc).splitlines()[0]}") from None


def ladder_names(session: Session) -> list[str]:
    """Every ladder's name, sorted."""
    return list(session.scalars(select(Ladder.name).order_by(Ladder.name)))


def no_ladder(name: str, names: list[str], db: str) -> str:
    """The error for a ladder name that is not in the database: the names that are."""
    if not names:
        return f"no ladder named {name!r}; {db} holds no ladder yet (`arena ladder run` makes one)"
    shown = ", ".join(printable(n, 60) for n in names[:30])
    more = f" and {len(names) - 30} more (`arena ladder list`)" if len(names) > 30 else ""
    return f"no ladder named {name!r}; ladders here: {shown}{more}"


def ladder_id(engine: Engine, name: str, db: str) -> int:
    """The id of ladder ``name``; an unknown name is a :class:`StoreError` listing the
    ladders there are (``db``: the database as the user named it, for the message)."""
    with Session(engine) as session:
        found = session.scalar(select(Ladder.id).where(Ladder.name == name))
        if found is None:
            raise StoreError(no_ladder(name, ladder_names(session), db))
    return found


def ensure_ladder(
    engine: Engine, name: str, rules: dict | None, settings: dict | None, db: str
) -> tuple[dict, dict]:
    """Ladder ``name``'s rules and settings, creating it with ``rules`` and ``settings``
    when it is new.  Without them (``None``) the ladder must exist; with rules, an existing
    ladder must play the same (its settings stay its own)."""
    with Session(engine) as session, session.begin():
        ladder = session.scalar(select(Ladder).where(Ladder.name == name))
        if ladder is None:
            if rules is None or settings is None:
                raise StoreError(no_ladder(name, ladder_names(session), db))
            ladder = Ladder(name=name, rules=rules, settings=settings)
            session.add(ladder)
            session.flush()
        elif rules is not None and ladder.rules != rules:
            raise StoreError(f"ladder {name!r} plays other rules; give another --name")
        return ladder.rules, dict(ladder.settings)


def is_entered(session: Session, ladder_id: int, bot: str, digest: str | None) -> bool:
    """Whether this version of ``bot`` (its source hash) is already in the ladder."""
    return (
        session.scalar(
            select(Entry.id)
            .join(BotVersion, Entry.version_id == BotVersion.id)
            .join(Bot, BotVersion.bot_id == Bot.id)
            .where(Entry.ladder_id == ladder_id, Bot.name == bot, BotVersion.source_hash == digest)
        )
        is not None
    )


def entered(engine: Engine, name: str, bots: list[tuple[str, str]]) -> list[bool]:
    """For each ``(bot name, source hash)``: whether that version is in ladder ``name``
    already (a new one is checked before it is entered)."""
    with Session(engine) as session:
        ladder = session.scalar(select(Ladder).where(Ladder.name == name))
        assert ladder is not None, "ensure_ladder first"
        return [is_entered(session, ladder.id, bot, digest) for bot, digest in bots]


def enter_bots(engine: Engine, name: str, bots: list[tuple[str, str, str]]) -> None:
    """Enter each ``(bot name, spec as ``arena match`` takes it, source hash)`` in ladder
    ``name``: a bot new to the database is created, changed code is a new version, and a
    version already entered stays as it is."""
    with Session(engine) as session, session.begin():
        ladder = session.scalar(select(Ladder).where(Ladder.name == name))
        assert ladder is not None, "ensure_ladder first"
        for bot, spec, digest in bots:
            version = add_version(session, bot, spec, digest)
            exists = session.scalar(
                select(Entry).where(Entry.ladder_id == ladder.id, Entry.version_id == version.id)
            )
            if exists is None:
                session.add(Entry(ladder_id=ladder.id, version_id=version.id))


# ----- running and rating -------------------------------------------------------------------
def refuse_if_final(engine: Engine, name: str) -> None:
    """A :class:`StoreError` when ladder ``name`` is final or in its final phase
    (:func:`arena.ladder.final.refuse_if_final`): asked before a command that would play
    regular matches changes anything."""
    from . import final

    with Session(engine) as session:
        ladder = session.scalar(select(Ladder).where(Ladder.name == name))
        assert ladder is not None, "ensure_ladder first"
        final.refuse_if_final(ladder)


def plan_ladder(engine: Engine, name: str, rounds: int) -> tuple[int, str]:
    """Plan what ladder ``name`` plays next, up to ``rounds`` rounds in all
    (:func:`arena.ladder.planning.plan`: the next round once the last has finished, a
    newcomer's placement at once); returns how many matches are not played yet and the
    sandbox the ladder asks for.  A plan that cannot be made is a :class:`StoreError`, and so is a
    ladder that is final or in its final phase (:mod:`arena.ladder.final`)."""
    from .final import refuse_if_final
    from .planning import plan

    with Session(engine) as session, session.begin():
        ladder = session.scalar(select(Ladder).where(Ladder.name == name))
        assert ladder is not None, "ensure_ladder first"
        refuse_if_final(ladder)  # final, or in its final phase: no regular match
        try:
            plan(session, ladder, rounds)
        except ValueError as exc:
            raise StoreError(str(exc)) from None
        pending = session.scalar(
            select(func.count())
            .select_from(Match)
            .where(Match.ladder_id == ladder.id, Match.status.in_(("pending", "running")))
        )
        return int(pending or 0), ladder.settings.get("sandbox", "auto")


@dataclass(frozen=True)
class Rounds:
    """Where a ladder's rounds stand: how many are planned, and about how many matches a
    round of its field plays now (every group of a small field; about one match per bot
    of a large one) — ``ladder run`` reckons what is left."""

    planned: int
    round_size: int


def ladder_rounds(engine: Engine, name: str) -> Rounds:
    """Ladder ``name``'s :class:`Rounds`."""
    import math

    from .field import SEATS, is_small
    from .schedule import EXTRA_GROUPS

    with Session(engine) as session:
        lid = session.scalar(select(Ladder.id).where(Ladder.name == name))
        last = session.scalar(select(func.max(Match.round)).where(Match.ladder_id == lid))
        active = session.scalar(
            select(func.count())
            .select_from(Entry)
            .where(Entry.ladder_id == lid, Entry.retired.is_(False), Entry.paused.is_(False))
        )
    n = int(active or 0)
    if n < 2:
        size = 0
    elif n <= SEATS:
        size = 1
    else:
        # a large round: one cover of the field and the extra groups at the top
        size = math.comb(n, SEATS) if is_small(n) else -(-n // SEATS) + EXTRA_GROUPS
    return Rounds(0 if last is None else int(last) + 1, size)


def leaderboard_rows(engine: Engine, name: str, retired: bool = False) -> list[dict[str, Any]]:
    """Ladder ``name``'s leaderboard rows (:func:`arena.ladder.leaderboard.leaderboard`), the
    retired bots too with ``retired``."""
    from .leaderboard import leaderboard

    with Session(engine) as session:
        _, rows = leaderboard(session, name, retired=retired)
    return rows


def save_snapshot(engine: Engine, name: str) -> None:
    """Store the ratings as they stand (``ladder plot`` draws them over time)."""
    from .leaderboard import snapshot

    with Session(engine) as session, session.begin():
        snapshot(session, name)


def export_blocks(engine: Engine, name: str) -> list[dict[str, Any]]:
    """Every finished deal block of ladder ``name``: one dict per match, deal and bot
    version (its label) with the points it scored over the deal's rotations."""
    with Session(engine) as session:
        ladder = session.scalar(select(Ladder).where(Ladder.name == name))
        assert ladder is not None, "ladder_id first"
        labels = {v.id: v.label for v in session.scalars(select(BotVersion))}
        rows = session.execute(
            select(Match.id, DealResult.index, DealResult.seed, DealResult.totals)
            .join(Match)
            .where(Match.ladder_id == ladder.id)
            .order_by(Match.id, DealResult.index)
        ).all()
    return [
        {"match": m, "deal": i, "seed": seed, "bot": labels.get(int(v), v), "points": pts}
        for m, i, seed, totals in rows
        for v, pts in totals.items()
    ]


def ladder_overview(engine: Engine) -> list[dict[str, Any]]:
    """Every ladder, by name: its rules (as stored), bots active and retired, matches
    played and pending (running counts as pending), and when it last finished one."""
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
            rows.append(
                {
                    "name": ladder.name,
                    "rules": ladder.rules,
                    "bots": sum(not e.retired for e in entries),
                    "retired": sum(e.retired for e in entries),
                    "played": status.get("done", 0),
                    "pending": status.get("pending", 0) + status.get("running", 0),
                    "last_played": last.isoformat() if last else None,
                }
            )
    return rows


# ----- bots by name -------------------------------------------------------------------------
def parse_bot(text: str) -> tuple[str, int | None]:
    """``BOT`` (every version) or ``BOT@vN`` (version N), as the leaderboard labels them."""
    base, sep, number = text.rpartition("@v")
    if sep and base and number.isdigit():
        return base, int(number)
    return text, None


def entrants(session: Session, ladder_id: int, bot: str | None = None) -> list[Entry]:
    """The ladder's entries (only bot ``bot``'s when given), with their versions and bots,
    by bot name then version (loaded with them: one query, not two per entry)."""
    query = (
        select(Entry)
        .where(Entry.ladder_id == ladder_id)
        .options(joinedload(Entry.version).joinedload(BotVersion.bot))
    )
    if bot is not None:
        query = query.join(BotVersion, Entry.version_id == BotVersion.id).join(
            Bot, BotVersion.bot_id == Bot.id
        )
        query = query.where(Bot.name == bot)
    found = list(session.scalars(query))
    return sorted(found, key=lambda e: (e.version.bot.name, e.version.number))


def pick_entries(session: Session, ladder_id: int, text: str) -> list[Entry]:
    """The entries ``text`` names (``BOT``: all its versions; ``BOT@vN``: that one); an
    unknown bot or version is a :class:`StoreError` listing what the ladder holds."""
    name, number = parse_bot(text)
    mine = entrants(session, ladder_id, name)
    if not mine:
        every = entrants(session, ladder_id)
        labels = ", ".join(printable(e.version.label, 40) for e in every[:40]) or "none"
        raise StoreError(f"no bot {text!r} in this ladder; its bots: {labels}")
    if number is None:
        return mine
    picked = [e for e in mine if e.version.number == number]
    if not picked:
        versions = ", ".join(f"{name}@v{e.version.number}" for e in mine)
        raise StoreError(f"{name!r} has no version {number} in this ladder; it has: {versions}")
    return picked


def bot_faults(
    engine: Engine, ladder_id: int, bot: str, limit: int, detail_cap: int
) -> tuple[int, dict[str, int], list[dict[str, Any]]]:
    """The faults ``bot`` (``BOT`` or ``BOT@vN``) made in the ladder's matches: how many in
    all, how many of each kind, and the newest ``limit`` as dicts (hands from 0, the
    detail cut at ``detail_cap`` characters)."""
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
                "detail": f.detail[:detail_cap],
            }
            for f, mid in found
        ]
    return int(total or 0), kinds, rows


@dataclass
class Retirement:
    """What ``retire`` (or ``pause``) did: the versions it named, pending matches withdrawn or made
    pending again, the ladder's finished matches and how many of them the versions played."""

    labels: list[str]
    withdrawn: int
    restored: int
    played: int
    mine: int


def retire(engine: Engine, ladder_id: int, bot: str, undo: bool = False) -> Retirement:
    """Retire ``bot`` (``BOT``: every version; ``BOT@vN``: that one) from the ladder, or
    bring it back with ``undo``: its pending matches are withdrawn (or pending again when
    no retired version is left in them); its finished ones stay and keep counting."""
    return _set_out(engine, ladder_id, bot, "retired", not undo)


def pause(engine: Engine, ladder_id: int, bot: str, undo: bool = False) -> Retirement:
    """Pause ``bot`` (it stays on the leaderboard, plays no match) or resume it with
    ``undo``; its pending matches are withdrawn and restored as :func:`retire` does."""
    return _set_out(engine, ladder_id, bot, "paused", not undo)


def _set_out(engine: Engine, ladder_id: int, bot: str, flag: str, value: bool) -> Retirement:
    """Set ``flag`` (``retired`` or ``paused``) of the entries ``bot`` names, then withdraw
    every pending match that holds a retired or paused version and make pending again every
    withdrawn one that holds none."""
    with Session(engine) as session, session.begin():
        picked = pick_entries(session, ladder_id, bot)
        for e in picked:
            setattr(e, flag, value)
        session.flush()
        out = {
            e.version_id
            for e in session.scalars(select(Entry).where(Entry.ladder_id == ladder_id))
            if e.retired or e.paused
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
        done = (Match.ladder_id == ladder_id, Match.status == "done")
        played = session.scalar(select(func.count()).select_from(Match).where(*done))
        mine = sum(
            1
            for seats in session.scalars(select(Match.seats).where(*done))
            if any(v in ids for v in seats)
        )
        labels = [e.version.label for e in picked]
    return Retirement(labels, withdrawn, restored, int(played or 0), mine)


# ----- rating history -----------------------------------------------------------------------
def retired_labels(engine: Engine, ladder_id: int) -> set[str]:
    """The labels of the ladder's retired versions."""
    with Session(engine) as session:
        return {e.version.label for e in entrants(session, ladder_id) if e.retired}


def from_snapshots(session: Session, ladder_id: int) -> History:
    """The ratings each ``arena ladder run`` stored when it ended."""
    out: History = []
    for snap in session.scalars(
        select(RatingSnapshot)
        .where(RatingSnapshot.ladder_id == ladder_id)
        .order_by(RatingSnapshot.id)
    ):
        point = {
            r["bot"]: RatingPoint(r["elo"], r["elo_low"], r["elo_high"], r.get("in_field", True))
            for r in snap.ratings
            if isinstance(r, dict) and r.get("elo") is not None
        }
        if point:
            out.append((snap.matches, point))
    return out


def from_matches(session: Session, ladder_id: int, points: int) -> History:
    """The ratings as they stood after each of ``points`` evenly spaced numbers of finished
    matches (in the order they finished), fitted again as ``ladder show`` fits them."""
    from .leaderboard import rated_blocks
    from .ratings import fit_plackett_luce

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
                    labels.get(r.bot, str(r.bot)): RatingPoint(r.elo, r.low, r.high, r.in_field)
                    for r in fit.ratings
                },
            )
        )
    return out


def rating_history(engine: Engine, ladder_id: int, source: str, points: int) -> tuple[History, str]:
    """The ladder's ratings over time and where they came from (``snapshots`` or
    ``matches``): ``source`` ``snapshots``, ``matches`` (``points`` fits), or ``auto`` (the
    snapshots when there are two or more, else the matches)."""
    with Session(engine) as session:
        history = [] if source == "matches" else from_snapshots(session, ladder_id)
        if source == "matches" or (source == "auto" and len(history) < 2):
            return from_matches(session, ladder_id, points), "matches"
    return history, "snapshots"


# ----- a match's record ---------------------------------------------------------------------
def match_record(engine: Engine, match_id: int, ladder: str | None, db: str) -> tuple[bytes, str]:
    """A ladder match's kept record (JSON Lines, decompressed) and the name to call it by
    (``ladder 'x' match 42``).  With ``ladder``, the match must be one of its; a match
    that is unknown, unplayed or played before records were kept is a :class:`StoreError`."""
    with Session(engine) as session:
        if (
            ladder is not None
            and session.scalar(select(Ladder.id).where(Ladder.name == ladder)) is None
        ):
            raise StoreError(no_ladder(ladder, ladder_names(session), db))
        match = session.get(Match, match_id)
        owner = session.get(Ladder, match.ladder_id) if match is not None else None
        if match is None or (ladder is not None and owner is not None and owner.name != ladder):
            where = f"ladder {ladder!r}" if ladder is not None else db
            raise StoreError(
                f"no match {match_id} in {where} (`arena ladder faults BOT` names some)"
            )
        assert owner is not None
        rec = session.get(MatchRecord, match_id)
        if rec is None:
            why = (
                "it has not been played yet"
                if match.status != "done"
                else "it was played before ladders kept their records"
            )
            raise StoreError(f"match {match_id} of ladder {owner.name!r} has no record: {why}")
        faults = session.scalars(
            select(FaultRow).where(FaultRow.match_id == match_id).order_by(FaultRow.id)
        ).all()
        return _with_details(decompress(rec.data), match, faults), (
            f"ladder {owner.name!r} match {match_id}"
        )


def fault_details(
    match: Match, faults: Sequence[FaultRow], seats: set[int] | None = None
) -> dict[FaultKey, list[str]]:
    """The details of ``match``'s ``faults`` by the public record's fault key, for ``seats``
    only (every seat: None).  A row kept before faults had a seat stands for every seat of
    its bot version (one owner either way).  The one reader of details for the operator's
    replay and for an owner's view of their own seats."""
    details: dict[FaultKey, list[str]] = {}
    for f in faults:
        where = (
            [f.seat]
            if f.seat is not None
            else [s for s, v in enumerate(match.seats) if v == f.version_id]
        )
        for seat in where:
            key = fault_key(seat, {"kind": f.kind, "hand": f.hand, "turn": f.turn})
            if key is not None and (seats is None or seat in seats):
                details.setdefault(key, []).append(f.detail)
    return details


def _with_details(data: bytes, match: Match, faults: Sequence[FaultRow]) -> bytes:
    """The stored (public) record with each fault's detail put back from the ``faults``
    table: ``arena replay MATCH --db`` is the operator's, who may read every detail."""
    from bigtwo.jsontext import loads_bounded

    from ..public_record import with_details

    details = fault_details(match, faults)
    if not details:
        return data
    items: list[Any] = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            event = loads_bounded(line)
        except ValueError:
            event = None
        items.append(event if isinstance(event, dict) else line)  # a line as it is: the
    out = [  # replay names it
        json.dumps(e, separators=(",", ":")) + "\n" if isinstance(e, dict) else e + "\n"
        for e in with_details(items, details)
    ]
    return "".join(out).encode()
