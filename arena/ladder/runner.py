"""Planning and running a ladder: groups of four, duplicate matches, resumable.

Planning is incremental and deterministic: every group of four entrants (all groups when
there are few, a balanced sample when C(n, 4) is large) gets ``rounds`` matches, each of
``deals`` deal seeds derived from the ladder, the group and the round, every deal played in
every seat rotation.  A match has a key; planning again adds only the keys that are missing,
so new or updated bots join a running ladder and get matches against the field.

Running takes the pending matches in batches of one table (``batches``: up to ``BATCH``
matches with the same seats, played as one by bot instances that each play one rotation of
all their deals), plays up to ``jobs`` batches at once (each with its own referee and
sandboxes), and writes each finished match in its own transaction.  A match left
``running`` by a killed run is played again from scratch.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import hmac
import itertools
import json
import os
import random
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from bigtwo import RuleSet

from ..bots import resolve
from ..match import by_rotation, failed_to_start, run_match, split_match
from ..referee.session import TimeControl
from .duplicate import block_rankings, rotated_deals
from .ratings import Fit, fit_plackett_luce
from .records import kept_records
from .store import (
    BotVersion,
    Entry,
    Ladder,
    Match,
    RatingSnapshot,
    _now,
    save_match,
)

MAX_ALL_GROUPS = 70  # C(8, 4): beyond, a balanced sample
BATCH = 4
"""Matches of one table played as one batch (``play_batch``): with fresh instances for each
rotation, an instance then plays as many hands as one instance played a whole match when
instances were kept for the match (4 deals × 4 rotations)."""


def groups_for(ids: list[int], seats: int = 4, rng: random.Random | None = None) -> list[list[int]]:
    """Groups of ``seats`` entrants: all of them when few, else a sample in which every pair
    meets about equally often.  With fewer entrants than seats, entrants repeat in
    rotation."""
    ids = sorted(ids)
    if len(ids) < 2:
        raise ValueError("a ladder needs at least two distinct bots")
    if len(ids) <= seats:
        return [[ids[i % len(ids)] for i in range(seats)]]
    combos = [list(c) for c in itertools.combinations(ids, seats)]
    if len(combos) <= MAX_ALL_GROUPS:
        return combos
    rng = rng or random.Random(0)
    meets = {p: 0 for p in itertools.combinations(ids, 2)}
    target = MAX_ALL_GROUPS
    chosen: list[list[int]] = []
    for _ in range(target):  # greedy: the group whose pairs have met least
        sample = rng.sample(combos, min(200, len(combos)))
        best = min(sample, key=lambda g: sum(meets[p] for p in itertools.combinations(g, 2)))
        chosen.append(best)
        for p in itertools.combinations(best, 2):
            meets[p] += 1
    return chosen


def deal_key(ladder: Ladder) -> str:
    """The ladder's secret deal key (made when first needed, kept in the ladder's settings in
    the database, which no sandbox can read)."""
    key = ladder.settings.get("deal_key")
    if not key:
        key = secrets.token_hex(32)
        ladder.settings = {**ladder.settings, "deal_key": key}  # a new dict: JSON is saved
    return key


def deal_seed(key: str, deal_id: str) -> str:
    """The seed a planned deal is dealt from: HMAC-SHA256 of its public id under the
    ladder's secret key.  The id is public (it is made of the group and the round), so a
    seed derived from it alone would let a bot try candidate seeds against its own 13 cards
    and learn all four hands; keyed, the deal is no function of anything a bot can learn."""
    return hmac.new(bytes.fromhex(key), deal_id.encode(), hashlib.sha256).hexdigest()


def plan(session: Session, ladder: Ladder, rounds: int) -> int:
    """Add the missing matches; returns how many were added.  Each deal is stored by its
    public id; its seed is keyed (``deal_seed``) when the match is played."""
    deal_key(ladder)
    s = ladder.settings
    ids = [
        e.version_id
        for e in session.scalars(select(Entry).where(Entry.ladder_id == ladder.id))
        if not e.retired  # retired: no new matches (its finished ones keep counting)
    ]
    added = 0
    for group in groups_for(ids):
        for r in range(rounds):
            key = hashlib.sha256(json.dumps([group, r]).encode()).hexdigest()[:32]
            exists = session.scalar(
                select(Match.id).where(Match.ladder_id == ladder.id, Match.key == key)
            )
            if exists:
                continue
            seeds = [f"{key}/{i}" for i in range(s["deals"])]
            session.add(Match(ladder_id=ladder.id, key=key, seats=group, deal_seeds=seeds))
            added += 1
    return added


def block_totals(match: Match, summary: dict[str, Any], rotations: int) -> list[dict[str, float]]:
    """Per deal, each version's points over the deal's rotations — per seat it held, so that
    an entrant repeated to fill the table (it then holds two seats) is not counted twice."""
    seats_held: dict[str, int] = {}
    for vid in match.seats:
        seats_held[str(vid)] = seats_held.get(str(vid), 0) + 1
    totals: list[dict[str, float]] = [{} for _ in match.deal_seeds]
    for hand in summary["hands"]:
        block = totals[hand["hand"] // rotations]
        for seat, score in enumerate(hand["scores"]):
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


Played = tuple[dict[str, Any], list[dict[str, Any]], bytes | None]
"""A played match: its summary, its moves, its record (gzip; None when aborted)."""


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
        events = [json.loads(line) for line in record.read_text().splitlines()]
    moves = [e for e in events if e["type"] == "turn"]
    if summary.get("aborted"):
        # a bot did not start, so none of it is kept (run_pending puts it back)
        return [(summary, moves, None) for _ in jobs]
    parts = [summary] if len(jobs) == 1 else split_match(summary, sizes)
    parts = [{**part, "seed": job["seed"]} for job, part in zip(jobs, parts, strict=True)]
    kept = kept_records(events, parts, [j.get("match_id") for j in jobs])
    out: list[Played] = []
    lo = 0
    for part, record_j in zip(parts, kept, strict=True):
        hi = lo + len(part["hands"])
        mine = [{**m, "hand": m["hand"] - lo} for m in moves if lo <= m["hand"] < hi]
        out.append((part, mine, record_j))
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
    summary: dict[str, Any],
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
    the ladder stops with its reason instead of rating the fallback's play."""


