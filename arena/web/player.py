"""The worker: checks uploads, plays the ladder and keeps its standings fitted, in a process
of its own (``arena worker``, or the child ``arena serve --play`` starts and restarts), never
in the web server's interpreter — a refit of 100,000 matches, a slow bot's start or a long
entry check never holds a page.  It talks to the web process through the database only
(``arena.web.worker_state``): its heartbeat and last error, the pages' nudge when there is
new work, and the fitted standings it stores.

Three loops share its event loop (the matches and checks are asyncio already):

- **entry checks** (``arena.validation``: a hand against copies of itself, in the contest's
  sandbox and time control) in their own slots (``--check-slots``), beside the matches, so
  an upload never waits for a round to end.  The next upload is picked round-robin by
  account (the account served longest ago first, one check per account at a time), so one
  account's slow or many uploads never hold another's.  Each check has a wall-clock cap
  (``--check-cap``), and each account a budget of check-seconds per UTC day
  (``--check-budget``), charged with the wall time its checks ran; a check that would
  exceed it is stopped there and the upload refused with a clear reason.  An upload that
  passes is entered, the bot's older version retired (its ratings history stays).
- **matches**: when the last round's matches have all finished, the next round is planned
  (``arena.ladder.planning.plan``, as ``arena ladder run`` plans: every active bot seated)
  and played (``arena.ladder.running.run_pending``), until every bot has its
  ``matches_per_bot``.  A bot entered while a round is played gets its placement matches
  as soon as the upload passes, played before the next round.  A bot that cannot start is
  paused and the rest play on.
- **standings**: whenever the ladder's state moved (a match finished, an entry changed),
  the leaderboard is refitted in a process of its own (``contest.FitPool``) and stored;
  while matches are being played at most every ``REFIT_EVERY`` seconds and at most
  ``REFIT_SHARE`` of the time, at once when play rests.  A rating snapshot (the history
  chart's point) is stored the same way, at most every ``SNAPSHOT_EVERY`` seconds.

Everything a bot does is contained by the match runner; anything else that goes wrong is
logged, shown on the organizer's page and retried after a pause, never allowed to end the
worker.  Stopping it (SIGTERM, Ctrl-C) cancels the matches in flight — the finished ones are
kept, the others played again at the next start — and kills a fit under way.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from ..bots import BotSpecError, as_authored, resolve
from ..ladder.queries import (
    StoreError,
    enter_bots,
    entrants,
    ladder_rounds,
    pause,
    plan_ladder,
    retire,
)
from ..ladder.running import BotCannotStart, run_pending
from ..ladder.store import Entry, Ladder
from ..referee.results import MatchResult
from ..referee.time_control import TimeControl
from ..sandbox.base import SandboxUnavailable
from .botstore import bot_folder, collect_refused, finish_upload, unpack
from .contest import (
    FitPool,
    WebConfig,
    contest_rules,
    contest_settings,
    engine_db,
    ladder_row,
    ladder_state,
)
from .models import Upload
from .worker_state import (
    charge,
    charged_today,
    fit_meta,
    heartbeat,
    state_key,
    until_tomorrow,
    worker_info,
    worker_started,
    worker_stopped,
)

log = logging.getLogger("arena.web.player")
LOG_TAIL = 8000
IDLE_SECONDS = 3.0
POLL_SECONDS = 1.0
"""How often the worker reads the pages' nudge (a cheap one-row read)."""
HEARTBEAT_EVERY = 5.0
SNAPSHOT_EVERY = 60.0
"""Seconds at least between stored rating snapshots (the history chart's points) while
playing."""
MATCHES_PER_BOT = 200
"""The player rests once every active bot has played this many matches (the ladder
setting ``matches_per_bot``; the organizer's page changes it): ratings have settled long
before, and a ladder that grows for ever only makes every refit slower.  A new bot or
version starts it again."""
REFIT_EVERY = 10.0
"""Seconds at least between refits of the standings while matches finish."""
REFIT_SHARE = 0.2
"""At most this share of the time goes to refits (and to snapshots) while matches play: the
fit has a process of its own, but shares the machine's cores with the matches' bots."""
RETRY_CHECK = 30.0
"""Seconds before an upload whose check failed on the server's side is tried again."""


