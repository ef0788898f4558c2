"""The ladder's database: bots and their versions, ladders, planned and finished matches,
deals, moves (replays) and faults.  SQLAlchemy 2; a SQLite file by default (WAL mode),
PostgreSQL by URL, same code.  The schema is created and upgraded by Alembic
(``arena/ladder/migrations``).

A finished match is written in one transaction, so a killed ladder never holds half a
match; a match left ``running`` by a killed run is played again from scratch.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    false,
    select,
)
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

from bigtwo.record import ENCODING, decompress

from ..public_record import public_summary
from ..referee.results import MatchResult

MIGRATIONS = Path(__file__).with_name("migrations")
log = logging.getLogger(__name__)


def _now() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


class Bot(Base):
    __tablename__ = "bots"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    versions: Mapped[list[BotVersion]] = relationship(back_populates="bot")


class BotVersion(Base):
    """One version of a bot: a new source hash is a new version with its own rating."""

    __tablename__ = "bot_versions"
    __table_args__ = (UniqueConstraint("bot_id", "source_hash"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    number: Mapped[int] = mapped_column(Integer)
    source_hash: Mapped[str] = mapped_column(String(64))
    spec: Mapped[str] = mapped_column(Text)  # what `arena match` takes (path[:Class])
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    bot: Mapped[Bot] = relationship(back_populates="versions")

    @property
    def label(self) -> str:
        return self.bot.name if self.number == 1 else f"{self.bot.name}@v{self.number}"


class Ladder(Base):
    __tablename__ = "ladders"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    rules: Mapped[dict] = mapped_column(JSON)
    settings: Mapped[dict] = mapped_column(JSON)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class Entry(Base):
    """A bot version taking part in a ladder.  A retired entry is planned into no new match
    and hidden from the leaderboard by default (a paused one only planned into none); its
    finished matches keep counting for everyone's ratings (they were played, and the others'
    results in them stand)."""

    __tablename__ = "entries"
    __table_args__ = (UniqueConstraint("ladder_id", "version_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    ladder_id: Mapped[int] = mapped_column(ForeignKey("ladders.id"))
    version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"))
    retired: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    paused: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    """Planned into no new match for now, still on the leaderboard (the web arena's
    organizer pauses a bot that misbehaves; a player that cannot start is paused too)."""
    version: Mapped[BotVersion] = relationship()


class Match(Base):
    """A planned match: a group of versions in seat order, its deal seeds and its round."""

    __tablename__ = "matches"
    __table_args__ = (
        UniqueConstraint("ladder_id", "key"),
        # a ladder's finished matches, newest first, counted and paged from the index alone
        # (the web arena's match list and its state check; rows hold big result JSON)
        Index("ix_matches_ladder_id_status_id", "ladder_id", "status", "id"),
        # the ladder's newest round, and a round's matches (planning reads them each round)
        Index("ix_matches_ladder_id_round", "ladder_id", "round"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    ladder_id: Mapped[int] = mapped_column(ForeignKey("ladders.id"))
    key: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), default="pending")  # pending|running|done
    seats: Mapped[list] = mapped_column(JSON)  # version ids in seat order
    deal_seeds: Mapped[list] = mapped_column(JSON)
    round: Mapped[int | None] = mapped_column(Integer, nullable=True)
    """The ladder round that planned it (from 0; a newcomer's placement matches belong to
    the round they were planned in).  None only for a match an older planner made whose
    round could not be recovered (migration 0007 recovers every one it made)."""
    result: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    started: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    deals: Mapped[list[DealResult]] = relationship(back_populates="match")


class MatchSeat(Base):
    """Which version sits in which seat of a match (``Match.seats`` as rows): indexed, so
    listing a bot's matches is a lookup, not a scan of every match's JSON."""

    __tablename__ = "match_seats"
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"), index=True)


class DealResult(Base):
    """One deal of a match, all its rotations: each version's total points (the block the
    ratings use)."""

    __tablename__ = "deals"
    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), index=True)
    index: Mapped[int] = mapped_column(Integer)
    seed: Mapped[str] = mapped_column(String(64))
    totals: Mapped[dict] = mapped_column(JSON)  # version id (str) → points over rotations
    match: Mapped[Match] = relationship(back_populates="deals")


class Move(Base):
    __tablename__ = "moves"
    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), index=True)
    hand: Mapped[int] = mapped_column(Integer)
    turn: Mapped[int] = mapped_column(Integer)
    seat: Mapped[int] = mapped_column(Integer)
    move: Mapped[str] = mapped_column(String(40))
    by_referee: Mapped[bool] = mapped_column(default=False)
    ms: Mapped[float] = mapped_column(Float)


class FaultRow(Base):
    """A fault with its ``detail`` — the bot's own words (its exception, its source line,
    its stderr), private to the bot's owner and the organizer.  The only place a ladder
    keeps a fault's detail: the match's record and result hold the public form only
    (:mod:`arena.public_record`).  ``seat``: None in rows written before it was kept."""

    __tablename__ = "faults"
    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), index=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"), index=True)
    seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    kind: Mapped[str] = mapped_column(String(20))
    hand: Mapped[int | None] = mapped_column(Integer, nullable=True)
    turn: Mapped[int | None] = mapped_column(Integer, nullable=True)
    detail: Mapped[str] = mapped_column(Text)


class MatchRecord(Base):
    """A finished match's record (``arena replay`` reads it): its JSON Lines, gzip-compressed,
    in the database rather than in files beside it, because a PostgreSQL ladder has no
    "beside" (its readers may be on other machines, its writer on a Ray head) and because
    the record is then written in the match's own transaction — never a result without its
    record, nor a record left behind by a match that was not kept.  A table of its own, so
    that reading matches for the ratings never loads the blobs."""

    __tablename__ = "match_records"
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    encoding: Mapped[str] = mapped_column(String(16), default=ENCODING)  # bigtwo.record's
    data: Mapped[bytes] = mapped_column(LargeBinary)
    size: Mapped[int] = mapped_column(Integer)  # uncompressed bytes


class MatchDigest(Base):
    """A finished match's evidence as the ratings read it (:mod:`.digests`: its deal
    blocks in the likelihood's own terms, and its seats' points, hands, places and faults),
    written with the match in its one transaction.  ``id`` is the order digests were
    written in (the order matches finished): the live OpenSkill feedback is rated in it.  A
    refit reads these small rows, never the result JSON of every match."""

    __tablename__ = "match_digests"
    __table_args__ = (Index("ix_match_digests_ladder_id_id", "ladder_id", "id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), unique=True)
    ladder_id: Mapped[int] = mapped_column(ForeignKey("ladders.id"))
    data: Mapped[bytes] = mapped_column(LargeBinary)


class RatingState(Base):
    """The last fit's solution per ladder, to start the next fit from (a warm start): each
    rated version's log-strength, and the OpenSkill ratings after the digests it covers
    (``digests`` of them, the newest ``last_digest``: rated in order, so a later fit goes on
    from them when every digest it reads beyond them is newer)."""

    __tablename__ = "rating_states"
    ladder_id: Mapped[int] = mapped_column(ForeignKey("ladders.id"), primary_key=True)
    digests: Mapped[int] = mapped_column(Integer)
    last_digest: Mapped[int] = mapped_column(Integer)
    theta: Mapped[str] = mapped_column(Text)  # JSON: version id → log-strength
    skill: Mapped[str] = mapped_column(Text)  # JSON: version id → [mu, sigma]
    fitted: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class RatingSnapshot(Base):
    __tablename__ = "rating_snapshots"
    id: Mapped[int] = mapped_column(primary_key=True)
    ladder_id: Mapped[int] = mapped_column(ForeignKey("ladders.id"))
    matches: Mapped[int] = mapped_column(Integer)
    ratings: Mapped[list] = mapped_column(JSON)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


def database_url(db: str) -> str:
    """A URL from what a user types: ``postgresql://…`` (driven by psycopg 3), any other
    SQLAlchemy URL as it is, anything else a SQLite file path."""
    if db.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + db.split("://", 1)[1]
    return db if "://" in db else f"sqlite:///{Path(db).expanduser().resolve()}"


def open_engine(db: str) -> Engine:
    """Engine for ``db``, schema upgraded to the newest migration."""
    url = database_url(db)
    engine = create_engine(url, future=True)
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(conn, _record):  # type: ignore[no-untyped-def]
            cur = conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=10000")
            cur.close()

    upgrade(engine)
    return engine


def upgrade(engine: Engine) -> None:
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


def add_version(session: Session, name: str, spec: str, digest: str) -> BotVersion:
    """The version of ``name`` with this source hash (a new one when the code changed)."""
    bot = session.scalar(select(Bot).where(Bot.name == name))
    if bot is None:
        bot = Bot(name=name)
        session.add(bot)
        session.flush()
    version = session.scalar(
        select(BotVersion).where(BotVersion.bot_id == bot.id, BotVersion.source_hash == digest)
    )
    if version is None:
        number = len(bot.versions) + 1
        version = BotVersion(bot=bot, number=number, source_hash=digest, spec=spec)
        session.add(version)
        session.flush()
    return version


def save_match(
    session: Session,
    match: Match,
    summary: MatchResult,
    totals: list[dict[str, float]],
    moves: list[dict[str, Any]],
    record: bytes | None = None,
) -> None:
    """Everything a finished match produced, in the caller's one transaction; ``record``:
    its public record as gzip-compressed JSON Lines (see ``MatchRecord``;
    ``records.kept_records`` makes it).  The result is kept in its public form; each
    fault's detail goes to the ``faults`` table alone."""
    match.status = "done"
    if record is not None:
        session.add(MatchRecord(match_id=match.id, data=record, size=len(decompress(record))))
    match.finished = _now()
    public = public_summary(summary.to_json())
    match.result = json.loads(json.dumps(public))
    ladder = session.get(Ladder, match.ladder_id)
    if ladder is not None:  # the ratings' digest of it, in the same transaction
        from .digests import match_digest

        try:
            data = match_digest(
                list(match.seats), MatchResult.from_json(public), ladder.settings["rotations"]
            )
        except (ValueError, KeyError, TypeError, IndexError) as exc:  # never lose the match
            log.warning("match %s kept without its digest: %s", match.id, exc)
        else:
            session.add(MatchDigest(match_id=match.id, ladder_id=match.ladder_id, data=data))
    for i, block in enumerate(totals):
        session.add(
            DealResult(match_id=match.id, index=i, seed=str(match.deal_seeds[i]), totals=block)
        )
    for m in moves:
        session.add(
            Move(
                match_id=match.id,
                hand=m["hand"],
                turn=m["turn"],
                seat=m["seat"],
                move=m["move"],
                by_referee=m["by_referee"],
                ms=m["ms"],
            )
        )
    for seat in summary.seats:
        for f in seat.faults:
            session.add(
                FaultRow(
                    match_id=match.id,
                    version_id=match.seats[seat.seat],
                    seat=seat.seat,
                    kind=f.kind,
                    hand=f.hand,
                    turn=f.turn,
                    detail=f.detail or "",
                )
            )
