"""Web arena page times over a big contest (issue 11's target).

Builds a store the size of a long-running contest — 200 bots (20 of them with a second
version, the first retired as an upload retires it), 100,000 finished matches of 4 deals ×
4 rotations with results shaped like the referee's ``MatchSession.summary()``, their deal
blocks, seats and a few faults and forfeits, rating snapshots like the ones ``--play``
stores — and a handful of matches with a real 20-hand record (played in-process by the
sample bots with ``bigtwo.play_local``, 5 duplicate deals × 4 rotations, kept compressed as
the ladder keeps it).  Per-turn ``moves`` rows are not written: no page reads them.

Then it serves the contest with ``arena.web.app.create_app`` on a real uvicorn server on
127.0.0.1 and times each page over HTTP (httpx, one request at a time, after a warm-up):
the leaderboard and its JSON, the match list (page 1, a deep page, one bot's), a bot's page
and its JSON, a match's replay page and its JSON.  It prints the median and p95 in ms, and
the SQL statements each request ran (a count that grows with the rows shown would be a
query per row).  Separately it times ``arena.web.replay_data.replay_data`` alone on the
20-hand record (decompressing and parsing it included).

The leaderboard is fitted on every finished match, in a process of its own, and stored
in the database (``StandingsCache``, ``FitPool``): a first fit of a new store is timed on
its own ("cold"; a kept ``--db`` already holds it) and the pages then read the stored one.
The rating history the chart draws is kept per state (timed on its own too).

Then the refit case (issue 21): the real worker (``arena worker --no-matches``, a process of
its own) refits the whole ladder while the leaderboard page and its JSON are timed; only
requests made while the refit ran count.  The stored fit is marked stale to start it (its
state's match count zeroed), so the worker's refit stores the same standings back and a
kept ``--db`` stays ready for the next run.

    python bench/web.py [--db FILE] [--bots 200] [--matches 100000] [--requests 50]
                        [--snapshots 100] [--no-refit] [--refit-wait 900] [--json]

``--db FILE`` keeps the store (building it takes a minute or two) and reuses it when it
already holds the contest; without it a temporary file is used and removed.

Targets (issue 11): p95 under 150 ms for the leaderboard, match list and bot pages; the
replay data of a 20-hand match under 50 ms.  Issue 21: the leaderboard's p95 under 150 ms
while a refit of the whole ladder runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from sqlalchemy import event, func, insert, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from arena.ladder.duplicate import rotated_deals
from arena.ladder.queries import rating_history
from arena.ladder.running import block_totals
from arena.ladder.store import (
    Bot,
    BotVersion,
    DealResult,
    Entry,
    FaultRow,
    Ladder,
    Match,
    MatchRecord,
    MatchSeat,
    RatingSnapshot,
    open_engine,
)
from arena.referee.results import MatchResult
from arena.web.app import create_app
from arena.web.contest import WebConfig, ensure_contest
from bigtwo import RuleSet, play_local
from bigtwo.loader import load_bot_class
from bigtwo.record import compress, decompress, read_events

ROOT = Path(__file__).resolve().parents[1]
LADDER = "contest"
DEALS, ROTATIONS = 4, 4
RECORDED = 5
"""Matches that get a real 20-hand record (5 deals × 4 rotations)."""
CHUNK = 5000
PAGE_TARGET_MS, REPLAY_TARGET_MS = 150.0, 50.0
IDLE_PICKUP_S = 4.0
"""Seconds for the worker to see its stored fit is stale (it looks every 3 s at rest)."""
FAULT_KINDS = ("timeout", "illegal", "protocol", "crash")


# ----- building the store ---------------------------------------------------------------------
def hand_result(rng: random.Random, hand: int, strength: list[float], cum: list[int]) -> dict:
    """One hand as ``HandResult.to_dict`` has it (without ``remaining``), hk-like scores."""
    winner = rng.choices(range(4), weights=strength)[0]
    left = [0 if s == winner else rng.randint(1, 13) for s in range(4)]
    pens = [n * (3 if n == 13 else 2 if n >= 10 else 1) for n in left]
    scores = [-p for p in pens]
    scores[winner] = sum(pens)
    for s in range(4):
        cum[s] += scores[s]
    return {
        "hand": hand,
        "winner": winner,
        "winning_team": None,
        "cards_left": left,
        "penalties": pens,
        "scores": scores,
        "cumulative": list(cum),
    }


def places(scores: list[int]) -> list[int]:
    return [1 + sum(o > s for o in scores) for s in scores]


def summary(
    rng: random.Random,
    mid: int,
    labels: list[str],
    hands: list[dict],
    rules: dict,
    seed: int,
    faulty: int | None,
    forfeit: int | None,
) -> dict[str, Any]:
    """A result shaped like ``MatchSession.summary()`` (split per match as the ladder does)."""
    totals = hands[-1]["cumulative"] if hands else [0] * 4
    place = places(totals)
    seats = []
    for s, label in enumerate(labels):
        faults = []
        if s in (faulty, forfeit):
            for k in range(3 if s == forfeit else rng.randint(1, 2)):
                faults.append(
                    {
                        "kind": rng.choice(FAULT_KINDS),
                        "hand": rng.randrange(len(hands)),
                        "turn": rng.randint(0, 40),
                        "detail": f"no answer within 2.0 s (strike {k + 1})",
                        "strike": True,
                    }
                )
        seats.append(
            {
                "seat": s,
                "bot": label,
                "score": totals[s],
                "penalty_points": sum(h["penalties"][s] for h in hands),
                "place": place[s],
                "forfeit": s == forfeit,
                "forfeit_hand": 10 if s == forfeit else None,
                "strikes": len(faults),
                "faults": faults,
                "connected": True,
            }
        )
    return {
        "turn_round_trip": {"n": 200, "mean": 1.9, "p50": 1.4, "p95": 4.1, "max": 30.2},
        "match_id": f"ladder match {mid}",
        "rules": rules,
        "seed": seed,
        "match_over": True,
        "hands": hands,
        "seats": seats,
    }


def recorded_match(rules: RuleSet, seeds: list[int], labels: list[str], tmp: Path) -> tuple:
    """A real match of 5 duplicate deals × 4 rotations (20 hands) played by the sample bots:
    its hands, its record compressed, its seats' places and scores."""
    names = ("heuristic", "greedy", "random", "heuristic")
    bots = [load_bot_class(str(ROOT / "sample_bots" / n))() for n in names]
    for bot, label in zip(bots, labels, strict=True):
        bot.name = label  # shown in the record as the ladder's label
    path = tmp / f"match-{seeds[0]}.jsonl"
    result = play_local(
        bots, rules, seeds[0], deals=rotated_deals(rules, seeds, ROTATIONS), record=path
    )
    events = [e for _, e in read_events(path)]
    return result.to_dict(), compress(events)