class AnotherWorker(RuntimeError):
    """A worker for this ladder already runs (its heartbeat is fresh)."""


@dataclass
class _Pick:
    upload_id: int
    user_id: int
    name: str
    digest: str


class Player:
    """The worker's loops (see the module's docstring).  ``run()`` until cancelled."""

    def __init__(self, engine: Engine, config: WebConfig) -> None:
        self.engine = engine
        self.config = config
        self.fitter = FitPool()
        self.errors: dict[str, str] = {}
        self._checks: dict[asyncio.Task[None], _Pick] = {}
        self._served: dict[int, float] = {}
        self._retry_after: dict[int, float] = {}
        self._check_event = asyncio.Event()
        self._match_event = asyncio.Event()
        self._standings_event = asyncio.Event()
        self._playing = False
        self._plan_lock = asyncio.Lock()  # one planner at a time (matches, entries)
        self.last_fit_end = self.last_snapshot = self._last_beat = 0.0
        self.fit_cost = 0.0

    @property
    def last_error(self) -> str:
        return "; ".join(e for e in self.errors.values() if e)

    # ----- the whole ---------------------------------------------------------------------
    async def run(self) -> None:
        info = worker_info(self.engine, self.config.ladder)
        if info.alive and info.pid != os.getpid():
            raise AnotherWorker(
                f"a worker for ladder {self.config.ladder!r} already runs (pid {info.pid} on "
                f"{info.host}); stop it first, or run only one"
            )
        seen = worker_started(self.engine, self.config.ladder)
        # refused uploads' files go (at start, and after each check: _check); it spares the
        # folders of uploads still being checked
        await asyncio.to_thread(collect_refused, self.engine, self.config.data_dir())
        loops = [self._checks_loop(), self._standings_loop()]
        if self.config.matches:
            loops.append(self._matches_loop())
        tasks = [asyncio.create_task(c) for c in loops]
        try:
            while True:
                await asyncio.sleep(POLL_SECONDS)
                for task in tasks:
                    if task.done():  # a loop never ends by itself: report it, stop
                        task.result()
                        raise RuntimeError("a worker loop ended")
                now = time.monotonic()
                if now - self._last_beat >= HEARTBEAT_EVERY:
                    self._last_beat = now
                    nudged = heartbeat(self.engine, self.config.ladder, self.last_error)
                else:
                    nudged = _read_nudge(self.engine, self.config.ladder)
                if nudged != seen:
                    seen = nudged
                    self._check_event.set()
                    self._match_event.set()
        finally:
            for task in [*tasks, *self._checks]:
                task.cancel()
            for task in [*tasks, *self._checks]:
                with contextlib.suppress(BaseException):
                    await task
            self.fitter.close()
            with contextlib.suppress(Exception):
                worker_stopped(self.engine, self.config.ladder)

    # ----- entry checks ------------------------------------------------------------------
    async def _checks_loop(self) -> None:
        await self._keep_running(
            "checks", "picking uploads to check", self._start_checks, self._check_event
        )

    async def _start_checks(self) -> bool:
        """Fill the free check slots (round-robin by account); never 'worked': the loop
        then waits for a nudge or a finished check."""
        while len(self._checks) < self.config.check_slots:
            pick = self.next_upload()
            if pick is None:
                break
            self._served[pick.user_id] = time.monotonic()
            task = asyncio.create_task(self._check(pick), name=f"check {pick.upload_id}")
            self._checks[task] = pick
            task.add_done_callback(self._check_done)
        return False

    async def _keep_running(
        self, key: str, what: str, step: Callable[[], Awaitable[bool]], event: asyncio.Event
    ) -> None:
        """One of the worker's loops: ``step`` until cancelled, its error kept under ``key``
        (shown on the Organize page) and retried with a doubling pause; when a step did no
        work, wait for ``event`` (a nudge) or the pause."""
        pause_s = IDLE_SECONDS
        while True:
            try:
                worked = await step()
                self.errors.pop(key, None)
                pause_s = IDLE_SECONDS
            except Exception as exc:  # the worker outlives whatever went wrong here
                log.exception("%s failed; retrying", what)
                self.errors[key] = f"{type(exc).__name__}: {exc}"
                worked, pause_s = False, min(pause_s * 2, 60.0)
            if not worked:
                event.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), pause_s)

    def _check_done(self, task: asyncio.Task[None]) -> None:
        self._checks.pop(task, None)
        self._check_event.set()

    def next_upload(self) -> _Pick | None:
        """The next upload to check: round-robin by account — among accounts with an upload
        waiting and none being checked, the one served longest ago (never: first), its
        oldest upload."""
        busy_users = {p.user_id for p in self._checks.values()}
        now = time.monotonic()
        with Session(self.engine) as session:
            waiting = session.execute(
                select(Upload.id, Upload.user_id, Upload.bot_name, Upload.digest)
                .where(Upload.status == "checking")
                .order_by(Upload.id)
            ).all()
        first: dict[int, _Pick] = {}
        for upload_id, user_id, name, digest in waiting:
            if user_id in busy_users or self._retry_after.get(upload_id, 0.0) > now:
                continue
            first.setdefault(user_id, _Pick(upload_id, user_id, name, digest))
        if not first:
            return None
        return min(
            first.values(), key=lambda p: (self._served.get(p.user_id, float("-inf")), p.upload_id)
        )

    async def _check(self, pick: _Pick) -> None:
        """One upload's check within its account's budget and the wall-clock cap."""
        budget, cap = float(self.config.check_budget), float(self.config.check_cap)
        spent = charged_today(self.engine, pick.user_id)
        left = budget - spent
        if left <= 0:
            hours, rest = divmod(int(until_tomorrow()), 3600)
            self._refused(
                pick.upload_id,
                f"not checked: this account has used its {budget:.0f} s of entry checks for "
                f"today (UTC); they renew in {hours} h {rest // 60} min",
            )
            return
        limit = min(cap, left)
        started = time.monotonic()
        charged = True
        try:
            with Session(self.engine) as session:
                files = session.scalar(select(Upload.files).where(Upload.id == pick.upload_id))
            if files is None:
                return
            await asyncio.wait_for(
                self.check_one(pick.upload_id, pick.name, pick.digest, unpack(files)), limit
            )
            self.errors.pop(f"check {pick.upload_id}", None)
        except TimeoutError:
            if limit < cap:
                why = (
                    f"its entry check was stopped after {limit:.0f} s: this account's "
                    f"{budget:.0f} s of entry checks for today (UTC) ran out"
                )
            else:
                why = (
                    f"its entry check (one hand against copies of itself) took longer than "
                    f"{cap:.0f} s"
                )
            self._refused(pick.upload_id, why)
        except asyncio.CancelledError:
            charged = False  # the worker stops: the upload is checked again at its start
            raise
        except Exception as exc:  # the server's problem, not the author's: retry later
            charged = False
            log.exception("checking upload %s failed; retrying later", pick.upload_id)
            self.errors[f"check {pick.upload_id}"] = f"{type(exc).__name__}: {exc}"
            self._retry_after[pick.upload_id] = time.monotonic() + RETRY_CHECK
        finally:
            if charged:
                charge(self.engine, pick.user_id, time.monotonic() - started)
            try:  # refused uploads' files go (one query when nothing new was refused)
                await asyncio.to_thread(collect_refused, self.engine, self.config.data_dir())
            except Exception:
                log.exception("collecting refused uploads failed; trying after the next check")

    def _refused(self, upload_id: int, reason: str) -> None:
        finish_upload(self.engine, upload_id, False, reason, "", None)

    async def check_one(
        self, upload_id: int, name: str, digest: str, files: dict[str, bytes]
    ) -> None:
        from ..sandbox.images import ImageBuildError
        from ..validation import validate

        folder = bot_folder(self.config.data_dir(), name, digest, files)
        try:
            spec = resolve(str(folder))
        except BotSpecError as exc:
            finish_upload(self.engine, upload_id, False, str(exc), "", None)
            return
        rules = contest_rules(self.engine, self.config.ladder)
        settings = contest_settings(self.engine, self.config.ladder)
        tc = TimeControl(**settings.get("time_control", {}))
        with tempfile.TemporaryDirectory(prefix="arena-upload-") as logs:
            try:
                result = await validate(
                    spec, rules, settings.get("sandbox", "auto"), tc, log_dir=Path(logs)
                )
            except ImageBuildError as exc:  # its requirements or files: the author's to fix
                finish_upload(
                    self.engine, upload_id, False, f"its image did not build: {exc}", "", None
                )
                return
            except (SandboxUnavailable, OSError) as exc:  # the server's problem: retry later
                raise RuntimeError(f"cannot check uploads: {exc}") from exc
            output = _log_tail(Path(logs))

        def authored(text: str) -> str:
            """The bot's files as its author named them: ``bot.py``, not the server's or
            the sandbox's path to it."""
            return (
                as_authored(spec, text)
                .replace(f"{folder.resolve()}/", "")
                .replace(f"{folder}/", "")
            )

        output = authored(output)
        if not result.ok:
            finish_upload(self.engine, upload_id, False, authored(result.reason), output, None)
            return
        version_id = self.enter(name, spec.runner_spec, digest)
        note = authored("; ".join(result.warnings))
        finish_upload(
            self.engine, upload_id, True, f"warnings: {note}" if note else "", output, version_id
        )
        if self._playing:
            await self.place_newcomers()

    async def place_newcomers(self) -> None:
        """Plan the placement matches of bots entered while a round is being played (no
        new round: that waits for the round to end), so they play as soon as the matches
        in flight are done rather than a round later."""
        name = self.config.ladder
        async with self._plan_lock:
            planned = ladder_rounds(self.engine, name).planned
            try:
                await asyncio.to_thread(plan_ladder, self.engine, name, planned)
            except StoreError as exc:
                log.warning("could not place the new bot: %s", exc)

    def enter(self, name: str, runner_spec: str, digest: str) -> int:
        """Enter this version and retire the bot's other versions (the ladder plays the
        newest; the older keep their matches and ratings history), through the ladder's
        own ``retire``, which also withdraws their pending matches."""
        enter_bots(self.engine, self.config.ladder, [(name, runner_spec, digest)])
        with Session(self.engine) as session:
            ladder_id = ladder_row(session, self.config.ladder).id
            mine = entrants(session, ladder_id, name)
            newest = next(e for e in mine if e.version.source_hash == digest)
            newest_id, number, back = newest.version_id, newest.version.number, newest.retired
            older = [e.version.number for e in mine if e is not newest and not e.retired]
        if back:  # this code was entered before and retired since: it plays again
            retire(self.engine, ladder_id, f"{name}@v{number}", undo=True)
        for old in older:
            retire(self.engine, ladder_id, f"{name}@v{old}")
        return newest_id

    # ----- matches ------------------------------------------------------------------------
    async def _matches_loop(self) -> None:
        await self._keep_running(
            "matches", "the player's cycle", self.play_round, self._match_event
        )

    async def play_round(self) -> bool:
        name = self.config.ladder
        final = await self.play_final_evaluation()
        if final is not None:  # asked for, or final: no regular round
            return final
        settings = contest_settings(self.engine, name)
        if self._active_entries() < 2:
            return False
        target = int(settings.get("matches_per_bot", MATCHES_PER_BOT))
        try:
            # the next round once the last has finished (while a bot is short of its
            # matches); a newcomer that no round seats now gets its placement at once
            planned = ladder_rounds(self.engine, name).planned
            more = self._fewest_matches() < target
            async with self._plan_lock:
                pending, _ = await asyncio.to_thread(
                    plan_ladder, self.engine, name, planned + 1 if more else planned
                )
        except StoreError as exc:
            self.errors["matches"] = str(exc)
            return False
        if not pending:
            return False

        def on_done(_done: int, _total: int, _summary: MatchResult) -> None:
            self._standings_event.set()

        self._playing = True
        try:
            await run_pending(
                self.engine,
                name,
                self.config.jobs,
                on_done,
                self.config.executor,
                self.config.ray_address,
            )
        except BotCannotStart as exc:
            self.pause(exc.bot, str(exc))
        finally:
            self._playing = False
            self._standings_event.set()
        return True

    async def play_final_evaluation(self) -> bool | None:
        """The final evaluation the organizer asked for (``arena.ladder.final``): a batch
        of it played and the next planned (True), the ladder final (False: the player
        rests until it is reopened), or None: none asked for, regular rounds go on."""
        from ..ladder.final import final_state, play_final_round

        phase, marker = final_state(contest_settings(self.engine, self.config.ladder))
        if phase is None or marker is not None:
            return None if phase is None and marker is None else False
        self._playing = True
        try:
            return await play_final_round(
                self.engine,
                self.config.ladder,
                self.config.jobs,
                lambda *_: self._standings_event.set(),
                self.config.executor,
                self.config.ray_address,
            )
        except BotCannotStart as exc:
            self.pause(exc.bot, str(exc))
            return True
        finally:
            self._playing = False
            self._standings_event.set()

    def _fewest_matches(self) -> int:
        """The fewest finished matches any active entrant has played."""
        from sqlalchemy import func

        from ..ladder.store import Match, MatchSeat

        with Session(self.engine) as session:
            ladder = ladder_row(session, self.config.ladder)
            active = [
                vid
                for (vid,) in session.execute(
                    select(Entry.version_id).where(
                        Entry.ladder_id == ladder.id,
                        Entry.retired.is_(False),
                        Entry.paused.is_(False),
                    )
                )
            ]
            played = dict(
                session.execute(
                    select(MatchSeat.version_id, func.count(func.distinct(MatchSeat.match_id)))
                    .join(Match, Match.id == MatchSeat.match_id)
                    .where(Match.ladder_id == ladder.id, Match.status == "done")
                    .where(MatchSeat.version_id.in_(active))
                    .group_by(MatchSeat.version_id)
                ).all()
            )
        return min((played.get(v, 0) for v in active), default=0)

    def _active_entries(self) -> int:
        with Session(self.engine) as session:
            ladder = session.scalar(select(Ladder).where(Ladder.name == self.config.ladder))
            if ladder is None:
                return 0
            return len(
                session.scalars(
                    select(Entry.id).where(
                        Entry.ladder_id == ladder.id,
                        Entry.retired.is_(False),
                        Entry.paused.is_(False),
                    )
                ).all()
            )

    def pause(self, label: str, why: str) -> None:
        """Pause the version that could not start (``label`` as the match named it),
        withdrawing its pending matches, so that the next round does not meet it again."""
        with Session(self.engine) as session:
            ladder_id = ladder_row(session, self.config.ladder).id
        try:
            pause(self.engine, ladder_id, label)
        except StoreError as exc:
            log.warning("could not pause %s: %s", label, exc)
            return
        log.warning("paused %s: %s", label, why)

    # ----- standings ----------------------------------------------------------------------
    def _snapshot_behind(self, ladder_id: int, done: int) -> bool:
        """Whether matches finished since the newest rating snapshot (one per state)."""
        from sqlalchemy import func

        from ..ladder.store import RatingSnapshot

        with Session(self.engine) as session:
            last = session.scalar(
                select(func.max(RatingSnapshot.matches)).where(
                    RatingSnapshot.ladder_id == ladder_id
                )
            )
        return done > 0 and last != done

    async def _standings_loop(self) -> None:
        await self._keep_running(
            "standings", "refitting the standings", self._refit_step, self._standings_event
        )

    async def _refit_step(self) -> bool:
        await self.refit_if_due()
        return False  # the loop waits for a nudge (a finished match) or the pause

    async def refit_if_due(self) -> bool:
        """Refit (in the fit process, awaited without holding this loop) when the stored
        fit trails the ladder: at once when play rests or the entries changed, else at most
        every ``REFIT_EVERY`` seconds and ``REFIT_SHARE`` of the time."""
        state = ladder_state(self.engine, self.config.ladder)
        meta = fit_meta(self.engine, int(state[0]))
        if meta is not None and meta.state == state_key(state):
            return False
        moment = time.monotonic()
        # a new, retired or paused entry shows at once (rare: an upload, the organizer);
        # finished matches wait for their share of the time
        entries_moved = meta is None or json.loads(meta.state)[3] != json.loads(state_key(state))[3]
        if (
            self._playing
            and not entries_moved
            and moment - self.last_fit_end < max(REFIT_EVERY, self.fit_cost / REFIT_SHARE)
        ):
            return False
        snapshot = (
            not self._playing
            or moment - self.last_snapshot >= max(SNAPSHOT_EVERY, 2 * self.fit_cost / REFIT_SHARE)
        ) and self._snapshot_behind(int(state[0]), int(state[1] or 0))
        started = time.monotonic()
        future = self.fitter.submit(engine_db(self.engine), self.config.ladder, snapshot)
        await asyncio.wrap_future(future)
        self.last_fit_end = time.monotonic()
        self.fit_cost = self.last_fit_end - started
        if snapshot:
            self.last_snapshot = self.last_fit_end
        log.info("standings refitted in %.1f s", self.fit_cost)
        return True


