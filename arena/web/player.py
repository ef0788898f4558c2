"""``arena serve --play``: the ladder played continuously in the server's own process.

Why in the server rather than a separate ``arena ladder run --watch``: an upload must be
smoke-tested and entered without anyone typing a command, the standings the pages read must
be refreshed as matches finish, and a contest is easiest to run as one command.  The work
happens in one background thread with its own event loop (the matches are asyncio already),
so a slow match never holds a page; the database (SQLite in WAL mode, or PostgreSQL) lets
the pages read while the player writes.  Everything a bot does is contained by the match
runner; anything else that goes wrong is logged and retried after a pause, never allowed to
end the server.

One cycle: smoke-test the waiting uploads (``arena.validation``: a hand against copies of
itself, in the contest's sandbox and time control) and enter the ones that pass, the bot's
older version retired (its ratings history stays); then, when no match is pending, plan one
more round for every group of entrants and play it (``arena.ladder.running.run_pending``,
the same as ``arena ladder run``), until every bot has its ``matches_per_bot``.  A bot
that cannot start in a match is paused and the rest play on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..bots import BotSpecError, as_authored, resolve
from ..ladder.queries import (
    StoreError,
    enter_bots,
    entrants,
    pause,
    plan_ladder,
    retire,
    save_snapshot,
)
from ..ladder.running import BotCannotStart, run_pending
from ..ladder.store import Entry, Ladder
from ..referee.session import TimeControl
from ..sandbox.base import SandboxUnavailable
from .botstore import bot_folder, collect_refused, finish_upload, unpack
from .contest import contest_rules, contest_settings, ladder_row, update_settings
from .models import Upload

log = logging.getLogger("arena.web.player")
LOG_TAIL = 8000
IDLE_SECONDS = 3.0
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
"""At most this share of the player's time goes to refits (and to snapshots)."""


class Player:
    def __init__(self, state: Any) -> None:
        self.state = state
        self.engine = state.engine
        self.config = state.config
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._event: asyncio.Event | None = None
        self._stopping = False
        self.last_error = ""
        self.last_snapshot = self.last_refit = 0.0
        self.snapshot_cost = self.refit_cost = 0.0

    # ----- the thread -------------------------------------------------------------------
    def start(self) -> None:
        ready = threading.Event()

        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
            self._event = asyncio.Event()
            ready.set()
            await self._main()

        def run() -> None:
            # asyncio.Runner, like asyncio.run: on the way out every task left (a match's
            # seats, its referee) is cancelled and awaited, so nothing is cut off mid-write
            with asyncio.Runner() as runner, contextlib.suppress(asyncio.CancelledError):
                runner.run(main())

        self._thread = threading.Thread(target=run, name="arena-player", daemon=True)
        self._thread.start()
        ready.wait()
        self.state.wake = self.wake

    def wake(self) -> None:
        """New work (an upload, a resumed bot): start a cycle now."""
        loop, event = self._loop, self._event
        if loop is not None and event is not None and not loop.is_closed():
            loop.call_soon_threadsafe(event.set)

    def stop(self, timeout: float = 60.0) -> None:
        """Cancel the cycle (matches in flight end; the finished ones are kept, the others
        are played again at the next start) and wait for the thread."""
        self._stopping = True
        loop, task = self._loop, self._task
        if loop is not None and task is not None and not loop.is_closed():
            loop.call_soon_threadsafe(task.cancel)
        if self._thread is not None:
            self._thread.join(timeout)

    async def _main(self) -> None:
        assert self._event is not None
        pause = IDLE_SECONDS
        while not self._stopping:
            try:
                worked = await self.check_uploads()
                worked = await self.play_round() or worked
                self.last_error = ""
                pause = IDLE_SECONDS
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the server outlives whatever went wrong here
                log.exception("the player's cycle failed; retrying")
                self.last_error = f"{type(exc).__name__}: {exc}"
                worked, pause = False, min(pause * 2, 60.0)
            if not worked:
                self._event.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._event.wait(), pause)

    # ----- uploads ----------------------------------------------------------------------
    async def check_uploads(self) -> bool:
        with Session(self.engine) as session:
            waiting = list(
                session.execute(
                    select(Upload.id, Upload.bot_name, Upload.digest, Upload.files)
                    .where(Upload.status == "checking")
                    .order_by(Upload.id)
                )
            )
        for upload_id, name, digest, files in waiting:
            if self._stopping:
                break
            await self.check_one(upload_id, name, digest, unpack(files))
        collect_refused(self.engine, self.config.data_dir())  # (one query when none is new)
        return bool(waiting)

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
    async def play_round(self) -> bool:
        name = self.config.ladder
        settings = contest_settings(self.engine, name)
        if self._active_entries() < 2:
            return False
        rounds = int(settings.get("web_rounds", 0))
        target = int(settings.get("matches_per_bot", MATCHES_PER_BOT))
        try:
            # a new entrant's groups for the rounds planned so far: it catches up at once
            pending, _ = plan_ladder(self.engine, name, max(rounds, 1))
            if not pending and self._fewest_matches() < target:
                rounds += 1
                update_settings(self.engine, name, web_rounds=rounds)
                pending, _ = plan_ladder(self.engine, name, rounds)
        except StoreError as exc:
            self.last_error = str(exc)
            return False
        if not pending:
            return False

        def on_done(_done: int, _total: int, _summary: dict[str, Any]) -> None:
            self.refresh()

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
        self.refresh(final=True)
        return True

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

    def refresh(self, final: bool = False) -> None:
        """The standings the pages read, and now and then a rating snapshot (the history
        chart's points).  A refit costs seconds to minutes on a big ladder (and holds the
        interpreter meanwhile), so while matches finish it runs at most every
        ``REFIT_EVERY`` seconds and never takes more than ``REFIT_SHARE`` of the player's
        time; a snapshot (a refit of its own) likewise; both at the end of every round."""
        moment = time.monotonic()
        if final or moment - self.last_refit >= max(REFIT_EVERY, self.refit_cost / REFIT_SHARE):
            with contextlib.suppress(Exception):
                self.state.standings.get(self.engine, self.config.ladder)
            self.last_refit = time.monotonic()
            self.refit_cost = self.last_refit - moment
        moment = time.monotonic()
        every = max(SNAPSHOT_EVERY, self.snapshot_cost / REFIT_SHARE)
        if final or moment - self.last_snapshot >= every:
            with contextlib.suppress(Exception):
                save_snapshot(self.engine, self.config.ladder)
            self.last_snapshot = time.monotonic()
            self.snapshot_cost = self.last_snapshot - moment


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
