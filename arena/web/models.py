"""The web arena's tables: accounts, sign-in sessions, API tokens, who owns which bot, and
the uploads (each a bot version's code, its checks and their outcome).

They share the ladder's metadata (``arena.ladder.store.Base``) and its Alembic history, so
one ``open_engine`` creates or upgrades everything, and the web layer reads the ladder's own
tables through the ladder's own functions.  The ladder's tables know nothing of accounts: a
bot entered from the command line simply has no owner.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    Boolean,
    DateTime,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column

from arena.ladder.store import Base


def now() -> datetime:
    return datetime.now(UTC)


class User(Base):
    """An account: the organizer (runs the contest) or a participant (owns bots)."""

    __tablename__ = "users"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(40), unique=True)
    role: Mapped[str] = mapped_column(String(16))  # organizer | participant
    password_hash: Mapped[str] = mapped_column(Text)
    must_change_password: Mapped[bool] = mapped_column(
        Boolean, default=False, server_default=false()
    )
    disabled: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class WebSession(Base):
    """A signed-in browser.  The cookie holds a random token; only its SHA-256 is stored, so
    a copy of the database signs nobody in.  ``csrf`` is the session's form token."""

    __tablename__ = "web_sessions"
    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    csrf: Mapped[str] = mapped_column(String(64))
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    expires: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ApiToken(Base):
    """A per-user token for scripts (``Authorization: Bearer …``), stored as its SHA-256;
    ``prefix`` (its first characters) lets its owner tell tokens apart on the account page."""

    __tablename__ = "api_tokens"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    label: Mapped[str] = mapped_column(String(60))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    last_used: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class BotOwner(Base):
    """Who owns a bot (every version of it): only the owner uploads new versions and reads
    its logs; nobody else ever gets its code."""

    __tablename__ = "bot_owners"
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)


class Upload(Base):
    """One upload: the files that passed the archive checks (kept in the database, so a
    bot's code survives a lost data folder and reaches any machine that plays it), then the
    smoke match's outcome.  ``status``: checking → accepted (entered into the ladder) or
    refused (``reason`` says why, ``log`` holds the end of the bot's own output)."""

    __tablename__ = "uploads"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    bot_name: Mapped[str] = mapped_column(String(100), index=True)
    version_id: Mapped[int | None] = mapped_column(ForeignKey("bot_versions.id"), nullable=True)
    filename: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(16))
    digest: Mapped[str] = mapped_column(String(64))
    files: Mapped[bytes] = mapped_column(LargeBinary)  # bigtwo.record.compress'd JSON
    size: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default="checking")
    reason: Mapped[str] = mapped_column(Text, default="")
    log: Mapped[str] = mapped_column(Text, default="")
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    checked: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class HumanGame(Base):
    """A match a person played in the browser (``/play``, ``arena play``): kept to be
    replayed, never a ladder match, so no rating ever reads it.  ``status``: playing →
    over (``record`` holds the referee's record, compressed) or interrupted (the server
    stopped before the match ended).  ``user_id`` is None for ``arena play``'s local player."""

    __tablename__ = "human_games"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True, index=True)
    seat: Mapped[int] = mapped_column(Integer)
    names: Mapped[str] = mapped_column(Text)  # JSON list, seat order
    rules: Mapped[str] = mapped_column(Text)  # JSON, RuleSet.to_dict
    status: Mapped[str] = mapped_column(String(16), default="playing")
    result: Mapped[str] = mapped_column(Text, default="")  # JSON: scores, places, forfeited
    record: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    finished: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