def _log_tail(folder: Path) -> str:
    """The end of each seat's output in a check (the copies' logs, seat 0 first)."""
    parts = []
    for path in sorted(folder.glob("*"))[:4]:
        if path.is_file():
            with path.open("rb") as f:
                f.seek(0, 2)
                size = f.tell()
                f.seek(max(0, size - LOG_TAIL // 2))
                text = f.read().decode("utf-8", "replace")
            text = "".join(c if c.isprintable() or c in "\n\t" else "?" for c in text)
            if text.strip():
                parts.append(f"== {path.name}\n{text}")
    return "\n".join(parts)[-LOG_TAIL:]


def _read_nudge(engine: Engine, ladder: str) -> int:
    from .worker_state import WorkerStatus

    with Session(engine) as session:
        return int(
            session.scalar(select(WorkerStatus.nudge).where(WorkerStatus.ladder == ladder)) or 0
        )


def run_worker(engine: Engine, config: WebConfig) -> None:
    """``arena worker``: the loops until SIGTERM or Ctrl-C (then a clean stop), or until
    the process that started it (``ARENA_WORKER_PARENT``: ``arena serve --play``) is gone —
    a worker never outlives its server as an orphan."""
    parent = int(os.environ.get("ARENA_WORKER_PARENT", "0") or 0)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        player = Player(engine, config)
        run = asyncio.create_task(player.run())
        try:
            while not run.done():
                if parent and os.getppid() != parent:
                    log.warning("the server that started this worker is gone: stopping")
                    break
                await asyncio.wait({run}, timeout=POLL_SECONDS)
        finally:
            run.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await run
        if run.done() and not run.cancelled() and run.exception() is not None:
            raise run.exception()  # type: ignore[misc]

    with contextlib.suppress(asyncio.CancelledError):
        asyncio.run(main())
