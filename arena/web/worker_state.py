"""What the web process and the worker (``arena worker``, or ``arena serve --play``'s child)
tell each other, through the database only: no shared memory, so either may run alone,
restart, or run on another machine against the same PostgreSQL.

- ``worker_status``: one row per ladder — the worker's pid and host, its heartbeat, the
  last error of its cycle (the organizer's page shows it), and ``nudge``, a counter the
  pages bump when there is new work (an upload, a resumed bot) so the worker starts a cycle
  now rather than at its next poll.
- ``standings_fits``: the latest fitted leaderboard per ladder, with the ladder state it
  was fitted at (see :func:`arena.web.contest.ladder_state`), written in one transaction by
  the process that fitted it.  The web process only reads it: a fit of 100,000 matches
  takes minutes and never runs in the server's interpreter.
- ``check_charges``: seconds of entry checks each account used per UTC day, the budget
  that stops one account's slow uploads from taking the checking slots all day.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import DateTime, Float, ForeignKey, Integer, String, Text, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Mapped, Session, mapped_column

from arena.ladder.store import Base

ALIVE_WITHIN = 20.0
"""A worker whose heartbeat is older than this many seconds is taken for dead."""


def now() -> datetime:
    return datetime.now(UTC)


def _aware(moment: datetime | None) -> datetime | None:
    """SQLite returns naive datetimes (stored as UTC)."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


class WorkerStatus(Base):
    __tablename__ = "worker_status"
    ladder: Mapped[str] = mapped_column(String(100), primary_key=True)
    pid: Mapped[int] = mapped_column(Integer, default=0)
    host: Mapped[str] = mapped_column(String(255), default="")
    started: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    heartbeat: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    last_error: Mapped[str] = mapped_column(Text, default="")
    nudge: Mapped[int] = mapped_column(Integer, default=0)


class StandingsFit(Base):
    __tablename__ = "standings_fits"
    ladder_id: Mapped[int] = mapped_column(ForeignKey("ladders.id"), primary_key=True)
    state: Mapped[str] = mapped_column(Text)  # JSON of ladder_state()
    matches_done: Mapped[int] = mapped_column(Integer)
    rows: Mapped[str] = mapped_column(Text)  # JSON list: the leaderboard's rows
    fitted: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    seconds: Mapped[float] = mapped_column(Float)
    serial: Mapped[int] = mapped_column(Integer)  # +1 per write: readers re-read on change


class CheckCharge(Base):
    __tablename__ = "check_charges"
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True)
    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # UTC, YYYY-MM-DD
    seconds: Mapped[float] = mapped_column(Float, default=0.0)


# ----- the worker's status and the pages' nudge -------------------------------------------
@dataclass(frozen=True)
class WorkerInfo:
    """What the pages show of the worker."""

    alive: bool
    pid: int
    host: str
    last_error: str
    heartbeat_age: float | None
    """Seconds since the last heartbeat (None: no worker ever ran for this ladder)."""


def _status_row(session: Session, ladder: str) -> WorkerStatus:
    row = session.get(WorkerStatus, ladder)
    if row is None:
        row = WorkerStatus(ladder=ladder, pid=0, host="", last_error="", nudge=0)
        session.add(row)
        session.flush()
    return row


def worker_started(engine: Engine, ladder: str) -> int:
    """This process is the ladder's worker now; returns the nudge counter to watch."""
    with Session(engine) as session, session.begin():
        row = _status_row(session, ladder)
        row.pid, row.host = os.getpid(), socket.gethostname()[:255]
        row.started = row.heartbeat = now()
        row.last_error = ""
        return int(row.nudge)


def heartbeat(engine: Engine, ladder: str, last_error: str | None = None) -> int:
    """The worker is alive (and its cycle's last error, "" once a cycle worked); returns
    the nudge counter."""
    with Session(engine) as session, session.begin():
        row = _status_row(session, ladder)
        row.heartbeat = now()
        row.pid, row.host = os.getpid(), socket.gethostname()[:255]
        if last_error is not None:
            row.last_error = last_error[:2000]
        return int(row.nudge)


def worker_stopped(engine: Engine, ladder: str) -> None:
    """A clean exit: the pages say no worker runs at once, not after ``ALIVE_WITHIN``."""
    with Session(engine) as session, session.begin():
        session.execute(
            update(WorkerStatus)
            .where(WorkerStatus.ladder == ladder, WorkerStatus.pid == os.getpid())
            .values(heartbeat=None)
        )


