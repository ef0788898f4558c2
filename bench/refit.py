"""Refit times at contest scale (issue 22): the leaderboard's fit from match digests.

Builds a ladder of ``--bots`` entrants and ``--matches`` finished matches (default 200 and
100,000; ``--quick``: 30 and 2,000) with synthetic results shaped like the referee's (4
deals × 4 rotations, hk-like scores, a few faults and forfeits; ``bench/web.py``'s
generator), each written through the real store (``store.save_match``: its digest is made
and written in the match's transaction, as the runner writes one).  Then, each in a fresh
interpreter:

- **first fit**: no stored solution (a ladder's first fit ever): every digest read, the
  evidence summed, Newton from zero, OpenSkill rated over every block;
- **new process**: a stored solution (``rating_states``): every digest read, the fit and
  OpenSkill started from it (``arena ladder show``, a worker just started);
- **refit after one more match**: the worker's fit process, which keeps the evidence: one
  match more saved, then refitted — reading only the new digest (target ≤ 1 s), repeated
  ``--repeat`` times.

Each prints where its time went: reading the digests, decoding them, summing the evidence
(per group of entrants), OpenSkill, the fit (Newton: likelihood, gradient and Hessian per
step; the sandwich; the main field; the intervals), storing the solution.  With
``--quick`` the old path (every match's result read, its blocks rebuilt, scipy's
L-BFGS-B) is timed too and the two fits compared.

    python bench/refit.py [--quick] [--db FILE|postgresql://...] [--bots N] [--matches N]
                          [--repeat 3] [--phases first,cold,new,more] [--blas-threads N]
                          [--json]

``--db`` keeps the ladder (building 100,000 matches takes minutes) and reuses it when it
already holds one; a PostgreSQL URL names a database of its own (created when missing,
never one the tests use).  Targets (issue 22): the refit after one more match ≤ 1 s, the
first fit ≤ 30 s, at 200 bots / 100,000 matches, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import create_engine, func, insert, select, text
from sqlalchemy.orm import Session

from arena.ladder.digests import HEADER, _layout
from arena.ladder.running import block_totals
from arena.ladder.store import (
    Bot,
    BotVersion,
    Entry,
    Ladder,
    Match,
    MatchDigest,
    MatchSeat,
    RatingState,
    database_url,
    open_engine,
    save_match,
)

LADDER = "refit"
DEALS, ROTATIONS = 4, 4
CHUNK = 1000
SAVED = 2_000
"""Matches saved one by one through ``save_match`` (``--quick``: all of them)."""
SETTINGS = {
    "deals": DEALS,
    "rotations": ROTATIONS,
    "rounds": 1,
    "time_control": {},
    "sandbox": "inproc",
}


sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/web.py's generator


def synthetic(
    rng: random.Random, mid: int, seats: list[int], strength: dict[int, float]
) -> dict[str, Any]:
    """A match's summary as the referee gives it (``bench/web.py``'s generator)."""
    from web import hand_result, summary

    cum = [0, 0, 0, 0]
    hands = [
        hand_result(rng, h, [strength[v] for v in seats], cum) for h in range(DEALS * ROTATIONS)
    ]
    faulty = rng.randrange(4) if rng.random() < 0.02 else None
    forfeit = rng.randrange(4) if rng.random() < 0.002 else None
    labels = [f"bot-{v}" for v in seats]
    return summary(rng, mid, labels, hands, {}, rng.getrandbits(48), faulty, forfeit)


def build(db: str, bots: int, matches: int, seed: int = 1) -> None:
    """The ladder: its first ``SAVED`` matches saved one by one through
    ``store.save_match`` (as the runner saves them: digest made and written), the rest
    inserted in bulk as ``bench/web.py`` inserts them — a saved match's result at a random
    table, its digest renamed to match (see below): 100,000 matches made one by one take
    most of an hour on a busy machine, and only their number and tables matter to a fit."""
    engine = open_engine(db)
    rng = random.Random(seed)
    with Session(engine) as session, session.begin():
        ladder = Ladder(name=LADDER, rules={}, settings=SETTINGS)
        session.add(ladder)
        session.flush()
        lid = ladder.id
        for b in range(1, bots + 1):
            bot = Bot(name=f"bot-{b:03d}")
            session.add(bot)
            session.flush()
            version = BotVersion(bot_id=bot.id, number=1, source_hash=f"{b:064x}", spec="-")
            session.add(version)
            session.flush()
            session.add(Entry(ladder_id=lid, version_id=version.id))
    with Session(engine) as session:
        vids = list(session.scalars(select(BotVersion.id).order_by(BotVersion.id)))
    strength = {v: rng.lognormvariate(0, 0.6) for v in vids}
    started = time.perf_counter()
    first = min(matches, SAVED)
    for lo in range(0, first, CHUNK):
        with Session(engine) as session, session.begin():
            for i in range(lo, min(first, lo + CHUNK)):
                save_one(session, lid, i, rng.sample(vids, 4), rng, strength)
    templates = []  # the saved matches: (seats, deal seeds, result, digest)
    with Session(engine) as session:
        for m, data in session.execute(
            select(Match, MatchDigest.data).join(MatchDigest, MatchDigest.match_id == Match.id)
        ):
            templates.append((list(m.seats), list(m.deal_seeds), m.result, bytes(data)))
    layout = {}
    for lo in range(first, matches, CHUNK):
        rows: dict[str, list[dict[str, Any]]] = {"m": [], "s": [], "d": [], "g": []}
        for i in range(lo, min(matches, lo + CHUNK)):
            # a saved match's result again, at a table of other entrants mapped in order
            # (so its digest is the template's with the group renamed: what save_match
            # would write for it, made without the minutes of making it again)
            seats, seeds, result, data = rng.choice(templates)
            group = sorted(set(seats))
            new = sorted(rng.sample(vids, len(group)))
            rename = dict(zip(group, new, strict=True))
            seats = [rename[v] for v in seats]
            _, g, blocks = HEADER.unpack_from(data)
            shape = layout.setdefault((g, blocks), _layout(g, blocks))
            record = np.frombuffer(data, dtype=shape).copy()
            record["group"] = new
            mid = i + 1
            rows["m"].append(
                {
                    "id": mid,
                    "ladder_id": lid,
                    "key": f"bench/{i}",
                    "status": "done",
                    "seats": seats,
                    "deal_seeds": seeds,
                    "result": result,
                }
            )
            rows["s"] += [
                {"match_id": mid, "seat": s, "version_id": v} for s, v in enumerate(seats)
            ]
            rows["g"].append({"match_id": mid, "ladder_id": lid, "data": record.tobytes()})
        with Session(engine) as session, session.begin():
            session.execute(insert(Match), rows["m"])
            session.execute(insert(MatchSeat), rows["s"])
            session.execute(insert(MatchDigest), rows["g"])
        done = min(matches, lo + CHUNK)
        if done % 10_000 == 0 or done == matches:
            rate = done / (time.perf_counter() - started)
            print(f"  {done:,} matches stored ({rate:.0f} a second)", flush=True)
    if engine.dialect.name == "postgresql":  # ids given above: the sequence moves past them
        with engine.begin() as conn:
            conn.execute(text("SELECT setval('matches_id_seq', (SELECT max(id) FROM matches))"))
    engine.dispose()


def save_one(
    session: Session,
    lid: int,
    i: int,
    seats: list[int],
    rng: random.Random,
    strength: dict[int, float],
) -> None:
    match = Match(
        ladder_id=lid,
        key=f"bench/{i}",
        seats=seats,
        deal_seeds=[rng.getrandbits(48) for _ in range(DEALS)],
        status="running",
    )
    session.add(match)
    session.flush()
    session.add_all(MatchSeat(match_id=match.id, seat=s, version_id=v) for s, v in enumerate(seats))
    result = synthetic(rng, match.id, seats, strength)
    save_match(session, match, result, block_totals(match, result, ROTATIONS), [])


def timed_rate(db: str) -> dict[str, Any]:
    """One fit, as the leaderboard makes it (``rated.rate``), with where its time went."""
    from arena.ladder import rated

    engine = open_engine(db)
    with Session(engine) as session:
        ladder = session.scalar(select(Ladder).where(Ladder.name == LADDER))
        assert ladder is not None
        t0 = time.perf_counter()
        out = rated.rate(session, ladder)
        total = time.perf_counter() - t0
    engine.dispose()
    return {
        "seconds": round(total, 3),
        "iterations": out.iterations,
        "warm": out.warm,
        "digests": out.digests,
        "parts": {k: round(v, 3) for k, v in out.seconds.items()},
    }


def child(mode: str, db: str, repeat: int) -> dict[str, Any]:
    """Run in a fresh interpreter (``_child``): ``first`` (the stored solution removed
    first), ``new`` (with it), ``more`` (prime, then one more match and a refit, repeated)."""
    import scipy.sparse.csgraph  # noqa: F401  (its import is not the fit's time)
    from openskill.models import PlackettLuce  # noqa: F401

    if mode in ("first", "cold"):
        engine = open_engine(db)
        with Session(engine) as session, session.begin():
            if mode == "first":
                session.query(RatingState).delete()
            else:  # the solution gone, OpenSkill's state kept
                for row in session.scalars(select(RatingState)):
                    row.theta = "{}"
        engine.dispose()
        return timed_rate(db)
    if mode == "new":
        return timed_rate(db)
    primed = timed_rate(db)
    engine = open_engine(db)
    rng = random.Random(os.getpid())
    runs = []
    with Session(engine) as session:
        lid = session.scalar(select(Ladder.id).where(Ladder.name == LADDER))
        vids = list(session.scalars(select(Entry.version_id).where(Entry.ladder_id == lid)))
        n = session.scalar(select(func.count()).select_from(Match))
    strength = {v: 1.0 for v in vids}
    for k in range(repeat):
        with Session(engine) as session, session.begin():
            save_one(
                session, lid, (n or 0) + k + rng.getrandbits(32), rng.sample(vids, 4), rng, strength
            )
        run = timed_rate(db)
        # the rest of the worker's refit: the leaderboard's rows from that fit (kept)
        from arena.ladder.leaderboard import leaderboard

        with Session(engine) as session:
            t0 = time.perf_counter()
            leaderboard(session, LADDER)
            run["rows"] = round(time.perf_counter() - t0, 3)
        runs.append(run)
    engine.dispose()
    return {"primed": primed, "runs": runs}


def old_path(db: str) -> dict[str, Any]:
    """Today's fit before digests: every result read, blocks rebuilt, L-BFGS-B."""
    from arena.ladder.leaderboard import rated_blocks
    from arena.ladder.ratings import fit_plackett_luce

    engine = open_engine(db)
    with Session(engine) as session:
        ladder = session.scalar(select(Ladder).where(Ladder.name == LADDER))
        assert ladder is not None
        t0 = time.perf_counter()
        done = list(session.scalars(select(Match).where(Match.status == "done")))
        blocks = rated_blocks(done, ROTATIONS)
        t1 = time.perf_counter()
        fit = fit_plackett_luce(blocks)
        t2 = time.perf_counter()
    engine.dispose()
    return {
        "read_and_blocks": round(t1 - t0, 3),
        "fit": round(t2 - t1, 3),
        "elo": {str(r.bot): r.elo for r in fit.ratings},
        "stderr": {str(r.bot): r.stderr for r in fit.ratings},
    }


