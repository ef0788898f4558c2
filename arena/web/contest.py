"""The contest a web arena serves: one ladder of the store, its settings, and the data each
page shows, read through the ladder's own functions (``arena.ladder.leaderboard``,
``arena.ladder.queries``) so that a number on a page and in ``arena ladder show`` can never
differ.

The leaderboard is fitted on every finished match, which takes minutes on a big ladder, so
it is fitted apart — by the worker (``arena worker``, ``arena serve --play``'s child), in a
process of its own — and stored in the database with the ladder state it reflects; pages
read the stored one (see :class:`StandingsCache`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from bigtwo import RuleSet

from ..ladder.leaderboard import leaderboard
from ..ladder.store import Bot, BotVersion, Entry, Ladder, Match, MatchSeat
from .childproc import background_fitter
from .uploads import UploadLimits
from .worker_state import fit_meta, fit_rows, state_key, store_fit, worker_info

DEFAULT_LADDER = "contest"
DEFAULT_SETTINGS: dict[str, Any] = {
    "deals": 4,
    "rotations": 4,
    "sandbox": "auto",
    "time_control": {},
}
PUBLIC_SETTINGS = ("deals", "rotations", "sandbox", "time_control")
"""What pages may show of a ladder's settings: never ``deal_key`` (the secret the deals are
keyed with) nor the join code."""


@dataclass
class WebConfig:
    """How ``arena serve`` was started."""

    db: str
    ladder: str = DEFAULT_LADDER
    data: Path | None = None
    """Where uploaded bots are unpacked to be played (default: beside a SQLite file)."""
    play: bool = False
    """Start the worker (``arena worker``: checks uploads, plays, refits) as a child process."""
    jobs: int = 1
    sandbox: str = "auto"
    executor: str = "local"
    ray_address: str | None = None
    secure_cookies: bool = False
    house_bots: bool = True
    """Enter the sample bots when the contest is created."""
    matches: bool = True
    """The worker plays the ladder's matches (off: it checks uploads and keeps the standings
    only, while ``arena ladder run`` plays elsewhere)."""
    check_slots: int = 2
    """Entry checks run at once, beside the matches (one account holds at most one)."""
    check_cap: float = 300.0
    """Wall-clock seconds one entry check may take."""
    check_budget: float = 1800.0
    """Seconds of entry checks per account per UTC day."""
    login_limits: tuple[int, int] = (10, 100)
    """Sign-in (and sign-up) attempts per 5 minutes: per account, per address."""
    upload_limits: tuple[int, int] = (20, 200)
    """Uploads per hour: per account, per address."""
    local_play: bool = False
    """``arena play``: one person on the loopback address, no accounts; the Play page only."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Settings for tests and ``arena play``: ``human_move_ms`` (a person's move time),
    ``play_rules`` (the Play form's default rules)."""

    def data_dir(self) -> Path:
        if self.data is not None:
            return self.data
        if "://" in self.db:
            raise ValueError("give --data DIR: where uploaded bots are unpacked to be played")
        return Path(self.db).expanduser().resolve().with_name(Path(self.db).name + ".bots")


def ensure_contest(engine: Engine, config: WebConfig) -> None:
    """The contest's ladder, created on first start with the hk preset (the organizer may
    change the rules until the first match is played), a random join code and the house
    bots."""
    created = False
    with Session(engine) as session, session.begin():
        ladder = session.scalar(select(Ladder).where(Ladder.name == config.ladder))
        if ladder is None:
            settings = {
                **DEFAULT_SETTINGS,
                "sandbox": config.sandbox,
                "join_code": secrets.token_urlsafe(6),
                "upload_limits": UploadLimits().to_dict(),
            }
            session.add(
                Ladder(name=config.ladder, rules=RuleSet.preset("hk").to_dict(), settings=settings)
            )
            created = True
        elif "join_code" not in ladder.settings:  # a ladder made by `arena ladder`
            ladder.settings = {
                **ladder.settings,
                "join_code": secrets.token_urlsafe(6),
                "upload_limits": UploadLimits().to_dict(),
            }
    if created and config.house_bots:
        enter_house_bots(engine, config.ladder)


HOUSE_BOTS = ("random", "greedy", "heuristic")


def enter_house_bots(engine: Engine, name: str) -> None:
    """The sample bots, entered when the contest is created: reference opponents from weak
    to strong, and a first upload has matches to play at once."""
    from ..bots import bot_digest, bot_files, resolve, sample_names
    from ..ladder.queries import enter_bots

    specs = [resolve(b) for b in HOUSE_BOTS if b in sample_names()]
    enter_bots(engine, name, [(s.name, s.runner_spec, bot_digest(bot_files(s))) for s in specs])


def ladder_row(session: Session, name: str) -> Ladder:
    ladder = session.scalar(select(Ladder).where(Ladder.name == name))
    if ladder is None:
        raise LookupError(f"no ladder named {name!r}")
    return ladder


def contest_settings(engine: Engine, name: str) -> dict[str, Any]:
    with Session(engine) as session:
        return dict(ladder_row(session, name).settings)


def contest_rules(engine: Engine, name: str) -> RuleSet:
    with Session(engine) as session:
        return RuleSet.from_dict(ladder_row(session, name).rules)


def played_any(engine: Engine, name: str) -> bool:
    with Session(engine) as session:
        ladder = ladder_row(session, name)
        return (
            session.scalar(
                select(Match.id)
                .where(Match.ladder_id == ladder.id, Match.status == "done")
                .limit(1)
            )
            is not None
        )


def update_settings(engine: Engine, name: str, **changes: Any) -> None:
    with Session(engine) as session, session.begin():
        ladder = ladder_row(session, name)
        ladder.settings = {**ladder.settings, **changes}


def set_rules(engine: Engine, name: str, rules: RuleSet) -> None:
    """The contest's rules; refused once a match has been played (its ratings would mix
    two games)."""
    with Session(engine) as session, session.begin():
        ladder = ladder_row(session, name)
        started = session.scalar(
            select(Match.id).where(Match.ladder_id == ladder.id, Match.status != "pending").limit(1)
        )
        if started is not None:
            raise ValueError("the rules cannot change once a match has been played")
        # matches planned for the old rules are planned again for the new
        planned = select(Match.id).where(Match.ladder_id == ladder.id)
        session.execute(delete(MatchSeat).where(MatchSeat.match_id.in_(planned)))
        session.execute(delete(Match).where(Match.ladder_id == ladder.id))
        ladder.rules = rules.to_dict()


# ----- the leaderboard, fitted apart and stored -------------------------------------------
def _state_in(session: Session, name: str) -> tuple[Any, ...]:
    ladder = ladder_row(session, name)
    done = session.execute(
        select(func.count(), func.max(Match.id)).where(
            Match.ladder_id == ladder.id, Match.status == "done"
        )
    ).one()
    entries = tuple(
        tuple(row)
        for row in session.execute(
            select(Entry.version_id, Entry.retired, Entry.paused)
            .where(Entry.ladder_id == ladder.id)
            .order_by(Entry.version_id)
        )
    )
    return (ladder.id, *done, entries)


def ladder_state(engine: Engine, name: str) -> tuple[Any, ...]:
    """What the leaderboard depends on: the finished matches and the entries (retired or
    paused changes which rows show).  Two cheap aggregate queries."""
    with Session(engine) as session:
        return _state_in(session, name)


def fit_standings(engine: Engine, name: str) -> float:
    """Fit the leaderboard on every finished match and store it with the state it was
    fitted at (``worker_state.store_fit``); returns the seconds it took.  The state and the
    matches are read in one transaction (a snapshot on SQLite; REPEATABLE READ asked on
    PostgreSQL), so a match saved meanwhile is in both or in neither."""
    started = time.perf_counter()
    with Session(engine) as session:
        if engine.dialect.name == "postgresql":
            session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
        state = _state_in(session, name)
        _, rows = leaderboard(session, name)
    seconds = time.perf_counter() - started
    store_fit(engine, int(state[0]), state, rows, seconds)
    return seconds


_CHILD_ENGINES: dict[str, Engine] = {}


def fit_in_child(db: str, name: str, snapshot: bool = False) -> float:
    """:func:`fit_standings` in a process of a :class:`FitPool` (the engine kept for the
    process's next fit); with ``snapshot``, a rating snapshot (the history chart's point)
    stored too."""
    engine = _CHILD_ENGINES.get(db)
    if engine is None:
        from ..ladder.store import open_engine

        engine = _CHILD_ENGINES[db] = open_engine(db)
    seconds = fit_standings(engine, name)
    if snapshot:
        from ..ladder.queries import save_snapshot

        save_snapshot(engine, name)
    return seconds


def engine_db(engine: Engine) -> str:
    """The URL another process opens the same store with."""
    return engine.url.render_as_string(hide_password=False)


class FitPool:
    """One process (started on first use, with ``spawn``: a clean interpreter, never a fork
    of a threaded server) that fits the leaderboard and stores it: a fit of 100,000 matches
    takes minutes of CPU, and no page, match or bot ever waits behind it for the
    interpreter.  At most one fit at a time; asking again while one runs returns it."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._running: Future[float] | None = None
        self._lock = threading.Lock()

    def submit(self, db: str, name: str, snapshot: bool = False) -> Future[float]:
        with self._lock:
            if self._running is not None and not self._running.done():
                return self._running
            for _ in range(2):
                if self._pool is None:
                    self._pool = ProcessPoolExecutor(
                        1,
                        mp_context=get_context("spawn"),
                        initializer=background_fitter,
                        initargs=(os.getpid(),),
                    )
                try:
                    self._running = self._pool.submit(fit_in_child, db, name, snapshot)
                    return self._running
                except BrokenProcessPool:  # the fit process died (killed, out of memory)
                    self._pool.shutdown(wait=False, cancel_futures=True)
                    self._pool = None
            raise BrokenProcessPool("the fit process cannot be started")

    def busy(self) -> bool:
        return self._running is not None and not self._running.done()

    def close(self) -> None:
        """Stop now: a fit under way is killed (it stores nothing half-done: its one
        transaction is not committed)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is None:
            return
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            with contextlib.suppress(Exception):
                process.terminate()
        for process in processes:
            with contextlib.suppress(Exception):
                process.join(10)


@dataclass
class Standings:
    state: str
    """The ladder state it was fitted at (``worker_state.state_key``)."""
    rows: list[dict[str, Any]]
    done: int
    serial: int = 0


class StandingsCache:
    """The pages' leaderboard: the fit stored in the database (by the worker, in its own
    processes), parsed once per stored fit.  The web process never fits it in its own
    interpreter.  While a worker runs, a stored fit that trails the ladder is shown as it is
    (the worker refits; ``matches_done`` says what it reflects).  With no worker running
    (``arena serve`` without ``--play`` and no ``arena worker``), a state nobody fitted is
    fitted by this process's :class:`FitPool`: the first time it is waited for, later the
    last standings are shown meanwhile (a ladder of fewer than ``inline_below`` matches is
    fitted here: milliseconds)."""

    inline_below = 500
    """Finished matches below which a fit (tens of milliseconds) is made in this process
    rather than in the pool's (whose start takes seconds): a new or small contest run
    without a worker."""

    def __init__(self, fitter: FitPool | None = None) -> None:
        self.fitter = fitter or FitPool()
        self._kept: Standings | None = None
        self._waited = False
        self._memo: tuple[Any, Any] | None = None
        self._history: tuple[tuple[Any, ...], Any] | None = None
        self._lock = threading.Lock()

    def history(self, engine: Engine, name: str, ladder_id: int, source: Any) -> Any:
        """The rating history (``source``: ``arena.ladder.queries.rating_history``) of the
        ladder's current state, from its stored snapshots, fitted from the matches while
        there are fewer than two."""
        state = ladder_state(engine, name)
        kept = self._history
        if kept is not None and kept[0] == state:
            return kept[1]
        if not self._lock.acquire(blocking=kept is None):
            assert kept is not None
            return kept[1]  # being recomputed: the last one rather than a wait (see get)
        try:
            found = source(engine, ladder_id, "auto", 12)
            self._history = (state, found)
            return found
        finally:
            self._lock.release()

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        """What a page derives from the standings (its charts), kept for the last ``key``:
        drawn once per fit, not once per view."""
        kept = self._memo
        if kept is not None and kept[0] == key:
            return kept[1]
        value = compute()
        self._memo = (key, value)
        return value

    def stored(self, engine: Engine, ladder_id: int) -> Standings | None:
        """The stored fit, re-read only when a newer one was stored."""
        meta = fit_meta(engine, ladder_id)
        kept = self._kept
        if meta is None:
            return kept
        if kept is None or kept.serial != meta.serial:
            found = fit_rows(engine, ladder_id)
            if found is not None:
                meta, rows = found
                kept = self._kept = Standings(meta.state, rows, meta.matches_done, meta.serial)
        return kept

    def get(self, engine: Engine, name: str, wait: float = 3600.0) -> Standings:
        state = ladder_state(engine, name)
        kept = self.stored(engine, int(state[0]))
        if kept is not None and kept.state == state_key(state):
            return kept
        if kept is not None and worker_info(engine, name).alive:
            return kept  # the worker refits it
        if int(state[1] or 0) < self.inline_below:  # a fit of milliseconds: here, at once
            with self._lock:
                fit_standings(engine, name)
            found = self.stored(engine, int(state[0]))
            assert found is not None, "the fit was not stored"
            return found
        running = self.fitter.submit(engine_db(engine), name)
        if kept is not None and self._waited:
            return kept  # fitted meanwhile in the pool's process; the next view shows it
        running.result(timeout=wait)
        self._waited = True
        found = self.stored(engine, int(state[0]))
        assert found is not None, "the fit was not stored"
        return found


# ----- bots and their owners ----------------------------------------------------------------
def bot_versions(session: Session, ladder_id: int, bot_name: str) -> list[dict[str, Any]]:
    bot = session.scalar(select(Bot).where(Bot.name == bot_name))
    if bot is None:
        return []
    entries = {
        e.version_id: e for e in session.scalars(select(Entry).where(Entry.ladder_id == ladder_id))
    }
    out = []
    for v in sorted(bot.versions, key=lambda v: v.number):
        e = entries.get(v.id)
        out.append(
            {
                "version": v.number,
                "label": v.label,
                "created": v.created.isoformat() if v.created else None,
                "entered": e is not None,
                "retired": bool(e and e.retired),
                "paused": bool(e and e.paused),
            }
        )
    return out


def version_labels(session: Session) -> dict[int, str]:
    """Every version's label (``BotVersion.label``'s), in one query: the names are read in
    the same join, never a query per version."""
    return {
        vid: name if number == 1 else f"{name}@v{number}"
        for vid, number, name in session.execute(
            select(BotVersion.id, BotVersion.number, Bot.name).join(
                Bot, BotVersion.bot_id == Bot.id
            )
        )
    }


def head_to_head(
    session: Session, ladder_id: int, ids: list[int], labels: dict[int, str], limit: int = 500
) -> list[dict[str, Any]]:
    """A bot's results against each opponent, from the duplicate deal blocks of its newest
    ``limit`` matches: deals met, deals where it scored more, and its mean lead in points
    per deal (each block's totals over the rotations, as the ratings read them)."""
    from ..ladder.store import DealResult

    recent = (
        select(Match.id)
        .join(MatchSeat, MatchSeat.match_id == Match.id)
        .where(Match.ladder_id == ladder_id, Match.status == "done", MatchSeat.version_id.in_(ids))
        .order_by(Match.id.desc())
        .limit(limit)
    )
    mine = {str(i) for i in ids}
    tally: dict[str, list[float]] = {}
    for (totals,) in session.execute(
        select(DealResult.totals).where(DealResult.match_id.in_(recent.scalar_subquery()))
    ):
        own = [v for k, v in totals.items() if k in mine]
        if not own:
            continue
        for key, points in totals.items():
            if key in mine:
                continue
            label = labels.get(int(key), key)
            t = tally.setdefault(label, [0, 0, 0.0])
            t[0] += 1
            t[1] += own[0] > points
            t[2] += own[0] - points
    return sorted(
        (
            {
                "opponent": label,
                "deals": int(n),
                "ahead": int(ahead),
                "mean_lead": round(lead / n, 2),
            }
            for label, (n, ahead, lead) in tally.items()
        ),
        key=lambda r: (-r["deals"], r["opponent"]),
    )