def nudge(engine: Engine, ladder: str) -> None:
    """New work for the worker (an upload, a resumed bot): it starts a cycle within a
    second instead of at its next idle poll."""
    with Session(engine) as session, session.begin():
        row = _status_row(session, ladder)
        row.nudge = int(row.nudge) + 1


def worker_info(engine: Engine, ladder: str) -> WorkerInfo:
    with Session(engine) as session:
        row = session.get(WorkerStatus, ladder)
        if row is None:
            return WorkerInfo(False, 0, "", "", None)
        beat = _aware(row.heartbeat)
        age = (now() - beat).total_seconds() if beat is not None else None
        alive = age is not None and age < ALIVE_WITHIN and _may_run(row.pid, row.host)
        return WorkerInfo(alive, row.pid, row.host, row.last_error or "", age)


def _may_run(pid: int, host: str) -> bool:
    """Whether the worker a fresh heartbeat names may still run: on another host we cannot
    tell (yes); on this one, whether that process exists (a worker killed outright leaves
    its heartbeat fresh for ``ALIVE_WITHIN`` seconds)."""
    if host != socket.gethostname()[:255]:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# ----- the stored standings -----------------------------------------------------------------
@dataclass(frozen=True)
class FitMeta:
    serial: int
    state: str
    matches_done: int
    seconds: float


def state_key(state: tuple[Any, ...]) -> str:
    """``ladder_state()`` as the JSON text stored beside the fit."""
    return json.dumps(state, separators=(",", ":"))


def fit_meta(engine: Engine, ladder_id: int) -> FitMeta | None:
    """The stored fit's serial and state, without its rows (cheap: read on every view)."""
    with Session(engine) as session:
        row = session.execute(
            select(
                StandingsFit.serial,
                StandingsFit.state,
                StandingsFit.matches_done,
                StandingsFit.seconds,
            ).where(StandingsFit.ladder_id == ladder_id)
        ).first()
    return FitMeta(*row) if row is not None else None


def fit_rows(engine: Engine, ladder_id: int) -> tuple[FitMeta, list[dict[str, Any]]] | None:
    with Session(engine) as session:
        row = session.get(StandingsFit, ladder_id)
        if row is None:
            return None
        meta = FitMeta(row.serial, row.state, row.matches_done, row.seconds)
        return meta, json.loads(row.rows)


def store_fit(
    engine: Engine,
    ladder_id: int,
    state: tuple[Any, ...],
    rows: list[dict[str, Any]],
    seconds: float,
) -> bool:
    """Keep this fit unless a fit of a later state is stored already (two fitters, e.g. a
    worker and a web process that started without one, never move the standings back).
    One transaction: a reader sees the old fit or the new, never half of one."""
    done, last = int(state[1] or 0), int(state[2] or 0)
    with Session(engine) as session, session.begin():
        row = session.get(StandingsFit, ladder_id)
        if row is not None:
            old = json.loads(row.state)
            if (int(old[1] or 0), int(old[2] or 0)) > (done, last):
                return False
        if row is None:
            row = StandingsFit(ladder_id=ladder_id, serial=0)
            session.add(row)
        row.state = state_key(state)
        row.matches_done = done
        row.rows = json.dumps(rows, separators=(",", ":"))
        row.fitted = now()
        row.seconds = float(seconds)
        row.serial = int(row.serial or 0) + 1
    return True


# ----- entry-check budgets ------------------------------------------------------------------
def today() -> str:
    return now().strftime("%Y-%m-%d")


def until_tomorrow() -> float:
    moment = now()
    tomorrow = (moment + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return (tomorrow - moment).total_seconds()


def charged_today(engine: Engine, user_id: int) -> float:
    with Session(engine) as session:
        row = session.get(CheckCharge, (user_id, today()))
        return float(row.seconds) if row is not None else 0.0


def charge(engine: Engine, user_id: int, seconds: float) -> None:
    with Session(engine) as session, session.begin():
        row = session.get(CheckCharge, (user_id, today()))
        if row is None:
            session.add(CheckCharge(user_id=user_id, day=today(), seconds=float(seconds)))
        else:
            row.seconds = float(row.seconds) + float(seconds)