def compare(db: str, old: dict[str, Any]) -> dict[str, float]:
    from arena.ladder import rated

    engine = open_engine(db)
    with Session(engine) as session:
        ladder = session.scalar(select(Ladder).where(Ladder.name == LADDER))
        assert ladder is not None
        fit = rated.rate(session, ladder).fit
    engine.dispose()
    assert fit is not None
    new = fit.by_bot()
    return {
        "max_elo_difference": max(abs(new[int(b)].elo - e) for b, e in old["elo"].items()),
        "max_stderr_relative": max(
            abs(new[int(b)].stderr - s) / s for b, s in old["stderr"].items()
        ),
    }


def in_child(mode: str, db: str, repeat: int, blas: int | None) -> dict[str, Any]:
    env = dict(os.environ)
    if blas:  # read by OpenBLAS when numpy loads: the child's, not this process's
        env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = str(blas)
    proc = subprocess.run(
        [sys.executable, __file__, "--_child", mode, "--db", db, "--repeat", str(repeat)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{mode}: {proc.stderr[-3000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def ensure_pg(url: str) -> None:
    """Create the PostgreSQL database ``url`` names when it does not exist."""
    base, name = url.rsplit("/", 1)
    admin = create_engine(database_url(base + "/postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as con:
        there = con.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name})
        if there.first() is None:
            con.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()


def holds(db: str, matches: int) -> bool:
    engine = open_engine(db)
    with Session(engine) as session:
        lid = session.scalar(select(Ladder.id).where(Ladder.name == LADDER))
        n = 0
        if lid is not None:
            n = (
                session.scalar(
                    select(func.count()).select_from(Match).where(Match.ladder_id == lid)
                )
                or 0
            )
    engine.dispose()
    if lid is not None and n < matches:
        raise SystemExit(f"{db} holds a smaller {LADDER!r} ladder ({n:,} matches): use another")
    return lid is not None


def machine() -> str:
    """How busy this machine is: the benchmark's figures scale with it."""
    a = np.random.default_rng(0).random(10_000_000)
    t0 = time.perf_counter()
    np.exp(a)
    took = time.perf_counter() - t0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{os.cpu_count()} cores, load average {load:.1f}; numpy exp of 10^7 doubles "
        f"{took:.2f} s (an idle core of a current machine: ~0.05 s)"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", help="keep the ladder here (a file or a postgresql:// URL)")
    ap.add_argument("--bots", type=int)
    ap.add_argument("--matches", type=int)
    ap.add_argument("--quick", action="store_true", help="30 bots, 2,000 matches, old path too")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--blas-threads",
        type=int,
        help="OpenBLAS threads in the fitting processes (default: OpenBLAS's own, one a core;"
        " on a busy machine its threads wait for each other: 1 is much faster there)",
    )
    ap.add_argument(
        "--phases",
        default="first,cold,new,more",
        help="which fits to time (first: minutes at 100,000 matches, OpenSkill's replay)",
    )
    ap.add_argument("--_child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._child:
        print(json.dumps(child(args._child, args.db, args.repeat)))
        return 0
    bots = args.bots or (30 if args.quick else 200)
    matches = args.matches or (2_000 if args.quick else 100_000)
    tmp = None
    db = args.db
    if db is None:
        tmp = tempfile.mkdtemp(prefix="bench-refit-")
        db = str(Path(tmp) / "refit.db")
    if db.startswith(("postgresql://", "postgres://")):
        ensure_pg(db)
    say = (lambda *_: None) if args.json else print
    say(f"refit benchmark: {bots} bots, {matches:,} matches, {db.split('@')[-1]}")
    say(f"  machine: {machine()}; OpenBLAS threads in the fits: {args.blas_threads or 'default'}")
    if not holds(db, matches):
        t0 = time.perf_counter()
        build(db, bots, matches)
        say(f"  built in {time.perf_counter() - t0:.0f} s")
    out: dict[str, Any] = {"bots": bots, "matches": matches, "store": db.split(":")[0]}
    for mode, title in (
        ("first", "first fit ever (nothing stored: Newton from zero, OpenSkill over every block)"),
        ("cold", "cold fit (no stored solution: Newton from zero; OpenSkill from its state)"),
        ("new", "a new process's fit (from the stored solution, every digest read)"),
        ("more", f"refit after one more match, in the fit process (x{args.repeat})"),
    ):
        if mode not in args.phases.split(","):
            continue
        result = in_child(mode, db, args.repeat, args.blas_threads)
        out[mode] = result
        if mode == "more":
            runs = result["runs"]
            secs = [r["seconds"] + r["rows"] for r in runs]
            say(f"  {title}: median {statistics.median(secs):.2f} s (target ≤ 1 s)")
            for r in runs:
                say(
                    f"    fit {r['seconds']:.2f} s ({r['iterations']} Newton steps) + rows "
                    f"{r['rows']:.2f} s: {r['parts']}"
                )
        else:
            say(f"  {title}: {result['seconds']:.2f} s, {result['iterations']} Newton steps")
            say(f"    {result['parts']}")
    if args.quick:
        old = old_path(db)
        out["old_path"] = {k: old[k] for k in ("read_and_blocks", "fit")}
        out["agreement"] = compare(db, old)
        say(
            f"  old path (results read, blocks rebuilt, L-BFGS-B): "
            f"{old['read_and_blocks']:.2f} s + {old['fit']:.2f} s; "
            f"largest difference {out['agreement']['max_elo_difference']:.2g} Elo, "
            f"{out['agreement']['max_stderr_relative']:.2g} of a standard error"
        )
    if args.json:
        print(json.dumps(out, indent=1))
    if tmp:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