def build(engine: Engine, n_bots: int, n_matches: int, n_snaps: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    t0 = time.perf_counter()
    ensure_contest(engine, WebConfig(db="", house_bots=False))
    with Session(engine) as session:
        ladder = session.scalar(select(Ladder).where(Ladder.name == LADDER))
        assert ladder is not None
        lid, rules_dict = ladder.id, ladder.rules
        ladder.settings = {**ladder.settings, "sandbox": "process"}
        session.commit()
    rules = RuleSet.from_dict(rules_dict)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    bots, versions, entries = [], [], []
    strength: dict[int, float] = {}
    label: dict[int, str] = {}
    current: list[int] = []  # each bot's newest version: the one matches seat from halfway
    first: list[int] = []
    vid = 0
    for b in range(1, n_bots + 1):
        name = f"bot-{b:03d}"
        bots.append({"id": b, "name": name, "created": start})
        n_versions = 2 if b % 10 == 0 else 1
        for number in range(1, n_versions + 1):
            vid += 1
            versions.append(
                {
                    "id": vid,
                    "bot_id": b,
                    "number": number,
                    "source_hash": f"{b:08x}{number:056x}",
                    "spec": str(ROOT / "sample_bots" / "random"),
                    "created": start + timedelta(days=number - 1),
                }
            )
            entries.append(
                {
                    "ladder_id": lid,
                    "version_id": vid,
                    "retired": number < n_versions,
                    "paused": False,
                }
            )
            strength[vid] = rng.lognormvariate(0, 0.6)
            label[vid] = name if number == 1 else f"{name}@v{number}"
        first.append(vid - n_versions + 1)
        current.append(vid)
    with Session(engine) as session, session.begin():
        session.execute(insert(Bot), bots)
        session.execute(insert(BotVersion), versions)
        session.execute(insert(Entry), entries)
    print(f"  {n_bots} bots, {len(versions)} versions entered", flush=True)

    recorded = set(rng.sample(range(n_matches // 2, n_matches), min(RECORDED, n_matches)))
    tmp = Path(tempfile.mkdtemp(prefix="bench-web-"))
    rows: dict[str, list[dict]] = {"m": [], "s": [], "d": [], "f": [], "r": []}

    def flush() -> None:
        with Session(engine) as session, session.begin():
            session.execute(insert(Match), rows["m"])
            session.execute(insert(MatchSeat), rows["s"])
            session.execute(insert(DealResult), rows["d"])
            if rows["f"]:
                session.execute(insert(FaultRow), rows["f"])
            if rows["r"]:
                session.execute(insert(MatchRecord), rows["r"])
        for v in rows.values():
            v.clear()

    for i in range(n_matches):
        mid = i + 1
        pool = current if i >= n_matches // 2 else first
        seats = rng.sample(pool, 4)
        names = [label[v] for v in seats]
        finished = start + timedelta(seconds=30 * i)
        if i in recorded:
            deal_seeds = [rng.getrandbits(48) for _ in range(RECORDED)]
            played, record = recorded_match(rules, deal_seeds, names, tmp)
            hands = played["hands"]
            faulty = forfeit = None
            rows["r"].append({"match_id": mid, "data": record, "size": len(decompress(record))})
        else:
            deal_seeds = [rng.getrandbits(48) for _ in range(DEALS)]
            cum = [0, 0, 0, 0]
            weights = [strength[v] for v in seats]
            hands = [hand_result(rng, h, weights, cum) for h in range(DEALS * ROTATIONS)]
            faulty = rng.randrange(4) if rng.random() < 0.02 else None
            forfeit = rng.randrange(4) if rng.random() < 0.002 else None
        result = summary(rng, mid, names, hands, rules_dict, deal_seeds[0], faulty, forfeit)
        match = Match(id=mid, seats=seats, deal_seeds=deal_seeds)
        rows["m"].append(
            {
                "id": mid,
                "ladder_id": lid,
                "key": f"bench/{mid}",
                "status": "done",
                "seats": seats,
                "deal_seeds": deal_seeds,
                "result": result,
                "started": finished - timedelta(seconds=25),
                "finished": finished,
            }
        )
        rows["s"] += [{"match_id": mid, "seat": s, "version_id": v} for s, v in enumerate(seats)]
        for d, block in enumerate(block_totals(match, MatchResult.from_json(result), ROTATIONS)):
            rows["d"].append(
                {"match_id": mid, "index": d, "seed": str(deal_seeds[d]), "totals": block}
            )
        for seat in result["seats"]:
            for f in seat["faults"]:
                rows["f"].append(
                    {
                        "match_id": mid,
                        "version_id": seats[seat["seat"]],
                        "kind": f["kind"],
                        "hand": f["hand"],
                        "turn": f["turn"],
                        "detail": f["detail"],
                    }
                )
        if len(rows["m"]) >= CHUNK:
            flush()
            print(f"  {mid:,} matches ({time.perf_counter() - t0:.0f} s)", flush=True)
    if rows["m"]:
        flush()
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"  {n_matches:,} matches stored in {time.perf_counter() - t0:.0f} s", flush=True)
    if n_snaps:
        snapshots(engine, lid, n_snaps, n_matches, strength, label, current, rng)
        print(f"  {n_snaps} rating snapshots stored", flush=True)


def snapshots(
    engine: Engine,
    lid: int,
    n: int,
    n_matches: int,
    strength: dict[int, float],
    label: dict[int, str],
    current: list[int],
    rng: random.Random,
) -> None:
    """Rating snapshots as the player stores them (one leaderboard's rated rows each, with
    the superiority matrix), the ratings drifting towards the bots' strengths."""
    import math

    shown = sorted(current, key=lambda v: -strength[v])
    base = {v: 400 / math.log(10) * math.log(strength[v]) for v in shown}
    mean = statistics.fmean(base.values())
    with Session(engine) as session, session.begin():
        for k in range(1, n + 1):
            noise = 200 / math.sqrt(k)
            elo = {v: round(base[v] - mean + rng.gauss(0, noise), 1) for v in shown}
            order = sorted(shown, key=lambda v: -elo[v])
            rows = []
            for rank, v in enumerate(order, 1):
                half = round(30 + noise / 2, 1)
                rows.append(
                    {
                        "rank": rank,
                        "bot": label[v],
                        "elo": elo[v],
                        "elo_low": round(elo[v] - half, 1),
                        "elo_high": round(elo[v] + half, 1),
                        "openskill": round(elo[v] / 40, 2),
                        "matches": k * n_matches // n // 50,
                        "points_per_hand": 0.0,
                        "first_places": 0,
                        "faults": 0,
                        "forfeits": 0,
                        "superiority": {
                            label[o]: round(1 / (1 + 10 ** ((elo[o] - elo[v]) / 400)), 4)
                            for o in order
                            if o != v
                        },
                        "separated_from_next": False,
                        "in_field": True,
                        "rated": True,
                        "retired": False,
                    }
                )
            session.add(RatingSnapshot(ladder_id=lid, matches=k * n_matches // n, ratings=rows))


# ----- serving and timing ---------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve(app: Any) -> Iterator[str]:
    """``app`` on uvicorn in a thread on 127.0.0.1 (as tests/web/conftest.py serves it); a
    port taken between choosing and binding it (a busy machine) is chosen again."""
    for attempt in range(5):
        config = uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, name="uvicorn-bench", daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        if server.started:
            break
        server.should_exit = True
        thread.join(10)
        if attempt == 4:
            raise RuntimeError("the server did not start")
    try:
        yield f"http://127.0.0.1:{config.port}"
    finally:
        server.should_exit = True
        thread.join(30)


class QueryCounter:
    """SQL statements the engine ran (the server runs in this process, one request at a
    time, so the count between two requests is that request's)."""

    def __init__(self, engine: Engine) -> None:
        self.n = 0
        event.listen(engine, "before_cursor_execute", self._count)

    def _count(self, *_: Any) -> None:
        self.n += 1


def p95(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=20, method="inclusive")[-1] if len(xs) > 1 else xs[0]


def timed(fn: Callable[[], Any], n: int, warm: int = 3) -> list[float]:
    for _ in range(warm):
        fn()
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def pick(engine: Engine) -> tuple[str, int, int]:
    """A bot in the middle of the field, a recorded match, the deepest match-list page."""
    with Session(engine) as session:
        lid = session.scalar(select(Ladder.id).where(Ladder.name == LADDER))
        bots = session.scalar(select(func.count()).select_from(Bot)) or 0
        bot = session.scalar(select(Bot.name).order_by(Bot.id).offset(bots // 2).limit(1))
        rec = session.scalar(select(MatchRecord.match_id).order_by(MatchRecord.match_id))
        done = session.scalar(
            select(func.count()).where(Match.ladder_id == lid, Match.status == "done")
        )
    assert bot and rec, "the store holds no bots or no recorded match"
    return bot, rec, max(1, -(-int(done or 0) // 50))


def replay_alone(engine: Engine, match_id: int, n: int) -> list[float]:
    """``replay_data`` on the record, decompressing and parsing it included."""
    from arena.web.replay_data import replay_data

    with Session(engine) as session:
        rec = session.get(MatchRecord, match_id)
        assert rec is not None
        data = rec.data

    def once() -> None:
        lines = decompress(data).decode("utf-8", "replace").splitlines()
        out = replay_data([json.loads(line) for line in lines if line.strip()])
        assert out["valid"], out["problem"]

    return timed(once, n)


def refit_case(
    db: str, engine: Engine, client: httpx.Client, requests: int, wait_s: float, say: Any
) -> dict[str, Any]:
    """The leaderboard timed while ``arena worker`` refits the ladder in its own process."""
    import signal
    import subprocess

    from sqlalchemy import update

    from arena.web.worker_state import StandingsFit, fit_meta, worker_info

    with Session(engine) as session:
        lid = session.scalar(select(Ladder.id).where(Ladder.name == LADDER))
    assert lid is not None
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT), str(ROOT / "sdk"), os.environ.get("PYTHONPATH", "")]
        ),
        "ARENA_DB": db,
    }
    log_path = Path(tempfile.mkdtemp(prefix="bench-web-worker-")) / "worker.log"
    cmd = [sys.executable, "-m", "arena", "worker", "--no-matches", "--sandbox", "process"]
    with log_path.open("wb") as log_file:
        worker = subprocess.Popen(cmd, env=env, stdout=log_file, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while (
            not worker_info(engine, LADDER).alive or worker_info(engine, LADDER).pid != worker.pid
        ):
            if worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the worker did not start: {log_path.read_text()[-2000:]}")
            time.sleep(0.2)
        meta = fit_meta(engine, lid)
        assert meta is not None, "no stored fit to start from"
        stale = json.loads(meta.state)
        stale[1] = 0  # a state before every match: the worker refits at once
        with Session(engine) as session, session.begin():
            session.execute(
                update(StandingsFit)
                .where(StandingsFit.ladder_id == lid)
                .values(state=json.dumps(stale, separators=(",", ":")))
            )
        started = time.perf_counter()
        time.sleep(IDLE_PICKUP_S)  # the worker's next look (it polls every few seconds)
        serial = meta.serial
        timings: dict[str, list[float]] = {"/": [], "/api/leaderboard": []}
        for _ in range(requests):
            for path, ms in timings.items():
                t = time.perf_counter()
                client.get(path).raise_for_status()
                ms.append((time.perf_counter() - t) * 1000)
        during = (fit_meta(engine, lid) or meta).serial == serial
        say(
            f"\nleaderboard while `arena worker` refits {meta.matches_done:,} matches in its "
            f"own process ({requests} requests each"
            + ("" if during else "; WARNING: the refit ended before the requests did")
            + ")"
        )
        out: dict[str, Any] = {"during_refit": during}
        for path, ms in timings.items():
            row = {"median_ms": round(statistics.median(ms), 1), "p95_ms": round(p95(ms), 1)}
            out[path] = row
            flag = "" if row["p95_ms"] < PAGE_TARGET_MS else "  OVER"
            say(f"  {path:36} median {row['median_ms']:8.1f}  p95 {row['p95_ms']:8.1f}{flag}")
        deadline = time.monotonic() + wait_s
        while (fit_meta(engine, lid) or meta).serial == serial:
            if worker.poll() is not None or time.monotonic() > deadline:
                say(f"  (the refit did not end within {wait_s:.0f} s)")
                out["refit_s"] = None
                break
            time.sleep(1.0)
        else:
            out["refit_s"] = round(time.perf_counter() - started, 1)
            say(f"  the worker's refit took {out['refit_s']} s (wall clock, nice 10)")
    finally:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(60)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait(10)
        shutil.rmtree(log_path.parent, ignore_errors=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--db", help="keep the store in this SQLite file (reused if it exists)")
    parser.add_argument("--bots", type=int, default=200, help="bots (default 200)")
    parser.add_argument("--matches", type=int, default=100_000, help="matches (default 100000)")
    parser.add_argument("--snapshots", type=int, default=100, help="rating snapshots (100)")
    parser.add_argument("--requests", type=int, default=50, help="timed requests per page (50)")
    parser.add_argument(
        "--no-refit", action="store_true", help="skip the case of the worker refitting"
    )
    parser.add_argument(
        "--refit-wait", type=float, default=900.0, help="seconds to wait for its refit (900)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if args.bots < 4 or args.matches < 1 or args.requests < 1:
        parser.error("--bots needs at least 4, --matches and --requests at least 1")
    say = (lambda *a, **k: None) if args.json else print
    with contextlib.ExitStack() as stack:
        if args.db:
            db = str(Path(args.db).resolve())
        else:
            db = str(Path(stack.enter_context(tempfile.TemporaryDirectory())) / "bench.db")
        engine = open_engine(db)
        with Session(engine) as session:
            have = session.scalar(select(func.count()).select_from(Match))
        if have:
            say(f"reusing {db}: {have:,} matches")
            build_s = None
        else:
            say(f"building {db}: {args.bots} bots, {args.matches:,} matches")
            t = time.perf_counter()
            build(engine, args.bots, args.matches, args.snapshots)
            build_s = time.perf_counter() - t
        engine.dispose()
        size_mb = os.path.getsize(db) / 2**20
        bot, rec_id, deep = pick(open_engine(db))

        config = WebConfig(db=db, ladder=LADDER, house_bots=False)
        app = create_app(config)
        state = app.state
        counter = QueryCounter(state.engine)
        t = time.perf_counter()
        kept = state.standings.get(state.engine, LADDER)
        cold_fit = time.perf_counter() - t
        with Session(state.engine) as session:
            lid = session.scalar(select(Ladder.id).where(Ladder.name == LADDER))
        t = time.perf_counter()
        history, source = state.standings.history(state.engine, LADDER, lid, rating_history)
        cold_history = time.perf_counter() - t
        say(
            f"store: {size_mb:.0f} MB; leaderboard (stored, or a first fit in a process of "
            "its own): "
            f"{cold_fit:.1f} s for {len(kept.rows)} rows; rating history "
            f"({len(history)} points from {source}): {cold_history:.2f} s"
        )
        say(
            "  (the leaderboard is stored by whoever fitted it, in a process of its own: "
            "pages read it; the history is kept per state of the ladder)"
        )
        pages = [
            ("/", "leaderboard page"),
            ("/api/leaderboard", "leaderboard JSON"),
            ("/matches", "match list, page 1"),
            (f"/matches?page={deep}", f"match list, page {deep}"),
            (f"/matches?bot={bot}", f"match list of {bot}"),
            (f"/bots/{bot}", "bot page"),
            (f"/api/bots/{bot}", "bot JSON"),
            (f"/matches/{rec_id}", "replay page (20 hands)"),
            (f"/api/matches/{rec_id}", "replay JSON (20 hands)"),
        ]
        results: dict[str, Any] = {}
        with serve(app) as url, httpx.Client(base_url=url, timeout=60) as client:
            say(f"\n{'page':38} {'median':>8} {'p95':>8} {'KB':>6} {'queries':>8}")
            for path, what in pages:
                sizes: list[int] = []
                queries: list[int] = []

                def get(path: str = path, sizes: list = sizes, queries: list = queries) -> None:
                    before = counter.n
                    r = client.get(path)
                    r.raise_for_status()
                    queries.append(counter.n - before)
                    sizes.append(len(r.content))

                ms = timed(get, args.requests)
                row = {
                    "path": path,
                    "median_ms": round(statistics.median(ms), 1),
                    "p95_ms": round(p95(ms), 1),
                    "kb": round(statistics.median(sizes) / 1024, 1),
                    "queries": max(queries),
                }
                results[what] = row
                flag = "" if row["p95_ms"] < PAGE_TARGET_MS or "replay" in what else "  OVER"
                say(
                    f"{what:38} {row['median_ms']:8.1f} {row['p95_ms']:8.1f} "
                    f"{row['kb']:6.0f} {row['queries']:8d}{flag}"
                )
            refit = (
                None
                if args.no_refit
                else refit_case(db, state.engine, client, args.requests, args.refit_wait, say)
            )
        replay = replay_alone(state.engine, rec_id, args.requests)
        rep = {"median_ms": round(statistics.median(replay), 1), "p95_ms": round(p95(replay), 1)}
        say(
            f"\nreplay_data alone, 20-hand match (decompress + parse + replay): "
            f"median {rep['median_ms']} ms, p95 {rep['p95_ms']} ms "
            f"(target < {REPLAY_TARGET_MS:.0f} ms)"
        )
        say(
            f"(targets: p95 < {PAGE_TARGET_MS:.0f} ms for the leaderboard, match list and bot "
            f"pages; {args.requests} requests each after 3 warm-up, one at a time; "
            f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs)"
        )
        state.engine.dispose()
        if args.json:
            print(
                json.dumps(
                    {
                        "store": {
                            "db_mb": round(size_mb, 1),
                            "build_s": round(build_s, 1) if build_s else None,
                            "bots": args.bots,
                            "matches": args.matches,
                        },
                        "cold_fit_s": round(cold_fit, 2),
                        "cold_history_s": round(cold_history, 2),
                        "pages": results,
                        "replay_data": rep,
                        "during_refit": refit,
                        "requests": args.requests,
                    }
                )
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
