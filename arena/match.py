"""Running one match: a referee server on a Unix socket in a private folder, one sandboxed
bot per seat, and whatever happens (normal end, forfeits, an exception, Ctrl-C) every bot
stopped and the folder removed."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import secrets
import shutil
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bigtwo import RuleSet

from .bots import BotSpec, as_authored, unique_names
from .record import RecordWriter
from .referee.match_folder import new_match_folder
from .referee.results import Batch, Fault, HandScore, MatchResult, SeatResult
from .referee.service import RefereeServer
from .referee.session import MatchSession, SeatSpec, round_trip_stats
from .referee.time_control import TimeControl
from .sandbox.backends import make_sandbox
from .sandbox.base import BotHandle, Credentials, SandboxUnavailable
from .seatlogs import SeatLogs
from .text import printable


def failed_to_start(summary: MatchResult) -> list[tuple[SeatResult, str]]:
    """The seats whose bot never sent its Hello (it ended before connecting, or never
    connected), each with the reason: an error to show its author, never a result to rate.
    A bot that said Hello and then left started: that is its forfeit, not a void match (or
    any bot could void the matches it dislikes)."""
    out = []
    for seat in summary.seats:
        if seat.started:
            continue
        detail = next(
            (f.detail or f.reason or "" for f in seat.faults if f.kind in ("crash", "disconnect")),
            "it never connected",
        )
        out.append((seat, detail))
    return out


def by_rotation(hands: int, rotations: int) -> list[list[int]]:
    """Segments for duplicate play: ``hands`` rotated deals in play order (deal 0's
    rotations, then deal 1's, …) split so that each set of bot instances plays every deal
    once, in one rotation — like duplicate bridge, where no player sees a board twice."""
    if rotations <= 0 or hands % rotations:
        raise ValueError(f"{hands} hands are not whole deals of {rotations} rotations")
    return [list(range(r, hands, rotations)) for r in range(rotations)]


def _running_totals(hands: list[HandScore], players: int) -> list[HandScore]:
    """The hands with each one's ``cumulative`` made again from the ``scores`` in order."""
    running = [0] * players
    out = []
    for hand in hands:
        running = [a + b for a, b in zip(running, hand.scores, strict=True)]
        out.append(dataclasses.replace(hand, cumulative=tuple(running)))
    return out


def _totals(hands: list[HandScore], players: int) -> list[int]:
    return list(hands[-1].cumulative) if hands else [0] * players


def _placed(seats: list[SeatResult]) -> tuple[SeatResult, ...]:
    """Places by score, ties sharing one (as ``Game.places``)."""
    return tuple(
        dataclasses.replace(seat, place=1 + sum(1 for o in seats if o.score > seat.score))
        for seat in seats
    )


def _rules_of(rules: dict[str, Any] | None, hands: int) -> dict[str, Any] | None:
    """A result's rules, its match end the number of hands it holds when counted in hands."""
    if rules is None:
        return None
    rules = dict(rules)
    if rules.get("match_end") == "hands":
        rules["match_end_value"] = hands
    return rules


def merge_segments(
    summaries: list[MatchResult], segments: list[list[int]], turn_ms: list[float]
) -> MatchResult:
    """One match result from the results of its segments: hands numbered by their place in
    the deal list, scores summed, places from the totals, faults kept in play order, and a
    seat's forfeited hands listed (``forfeit_hands``) — a fresh instance that plays the next
    segment well is not marked for what an earlier instance did."""
    first = summaries[0]
    hands: list[HandScore] = []
    for summary, seg in zip(summaries, segments, strict=True):
        for hand in summary.hands:
            hands.append(dataclasses.replace(hand, hand=seg[hand.hand]))
    hands.sort(key=lambda h: h.hand)
    hands = _running_totals(hands, len(first.seats))
    running = _totals(hands, len(first.seats))
    seats = []
    for i, seat in enumerate(first.seats):
        mine = [s.seats[i] for s in summaries]
        forfeited: list[int] = []
        faults: list[Fault] = []
        for s, seg, summary in zip(mine, segments, summaries, strict=True):
            faults += [
                dataclasses.replace(f, hand=seg[f.hand] if f.hand is not None else None)
                for f in s.faults
            ]
            if s.forfeit:
                played = len(summary.hands)
                since = s.forfeit_hand or 0
                forfeited += [seg[h] for h in range(min(since, played), played)]
        forfeited.sort()
        seats.append(
            dataclasses.replace(
                seat,
                score=running[i],
                penalty_points=sum(s.penalty_points or 0 for s in mine),
                forfeit=any(s.forfeit for s in mine),
                forfeit_hand=forfeited[0] if forfeited else None,
                forfeit_hands=tuple(forfeited),
                strikes=sum(s.strikes for s in mine),
                faults=tuple(faults),
                connected=all(s.started for s in mine),
            )
        )
    return first.replace(
        turn_round_trip=round_trip_stats(turn_ms),
        rules=_rules_of(first.rules, len(hands)),
        match_over=all(s.match_over for s in summaries),
        hands=tuple(hands),
        seats=_placed(seats),
        segments=len(segments),
    )


def split_match(summary: MatchResult, sizes: list[int]) -> list[MatchResult]:
    """The results of several matches played as one (see ``run_match``'s ``segments``: the
    ladder plays a batch of matches of one table so that each set of bot instances plays
    one rotation of all their deals): ``sizes[j]`` hands each, in deal-list order.

    Each result has its own hands (numbered from 0), totals, places and forfeited hands; a
    seat's faults go with the hand they happened in — one outside any hand (before the
    first, between segments) goes with the batch's first match, and a forfeit that cost
    no hand (the bot left after its last one) with the last.  ``batch`` says which."""
    if sum(sizes) != len(summary.hands) or any(n <= 0 for n in sizes):
        raise ValueError(f"{len(summary.hands)} hands cannot be split as {sizes}")
    bounds = [sum(sizes[:j]) for j in range(len(sizes) + 1)]
    out = []
    players = len(summary.seats)
    for j, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        hands = [dataclasses.replace(h, hand=h.hand - lo) for h in summary.hands[lo:hi]]
        hands = _running_totals(hands, players)
        running = _totals(hands, players)
        seats = []
        for i, seat in enumerate(summary.seats):
            lost = [h - lo for h in seat.forfeit_hands or () if lo <= h < hi]
            faults = tuple(
                dataclasses.replace(f, hand=f.hand - lo if f.hand is not None else None)
                for f in seat.faults
                if (f.hand is None and j == 0) or (f.hand is not None and lo <= f.hand < hi)
            )
            left_after = seat.forfeit and not seat.forfeit_hands and j == len(sizes) - 1
            seats.append(
                dataclasses.replace(
                    seat,
                    score=running[i],
                    penalty_points=sum((h.penalties or ())[i] for h in hands),
                    forfeit=bool(lost) or bool(left_after),
                    forfeit_hand=lost[0] if lost else (len(hands) if left_after else None),
                    forfeit_hands=tuple(lost),
                    strikes=sum(1 for f in faults if f.strike),
                    faults=faults,
                )
            )
        out.append(
            summary.replace(
                rules=_rules_of(summary.rules, len(hands)),
                hands=tuple(hands),
                seats=_placed(seats),
                batch=Batch(summary.match_id, j, len(sizes)),
            )
        )
    return out


async def run_match(
    bots: list[BotSpec],
    rules: RuleSet,
    seed: int | str,
    time_control: TimeControl | None = None,
    sandbox: str = "process",
    record_path: Path | None = None,
    on_hand_end: Callable[[MatchSession, Any], None] | None = None,
    listen_tcp: str | None = None,
    listen_tls: ssl.SSLContext | None = None,
    on_remote: Callable[[Credentials, str], None] | None = None,
    limits: dict[str, Any] | None = None,
    deals: list[list[list[int]]] | None = None,
    segments: list[list[int]] | None = None,
    all_must_start: bool = False,
    log_dir: Path | None = None,
    seat_time: dict[int, TimeControl] | None = None,
) -> MatchResult:
    """Play one match; returns the result summary (see MatchSession.summary).

    ``all_must_start``: a bot that does not start (it ends before its Hello, its sandbox
    cannot start it, or the startup allowance runs out) ends the match before the first
    hand — of the first segment, or of the segment whose fresh instances failed — and the
    result says why (``aborted``); see ``failed_to_start``.

    ``segments`` (with ``deals``): lists of indices into ``deals``; each segment is played
    by freshly started bot instances with nothing kept from the one before (see
    ``by_rotation``), the next segment's bots starting while the current ones play.  The
    result numbers hands by their index in ``deals``.

    Remote seats (``BotSpec.remote``) need ``listen_tcp``; ``on_remote(credentials, name)``
    is told how each may connect, and should show it to whoever starts that bot.
    ``listen_tls``: that port speaks TLS with this context (see ``arena.referee.tls``).

    ``log_dir``: keep each seat's output there (see ``arena.seatlogs``); each seat's
    ``log`` in the result and the record's header names its file.  Without it, what a bot
    prints lives only as long as its instance (its last words name its faults).

    ``seat_time``: a seat's own time control in place of ``time_control`` (a person's seat:
    seconds a move, where a bot has one); the startup allowance stays the match's."""
    if any(b.remote for b in bots) and not listen_tcp:
        raise ValueError("a remote seat needs a TCP address to listen on (--listen HOST:PORT)")
    if segments is not None:
        if deals is None or sorted(i for seg in segments for i in seg) != list(range(len(deals))):
            raise ValueError("segments must split the deal list: every deal exactly once")
        if len(segments) > 1 and any(b.remote for b in bots):
            raise ValueError("a remote seat cannot be restarted for each segment")
    plan = (segments or [list(range(len(deals)))]) if deals is not None else [[]]
    names = unique_names(bots)
    workdir = str(new_match_folder())  # its sockets' paths fit (a deep TMPDIR falls back)
    writer = RecordWriter(record_path) if record_path else None
    server = RefereeServer()  # gated (listen_private below): one stream per seat link
    handles: list[list[BotHandle]] = [[] for _ in plan]
    watchers: list[asyncio.Task] = []
    stopping: list[asyncio.Task] = []
    late: list[asyncio.Future[BotHandle]] = []  # starts cut off (allowance, Ctrl-C)
    logs: SeatLogs | None = None
    log_of: dict[BotHandle, tuple[int, int]] = {}  # handle -> (seat, segment)

    def save_log(handle: BotHandle) -> None:
        """After a stop: what that instance wrote goes to its seat's log."""
        seat, k = log_of.pop(handle, (None, 0))
        if logs is not None and seat is not None and handle.output is not None:
            label = f"seat {seat}, instance {k + 1} of {len(plan)}" if len(plan) > 1 else None
            # tracebacks name the author's files, not the sandbox's copy (bytes kept as is)
            text = handle.output.decode("utf-8", "surrogateescape")
            output = as_authored(bots[seat], text).encode("utf-8", "surrogateescape")
            with contextlib.suppress(OSError):
                logs.append(seat, output, label)

    base_id = secrets.token_hex(8)
    try:
        # one socket per seat and segment, each in its own folder: a bot sees only its own
        addresses: list[list[str]] = []
        # gRPC listens only here, in a folder no sandbox mounts; each seat's socket is a
        # gate that accepts one connection and relays it here (see arena.referee.gate)
        server.listen_private(Path(workdir) / "referee")
        for k in range(len(plan)):
            row = []
            for i in range(len(bots)):
                folder = Path(workdir) / (f"sock{i}" if len(plan) == 1 else f"sock{k}.{i}")
                folder.mkdir(mode=0o755)
                row.append(server.listen_seat(folder))
            addresses.append(row)
        tcp_address = server.listen_tcp(listen_tcp, listen_tls) if listen_tcp else None
        box = make_sandbox(sandbox, **(limits or {}))
        if log_dir is not None:  # inproc bots print to the referee's own terminal
            box.keep_output = True
            logs = SeatLogs(log_dir, names, [not b.remote and box.name != "inproc" for b in bots])
        await box.prepare([b for b in bots if not b.remote])
        sessions = [
            MatchSession(
                rules,
                [
                    SeatSpec(
                        n,
                        log=logs.path(i) if logs else None,
                        time_control=(seat_time or {}).get(i),
                    )
                    for i, n in enumerate(names)
                ],
                seed,
                time_control,
                match_id=base_id if len(plan) == 1 else f"{base_id}.{k}",
                record=writer if len(plan) == 1 or writer is None else _renumbered(writer, k, seg),
                sandbox=box.describe(),
                deals=None if deals is None else [deals[i] for i in seg],
                on_hand_end=on_hand_end,
                all_must_start=all_must_start,
            )
            for k, seg in enumerate(plan)
        ]
        for session in sessions:
            server.add(session)
        await server.start()

        async def launch(k: int) -> None:
            session = sessions[k]
            starts: dict[int, asyncio.Future[BotHandle]] = {}
            for i, bot in enumerate(bots):
                token = session.seats[i].spec.token
                if bot.remote:
                    assert tcp_address is not None
                    if on_remote:
                        on_remote(Credentials(tcp_address, session.match_id, i, token), bot.name)
                    continue
                creds = Credentials(addresses[k][i], session.match_id, i, token)
                # the seats start at once, every step of every start under one startup
                # allowance (one after the other, four stalled starts took four); a start
                # cut off is not cancelled yet (a sandbox's calls cannot be taken back: the
                # bot or its container may appear later) but kept, and stopped below
                starts[i] = asyncio.ensure_future(box.start(bot, creds, workdir))
                late.append(starts[i])  # until its handle is ours (Ctrl-C may come first)
            if starts:
                await asyncio.wait(starts.values(), timeout=session.tc.startup_ms / 1000)
            for i, starting in starts.items():
                if not starting.done():
                    session.process_exited(i, "the sandbox could not start it: timed out", True)
                    continue
                late.remove(starting)
                try:
                    handle = starting.result()
                except SandboxUnavailable:
                    raise  # the arena's configuration, not the bot: nothing can play
                except Exception as exc:  # the engine failed: this seat's fault
                    why = printable(exc, 300)
                    session.process_exited(i, f"the sandbox could not start it: {why}", True)
                    continue
                handles[k].append(handle)
                log_of[handle] = (i, k)
                session.seats[i].exit_grace_s = box.exit_grace_s

                async def watch(i: int = i, handle: BotHandle = handle) -> None:
                    how, failed = await handle.wait()
                    session.process_exited(i, how, failed)

                watchers.append(asyncio.create_task(watch()))

        launched = time.perf_counter()
        await launch(0)
        summaries = []
        for k, session in enumerate(sessions):
            if k + 1 < len(sessions):  # the next instances start while these play
                await launch(k + 1)
            summaries.append(await session.run())
            stopping.append(asyncio.create_task(_stop_all(handles[k], save_log)))
            handles[k] = []
            if session.aborted:
                break
        if len(plan) == 1:
            summary = summaries[0]
        else:
            played = plan[: len(summaries)]
            turn_ms = [t for session in sessions for t in session.turn_times_ms]
            summary = merge_segments(summaries, played, turn_ms).replace(match_id=base_id)
            if sessions[len(summaries) - 1].aborted:
                summary = summary.replace(aborted=sessions[len(summaries) - 1].aborted)
        summary = summary.replace(
            seats=tuple(  # where in the author's files, not the sandbox's
                dataclasses.replace(
                    seat,
                    faults=tuple(
                        dataclasses.replace(f, detail=as_authored(bot, f.detail))
                        if f.detail is not None
                        else f
                        for f in seat.faults
                    ),
                )
                for seat, bot in zip(summary.seats, bots, strict=True)
            ),
            sandbox=box.name,
            sandbox_limits=box.describe()["limits"],
        )
        connected = [s.connected_at for s in sessions[0].seats if s.connected_at is not None]
        if len(connected) == len(sessions[0].seats):  # launch of the first bot → last Hello
            summary = summary.replace(seats_ready_s=round(max(connected) - launched, 3))
        return summary
    finally:
        server.release_reserve()  # descriptors for stopping bots, whatever filled the table
        for t in watchers:
            t.cancel()
        for seated in handles:
            await _stop_all(seated, save_log)
        if late:  # what a cut-off start made after all: stopped like the rest
            await _through(_stop_late(late, box.late_start_s))
        for t in stopping:
            with contextlib.suppress(BaseException):
                await _through(t)
        with contextlib.suppress(Exception):
            await server.stop(0.2)
        if writer:
            writer.close()
        shutil.rmtree(workdir, ignore_errors=True)


async def _stop_all(
    handles: list[BotHandle], after: Callable[[BotHandle], None] | None = None
) -> None:
    """Stop bots (each stop is idempotent and never raises here); ``after(handle)`` once
    each has stopped."""
    for h in handles:
        with contextlib.suppress(Exception):
            await _through(h.stop())
            if after is not None:
                after(h)


async def _through(aw: Any) -> Any:
    """Await ``aw`` to its end even when the caller is cancelled meanwhile, once or more
    (the cancellation is not passed on: this is for stopping bots, which must finish).
    Ctrl-C as a ladder's batch ended cancelled its match while it stopped its bots — the
    ladder's pool cancels each batch a second time as it winds up — and a stop cut short,
    or a stopping task cancelled before its first step, left containers behind."""
    task = asyncio.ensure_future(aw)
    while not task.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(task)
    return task.result()


async def _stop_late(late: list[asyncio.Future[BotHandle]], wait_s: float) -> None:
    """Stop what the starts a match cut off made: each gets ``wait_s`` to finish, and is
    cancelled after (a docker start then removes what it makes by itself)."""
    done, pending = await asyncio.wait(late, timeout=wait_s)
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.wait(pending)
    await _stop_all([t.result() for t in done if not t.cancelled() and not t.exception()])


def _renumbered(writer: RecordWriter, k: int, seg: list[int]) -> Callable[[dict[str, Any]], None]:
    """A segment's record events with hands numbered by their index in the deal list."""

    def record(event: dict[str, Any]) -> None:
        if event.get("hand") is not None and event["type"] != "match":
            event = {**event, "hand": seg[event["hand"]]}
        if event["type"] == "match":
            event = {**event, "segment": k}
        writer(event)

    return record