def _unplay(engine: Engine, match_id: int) -> None:
    """Put a match whose result is not kept back in the queue."""
    with Session(engine) as session, session.begin():
        match = session.get(Match, match_id)
        if match is not None:
            match.status = "pending"
            match.started = None


def _ray_play(jobs: list[dict[str, Any]]) -> list[Played]:
    """The Ray task: one batch of matches in the worker's own event loop."""
    return asyncio.run(play_batch(jobs))


async def run_pending(
    engine: Engine,
    ladder_name: str,
    jobs: int,
    on_done: Callable[[int, int, dict[str, Any]], None] | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> int:
    """Play every pending match (and any left running by a killed run); returns how many
    finished.  Cancelling it (Ctrl-C) stops the matches in flight; those finished stay."""
    with Session(engine) as session, session.begin():
        ladder = session.scalar(select(Ladder).where(Ladder.name == ladder_name))
        if ladder is None:
            raise ValueError(f"no ladder named {ladder_name!r}")
        for m in session.scalars(
            select(Match).where(Match.ladder_id == ladder.id, Match.status == "running")
        ):
            m.status = "pending"  # interrupted last time: replay from scratch
        tables = {
            mid: list(seats)
            for mid, seats in session.execute(
                select(Match.id, Match.seats)
                .where(Match.ladder_id == ladder.id, Match.status == "pending")
                .order_by(Match.id)
            )
        }
        pending = list(tables)
        ladder_id = ladder.id
        rotations = ladder.settings["rotations"]
    total = len(pending)
    done = 0
    gate = asyncio.Semaphore(max(1, jobs))
    remote = _ray_remote(ray_address) if executor == "ray" else None

    async def one(batch: list[int]) -> None:
        nonlocal done
        async with gate:
            jobs_data = [_job(engine, ladder_id, mid) for mid in batch]
            if remote is None:
                results = await play_batch(jobs_data)
            else:  # the same batch on a Ray worker; results come back to this one writer
                results = await remote.remote(jobs_data)
        failed = failed_to_start(results[0][0])
        if failed:  # its author's error, not a result: nothing is rated, the ladder stops
            for mid in batch:
                _unplay(engine, mid)
            seat, detail = failed[0]
            raise BotCannotStart(
                f"bot '{seat['bot']}' cannot start, so the ladder stopped and rated nothing "
                f"of its match: {detail}"
            )
        for mid, (summary, moves, record) in zip(batch, results, strict=True):
            _save(engine, mid, rotations, summary, moves, record)
            done += 1
            if on_done:
                on_done(done, total, summary)

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


def leaderboard(
    session: Session, ladder_name: str, retired: bool = False
) -> tuple[Fit | None, list[dict[str, Any]]]:
    """The ladder's ratings and one row per entrant: the rated in rank order, then those
    with no rating yet (``rated`` False: entered but not played, or no complete deal yet).
    Retired entrants' rows (``retired`` True) only with ``retired``; the ratings are always
    fitted on every finished match, theirs included.  ``rank`` and ``separated_from_next``
    are among the rows returned."""
    ladder = session.scalar(select(Ladder).where(Ladder.name == ladder_name))
    if ladder is None:
        raise ValueError(f"no ladder named {ladder_name!r}")
    entered = list(session.scalars(select(Entry).where(Entry.ladder_id == ladder.id)))
    entries = {e.version_id: e.version for e in entered}
    is_retired = {e.version_id: e.retired for e in entered}
    done = {
        m.id: m
        for m in session.scalars(
            select(Match).where(Match.ladder_id == ladder.id, Match.status == "done")
        )
    }
    rotations = ladder.settings["rotations"]
    blocks = rated_blocks(list(done.values()), rotations)
    if len({k for b in blocks for order in b for k in order}) < 2:
        return None, _unrated(entries, is_retired, done, [], retired)
    fit = fit_plackett_luce(blocks)
    skill = openskill_ordinals(rated_totals(blocks, rotations))
    out = []
    ranked = fit.ratings
    versions = {r.bot: entries.get(r.bot) or session.get(BotVersion, r.bot) for r in ranked}
    labels = {b: v.label if v else str(b) for b, v in versions.items()}
    for i, r in enumerate(ranked):
        played = [m for m in done.values() if r.bot in m.seats]
        points, hands, firsts, faults, forfeits = 0.0, 0, 0, 0, 0
        for m in played:
            for h in m.result["hands"]:
                for seat, vid in enumerate(m.seats):
                    if vid == r.bot:
                        points += h["scores"][seat]
                        hands += 1
            for seat in m.result["seats"]:
                if m.seats[seat["seat"]] == r.bot:
                    firsts += seat["place"] == 1 and not seat["forfeit"]
                    faults += len(seat["faults"])
                    forfeits += bool(seat["forfeit"])
        below = ranked[i + 1] if i + 1 < len(ranked) else None
        out.append(
            {
                "rank": i + 1,
                "bot": labels[r.bot],
                "elo": round(r.elo, 1),
                "elo_low": round(r.low, 1),
                "elo_high": round(r.high, 1),
                "openskill": round(skill[r.bot], 2),
                "matches": len(played),
                "points_per_hand": round(points / hands, 3) if hands else None,
                "first_places": firsts,
                "faults": faults,
                "forfeits": forfeits,
                # P(this bot stronger than that one), as BayesElo's likelihood of superiority
                "superiority": {
                    labels[o.bot]: round(fit.superiority[r.bot][o.bot], 4)
                    for o in ranked
                    if o.bot != r.bot
                },
                "separated_from_next": bool(below and fit.separated(r.bot, below.bot)),
                # False: always behind (or ahead of) part of the field so far, so no finite
                # rating yet; its interval is the ridge's, and it is not in the anchor mean
                "in_field": r.in_field,
                "rated": True,
                "retired": is_retired.get(r.bot, False),
            }
        )
    if not retired:  # hidden: rank and "next" among the rows shown
        out = [row for row in out if not row["retired"]]
        vid = {label: b for b, label in labels.items()}
        for i, row in enumerate(out):
            row["rank"] = i + 1
            below = out[i + 1] if i + 1 < len(out) else None
            row["separated_from_next"] = bool(
                below and fit.separated(vid[row["bot"]], vid[below["bot"]])
            )
    return fit, out + _unrated(entries, is_retired, done, [r.bot for r in ranked], retired)


def _unrated(
    entries: dict[int, BotVersion],
    is_retired: dict[int, bool],
    done: dict[int, Match],
    rated: list[Any],
    retired: bool,
) -> list[dict[str, Any]]:
    """Rows for entrants with no rating yet: entered and not played (``matches`` 0), or
    played without a complete deal block so far — shown, not hidden until they play."""
    out = []
    for vid, version in sorted(entries.items()):
        if vid in rated or (is_retired.get(vid) and not retired):
            continue
        out.append(
            {
                "rank": None,
                "bot": version.label,
                "elo": None,
                "elo_low": None,
                "elo_high": None,
                "openskill": None,
                "matches": sum(1 for m in done.values() if vid in m.seats),
                "points_per_hand": None,
                "first_places": 0,
                "faults": 0,
                "forfeits": 0,
                "superiority": {},
                "separated_from_next": False,
                "in_field": False,
                "rated": False,
                "retired": bool(is_retired.get(vid)),
            }
        )
    return out


FORFEITED = float("-inf")
"""A seat's points, for the ratings, in a hand its fallback policy played: below anyone's."""


def rated_blocks(matches: list[Match], rotations: int) -> list[list[dict[int, float]]]:
    """The official rating's evidence: per deal of every finished match (in match order),
    the orders of its duplicate block — each game's and each set of cards' (see
    ``block_rankings``).  A seat counts as last from the hand in which it forfeited on:
    the fallback policy that plays it keeps the other seats' results meaningful, but its
    points are not the bot's (a bot that crashes at once must not ride a decent autopilot
    up the ladder)."""
    blocks = []
    for m in sorted(matches, key=lambda m: m.id):
        lost = {  # the hands each seat's fallback played
            s["seat"]: forfeited_hands(s, len(m.result["hands"]))
            for s in m.result["seats"]
            if s.get("forfeit")
        }
        by_deal: dict[int, dict[int, list[float]]] = {}
        for hand in m.result["hands"]:
            deal_no, rotation = divmod(hand["hand"], rotations)
            by_deal.setdefault(deal_no, {})[rotation] = [
                FORFEITED if hand["hand"] in lost.get(seat, ()) else float(points)
                for seat, points in enumerate(hand["scores"])
            ]
        for deal_no in sorted(by_deal):
            rows = by_deal[deal_no]
            if len(rows) == rotations:
                orders = block_rankings(m.seats, [rows[r] for r in range(rotations)], rotations)
                if orders:
                    blocks.append(orders)
    return blocks


def forfeited_hands(seat: dict[str, Any], hands: int) -> set[int]:
    """The hands a forfeited seat's fallback played: listed when each rotation had its own
    bot instances (``forfeit_hands``), else every hand from ``forfeit_hand`` on (older
    records without it: the whole match)."""
    if "forfeit_hands" in seat:
        return set(seat["forfeit_hands"])
    return set(range(seat.get("forfeit_hand") or 0, hands))


def rated_totals(blocks: list[list[dict[int, float]]], rotations: int) -> list[dict[int, float]]:
    """Per block, each entrant's summed points over its games, forfeited hands counting as
    a large loss (for OpenSkill's live feedback, which takes one order per block)."""
    out = []
    for orders in blocks:
        total: dict[int, float] = {}
        for game in orders[:rotations]:  # block_rankings puts the games first
            for who, points in game.items():
                total[who] = total.get(who, 0.0) + (points if points != FORFEITED else -1e6)
        out.append(total)
    return out


def openskill_ordinals(blocks: list[dict[Any, float]]) -> dict[Any, float]:
    """OpenSkill (Plackett–Luce, skill drift tau = 0: fixed bot versions) over the blocks in
    play order; the conservative ordinal (mu − 3 sigma) for live feedback, never the rank."""
    from openskill.models import PlackettLuce

    model = PlackettLuce(tau=0.0)
    ratings: dict[Any, Any] = {}
    for block in blocks:
        names = list(block)
        teams = [[ratings.setdefault(b, model.rating())] for b in names]
        new = model.rate(teams, scores=[block[b] for b in names])
        for b, team in zip(names, new, strict=True):
            ratings[b] = team[0]
    return {b: r.ordinal() for b, r in ratings.items()}


def elo_history(blocks: list[dict[Any, float]], k: float = 16.0) -> list[dict[Any, float]]:
    """An incremental K-factor Elo after each block (every pair of distinct bots in a block
    is one game, scored by their block points), for the rating-over-time plot only — never
    for the ranking, which is the batch fit's."""
    ratings: dict[Any, float] = {}
    out = []
    for block in blocks:
        names = list(block)
        delta = dict.fromkeys(names, 0.0)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                ra, rb = ratings.setdefault(a, 0.0), ratings.setdefault(b, 0.0)
                expected = 1 / (1 + 10 ** ((rb - ra) / 400))
                score = 1.0 if block[a] > block[b] else 0.0 if block[a] < block[b] else 0.5
                delta[a] += k * (score - expected)
                delta[b] -= k * (score - expected)
        for name in names:
            ratings[name] += delta[name]
        out.append(dict(ratings))
    return out


def snapshot(session: Session, ladder_name: str) -> RatingSnapshot | None:
    """Store the leaderboard as it stands (the ratings' history)."""
    ladder = session.scalar(select(Ladder).where(Ladder.name == ladder_name))
    _, rows = leaderboard(session, ladder_name, retired=True)
    rows = [r for r in rows if r["rated"]]  # the history of ratings: the rated only
    if ladder is None or not rows:
        return None
    done = counts(session, ladder_name).get("done", 0)
    snap = RatingSnapshot(ladder_id=ladder.id, matches=done, ratings=rows)
    session.add(snap)
    return snap


def counts(session: Session, ladder_name: str) -> dict[str, int]:
    ladder = session.scalar(select(Ladder).where(Ladder.name == ladder_name))
    if ladder is None:
        return {}
    rows = session.execute(
        select(Match.status, func.count())
        .where(Match.ladder_id == ladder.id)
        .group_by(Match.status)
    ).all()
    return {status: n for status, n in rows}
