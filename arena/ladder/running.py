"""Running a ladder's pending matches, here or on Ray, and saving each as it finishes.

Running takes the pending matches in batches of one table (``batches``: up to ``BATCH``
matches with the same seats, played as one by bot instances that each play one rotation of
all their deals), plays up to ``jobs`` batches at once (each with its own referee and
sandboxes) through an executor (``executor_for``: in this process, or as Ray tasks), and
writes each finished match in its own transaction.  A match left ``running`` by a killed
run is played again from scratch.  Which matches there are is :mod:`.planning`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from bigtwo import RuleSet
from bigtwo.record import read_events

from ..bots import resolve
from ..match import by_rotation, failed_to_start, run_match, split_match
from ..referee.results import MatchResult
from ..referee.time_control import TimeControl
from .duplicate import rotated_deals
from .planning import deal_key, deal_seed
from .records import kept_records
from .store import BotVersion, Ladder, Match, _now, save_match

BATCH = 4
"""Matches of one table played as one batch (``play_batch``): with fresh instances for each
rotation, an instance then plays as many hands as one instance played a whole match when
instances were kept for the match (4 deals × 4 rotations)."""


def block_totals(match: Match, summary: MatchResult, rotations: int) -> list[dict[str, float]]:
    """Per deal, each version's points over the deal's rotations — per seat it held, so that
    an entrant repeated to fill the table (it then holds two seats) is not counted twice."""
    seats_held: dict[str, int] = {}
    for vid in match.seats:
        seats_held[str(vid)] = seats_held.get(str(vid), 0) + 1
    totals: list[dict[str, float]] = [{} for _ in match.deal_seeds]
    for hand in summary.hands:
        block = totals[hand.hand // rotations]
        for seat, score in enumerate(hand.scores):
            vid = str(match.seats[seat])
            block[vid] = block.get(vid, 0.0) + score / seats_held[vid]
    return totals


def _job(engine: Engine, ladder_id: int, match_id: int) -> dict[str, Any]:
    """Everything a match needs, as plain data (it may travel to a Ray worker); marks the
    match running."""
    with Session(engine) as session:
        ladder = session.get(Ladder, ladder_id)
        match = session.get(Match, match_id)
        assert ladder is not None and match is not None
        match.status = "running"
        match.started = _now()
        session.commit()
        versions = {
            v.id: v
            for v in session.scalars(select(BotVersion).where(BotVersion.id.in_(match.seats)))
        }
        s = ladder.settings
        rules = RuleSet.from_dict(ladder.rules)
        key = deal_key(ladder)
        session.commit()  # a ladder planned before keys existed gets its key now
        seeds: list[int | str] = [deal_seed(key, str(d)) for d in match.deal_seeds]
        return {
            "match_id": match_id,
            "bots": [(versions[v].spec, versions[v].label) for v in match.seats],
            "rules": ladder.rules,
            "seed": seeds[0],
            "deals": rotated_deals(rules, seeds, s["rotations"]),
            "rotations": s["rotations"],
            "time_control": s["time_control"],
            "sandbox": s["sandbox"],
        }


async def play_job(job: dict[str, Any]) -> Played:
    """Play a match from its job data; returns the summary, the moves and the record
    (gzip-compressed JSON Lines, see ``records``).  Runs wherever
    the match runs (here, or in a Ray worker with its own Docker engine)."""
    return (await play_batch([job]))[0]


@dataclass(frozen=True)
class Played:
    """A played match, as it comes back from wherever it was played (pickled by Ray)."""

    result: MatchResult
    moves: list[dict[str, Any]]
    """Its ``turn`` events (the record's, hands numbered in this match)."""
    record: bytes | None
    """Its public record (gzip JSON Lines); None when aborted."""


async def play_batch(jobs: list[dict[str, Any]]) -> list[Played]:
    """Play matches of one table (the same bots in the same seats) as one: every rotation
    by fresh bot instances that play that rotation of every deal of every match, so none
    sees a deal twice and a bot starts once per rotation of the batch, not of each match
    (a start costs more CPU than the hands it plays; see ``batches``).  Returns each
    match's summary, moves and record, as if played alone."""
    first = jobs[0]
    if any(j["bots"] != first["bots"] or j["rules"] != first["rules"] for j in jobs):
        raise ValueError("a batch holds matches of one table only")
    specs = [dataclasses.replace(resolve(spec), name=label) for spec, label in first["bots"]]
    rules = RuleSet.from_dict(first["rules"])
    deals = [d for j in jobs for d in j["deals"]]
    sizes = [len(j["deals"]) for j in jobs]
    with tempfile.TemporaryDirectory(prefix="ladder-") as tmp:
        record = Path(tmp) / "match.jsonl"
        summary = await run_match(
            specs,
            rules,
            first["seed"],
            TimeControl(**first["time_control"]),
            first["sandbox"],
            record,
            deals=deals,
            # every rotation by fresh bot instances: none sees a deal twice
            segments=by_rotation(len(deals), first.get("rotations", 1)),
            all_must_start=True,  # a bot that cannot start is never rated: stop at once
        )
        events = [event for _, event in read_events(record)]
    moves = [e for e in events if e["type"] == "turn"]
    if summary.aborted:
        # a bot did not start, so none of it is kept (run_pending puts it back)
        return [Played(summary, moves, None) for _ in jobs]
    parts = [summary] if len(jobs) == 1 else split_match(summary, sizes)
    parts = [part.replace(seed=job["seed"]) for job, part in zip(jobs, parts, strict=True)]
    kept = kept_records(events, parts, [j.get("match_id") for j in jobs])
    out: list[Played] = []
    lo = 0
    for part, record_j in zip(parts, kept, strict=True):
        hi = lo + len(part.hands)
        mine = [{**m, "hand": m["hand"] - lo} for m in moves if lo <= m["hand"] < hi]
        out.append(Played(part, mine, record_j))
        lo = hi
    return out


def batches(pending: list[int], tables: dict[int, list[int]], jobs: int) -> list[list[int]]:
    """Pending matches in batches of one table (``tables``: match → its seats), in order,
    each at most ``BATCH`` matches and no more than an even share of the work among
    ``jobs`` (a batch is played by one job: fewer, larger batches would leave jobs idle)."""
    size = max(1, min(BATCH, -(-len(pending) // max(1, jobs))))
    open_: dict[tuple[int, ...], list[int]] = {}
    out: list[list[int]] = []
    for mid in pending:
        table = tuple(tables[mid])
        group = open_.setdefault(table, [])
        if not group:
            out.append(group)
        group.append(mid)
        if len(group) == size:
            open_[table] = []
    return out


def _save(
    engine: Engine,
    match_id: int,
    rotations: int,
    summary: MatchResult,
    moves: list[dict[str, Any]],
    record: bytes | None = None,
) -> None:
    with Session(engine) as session, session.begin():
        match = session.get(Match, match_id)
        assert match is not None
        totals = block_totals(match, summary, rotations)
        save_match(session, match, summary, totals, moves, record)


class BotCannotStart(RuntimeError):
    """A bot of the ladder never played (it crashed before connecting, or never connected):
    the ladder stops with its reason instead of rating the fallback's play.  ``bot``: its
    label (the web arena's player pauses that bot and goes on)."""

    def __init__(self, message: str, bot: str = "") -> None:
        super().__init__(message)
        self.bot = bot


def _unplay(engine: Engine, match_id: int) -> None:
    """Put a match whose result is not kept back in the queue."""
    with Session(engine) as session, session.begin():
        match = session.get(Match, match_id)
        if match is not None:
            match.status = "pending"
            match.started = None


Executor = Callable[[list[dict[str, Any]]], Awaitable[list[Played]]]
"""Plays one batch's jobs (``_job``'s plain data) wherever it plays them; the results come
back to ``run_pending``, the one writer to the database."""


def executor_for(name: str, ray_address: str | None = None) -> Executor:
    """``ray``: each batch a Ray task, on the cluster at ``ray_address`` or on a local Ray
    runtime (a worker with its own Docker engine plays it); otherwise (``local``) in this
    process's event loop."""
    if name != "ray":
        return play_batch
    task = _ray_remote(ray_address)
    return lambda jobs: task.remote(jobs)  # a Ray ObjectRef is awaitable


def _ray_play(jobs: list[dict[str, Any]]) -> list[Played]:
    """The Ray task: one batch of matches in the worker's own event loop."""
    return asyncio.run(play_batch(jobs))


def _ray_remote(address: str | None):  # type: ignore[no-untyped-def]
    """The match task on a Ray cluster (``address``) or on a local Ray runtime."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no reports leave this machine
    try:
        import ray
    except ImportError:
        raise RuntimeError("--executor ray needs Ray: pip install 'bigtwo-arena[ray]'") from None
    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    return ray.remote(_ray_play)


async def run_pending(
    engine: Engine,
    ladder_name: str,
    jobs: int,
    on_done: Callable[[int, int, MatchResult], None] | None = None,
    executor: str = "local",
    ray_address: str | None = None,
    key_prefix: str = "",
) -> int:
    """Play every pending match (and any left running by a killed run); returns how many
    finished.  Cancelling it (Ctrl-C) stops the matches in flight; those finished stay.
    ``key_prefix``: only the matches whose key starts with it (the final phase's,
    :mod:`.final`)."""
    with Session(engine) as session, session.begin():
        ladder = session.scalar(select(Ladder).where(Ladder.name == ladder_name))
        if ladder is None:
            raise ValueError(f"no ladder named {ladder_name!r}")
        mine = Match.key.startswith(key_prefix, autoescape=True)
        for m in session.scalars(
            select(Match).where(Match.ladder_id == ladder.id, Match.status == "running", mine)
        ):
            m.status = "pending"  # interrupted last time: replay from scratch
        tables = {
            mid: list(seats)
            for mid, seats in session.execute(
                select(Match.id, Match.seats)
                .where(Match.ladder_id == ladder.id, Match.status == "pending", mine)
                .order_by(Match.id)
            )
        }
        pending = list(tables)
        ladder_id = ladder.id
        rotations = ladder.settings["rotations"]
    total = len(pending)
    done = 0
    gate = asyncio.Semaphore(max(1, jobs))
    play = executor_for(executor, ray_address)

    async def one(batch: list[int]) -> None:
        try:
            await play_batch(batch)
        except asyncio.CancelledError:  # stopped (another batch failed, Ctrl-C): its
            for mid in batch:  # started, unsaved matches go back to the queue at once
                if mid in started and mid not in saved:
                    _unplay(engine, mid)
            raise

    saved: set[int] = set()
    started: set[int] = set()
    """Matches of batches that passed the gate: only those can be "running".  The others
    were never touched (a ladder of 100,000 pending matches put each one back, one
    transaction apiece, and took minutes to stop on Ctrl-C)."""

    async def play_batch(batch: list[int]) -> None:
        nonlocal done
        async with gate:
            started.update(batch)
            jobs_data = [_job(engine, ladder_id, mid) for mid in batch]
            results = await play(jobs_data)  # here or on Ray: back to this one writer
        failed = failed_to_start(results[0].result)
        if failed:  # its author's error, not a result: nothing is rated, the ladder stops
            for mid in batch:
                _unplay(engine, mid)
            seat, detail = failed[0]
            raise BotCannotStart(
                f"bot '{seat.bot}' cannot start, so the ladder stopped and rated nothing "
                f"of its match: {detail}",
                bot=str(seat.bot),
            )
        for mid, played in zip(batch, results, strict=True):
            _save(engine, mid, rotations, played.result, played.moves, played.record)
            saved.add(mid)
            done += 1
            if on_done:
                on_done(done, total, played.result)

    tasks = [asyncio.create_task(one(b)) for b in batches(pending, tables, jobs)]
    try:
        await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            if not t.cancelling():  # once: a batch cancelled again cut its cleanup short
                t.cancel()
        for t in tasks:
            with contextlib.suppress(BaseException):
                await t
    return done
