"""The ladder: planning, a real run (bots over gRPC), resuming after SIGKILL, new entrants."""

import collections
import itertools
import json
import os
import signal
import subprocess
import time
from functools import partial
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from arena.ladder.planning import seating
from arena.ladder.runner import BATCH, batches, groups_for
from arena.ladder.store import database_url

from testkit import arena as run_arena
from testkit import arena_command, arena_main  # arena_main: views and refusals, in-process

arena = partial(run_arena, timeout=600)  # whole ladders

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = [str(ROOT / "sample_bots" / n) for n in ("random", "greedy", "heuristic")]
RAISER = str(ROOT / "tests" / "adversarial" / "bots" / "raiser.py")  # raises in every act()


def ladder_run(db, *extra):
    """``arena ladder run`` on ``db`` with trusted in-process bots, as JSON."""
    return arena("ladder", "run", "--db", str(db), "--sandbox", "inproc", "--json", *extra)


def test_groups_fill_few_entrants_and_balance_many():
    assert groups_for([5, 3]) == [[3, 5, 3, 5]]
    assert groups_for([1, 2, 3]) == [[1, 2, 3, 1]]
    assert len(groups_for(list(range(8)))) == 70  # every group of four
    many = groups_for(list(range(12)))
    meets = {p: 0 for p in itertools.combinations(range(12), 2)}
    for g in many:
        for p in itertools.combinations(sorted(g), 2):
            meets[p] += 1
    assert min(meets.values()) >= 1 and max(meets.values()) - min(meets.values()) <= 4
    with pytest.raises(ValueError, match="two distinct bots"):
        groups_for([1])


def test_a_groups_rounds_seat_each_entrant_after_each_other_equally_often():
    """Who plays after whom matters (the seat after a weak bot gains): over six rounds a
    group of four takes each of its six circular orders once."""
    group = [7, 3, 9, 4]
    after = collections.Counter()
    orders = set()
    for r in range(6):
        seats = seating(group, r)
        assert sorted(seats) == sorted(group) and seats[0] == 7
        orders.add(tuple(seats))
        after.update((seats[i], seats[(i + 1) % 4]) for i in range(4))
    assert len(orders) == 6
    assert set(after.values()) == {2} and len(after) == 12  # every ordered pair, twice
    assert seating(group, 6) == seating(group, 0)
    assert all(seating([3, 5, 3, 5], r) == [3, 5, 3, 5] for r in range(6))  # balanced as is
    assert len({tuple(seating([1, 2, 3, 1], r)) for r in range(6)}) == 6


def test_batches_hold_one_table_and_share_the_work_among_jobs():
    tables = {1: [1, 2, 3, 1], 2: [1, 2, 3, 4], 3: [1, 2, 3, 1], 4: [1, 2, 3, 1], 5: [1, 2, 3, 4]}
    assert batches(list(tables), tables, jobs=1) == [[1, 3, 4], [2, 5]]
    assert batches(list(tables), tables, jobs=2) == [[1, 3, 4], [2, 5]]
    assert batches(list(tables), tables, jobs=3) == [[1, 3], [2, 5], [4]]
    assert batches(list(tables), tables, jobs=8) == [[m] for m in tables]  # jobs stay busy
    many = {m: [1, 2, 3, 4] for m in range(10)}
    assert [len(b) for b in batches(list(many), many, jobs=1)] == [BATCH, BATCH, 10 - 2 * BATCH]
    assert sorted(m for b in batches(list(many), many, jobs=2) for m in b) == list(many)


def query(db, sql):
    engine = create_engine(database_url(db))
    try:
        with engine.connect() as con:
            return con.execute(text(sql)).all()
    finally:
        engine.dispose()


def statuses(db):
    try:
        return dict(query(db, "select status, count(*) from matches group by status"))
    except Exception:
        return {}


def test_ladder_runs_ranks_and_shows_json(db):
    proc = ladder_run(
        str(db),
        "--rounds",
        "3",
        "--bots",
        *SAMPLES,
    )
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert {r["bot"] for r in rows} == {"random", "greedy", "heuristic"}
    for r in rows:
        assert set(r) >= {"bot", "elo", "elo_low", "elo_high", "openskill", "matches"}
        assert r["elo_low"] <= r["elo"] <= r["elo_high"] and r["matches"] == 3
    order = [r["bot"] for r in rows]
    assert order.index("heuristic") < order.index("random")
    assert statuses(db) == {"done": 3}
    shown = arena_main("ladder", "show", "--db", str(db), "--json")
    assert json.loads(shown.stdout) == rows
    for r in rows:  # P(a stronger than b) + P(b stronger than a) = 1
        for other, p in r["superiority"].items():
            mirror = next(o for o in rows if o["bot"] == other)["superiority"][r["bot"]]
            assert 0 <= p <= 1 and p + mirror == pytest.approx(1, abs=2e-4)
    assert rows[0]["superiority"][rows[-1]["bot"]] > 0.5
    grid = arena_main("ladder", "show", "--db", str(db), "--matrix")
    assert "P(row stronger than column)" in grid.stdout
    assert query(db, "select count(*) from deals")[0][0] == 3 * 4  # one block per deal
    assert query(db, "select count(*) from moves")[0][0] > 3 * 16 * 20  # replays kept


def test_a_killed_ladder_resumes_without_losing_or_doubling_a_match(db):
    cmd = arena_command(
        "ladder", "run", "--db", str(db), "--sandbox", "inproc", "--rounds", "6", "--jobs", "1",
        "--bots", *SAMPLES,
    )  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if statuses(db).get("done", 0) >= 2:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = statuses(db)
    assert 2 <= before.get("done", 0) < 6
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert statuses(db) == {"done": 6}
    assert query(db, "select count(*) from deals")[0][0] == 6 * 4
    per_match = query(db, "select match_id, count(*) from deals group by match_id")
    assert all(n == 4 for _, n in per_match)


def test_a_new_bot_joins_a_running_ladder(db):
    first = ladder_run(
        str(db),
        "--deals",
        "1",  # joining is about entrants, not deals: one deal a match is enough
        "--bots",
        SAMPLES[0],
        SAMPLES[1],
    )
    assert first.returncode == 0, first.stderr
    second = ladder_run(db, "--deals", "1", "--bots", SAMPLES[2])
    assert second.returncode == 0, second.stderr
    rows = json.loads(second.stdout)
    assert {r["bot"] for r in rows} == {"random", "greedy", "heuristic"}
    assert next(r for r in rows if r["bot"] == "heuristic")["matches"] >= 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["ladder", "run", "--rotations", "5", "random", "greedy"], "--rotations 5"),
        (["ladder", "run", "--sandbox", "vm", "random", "greedy"], "--sandbox"),
        (["ladder", "run", "nobot", "greedy"], "bot 'nobot'"),
        (["ladder", "show", "--db", "/no/such.db"], "no such database"),
    ],
)
def test_ladder_bad_input(args, message, tmp_path):
    extra = ["--db", str(tmp_path / "x.db")] if args[1] == "run" else []
    proc = arena_main(*args, *extra)  # refused before anything starts: no process needed
    assert proc.returncode != 0 and message in proc.stderr and "Traceback" not in proc.stderr


def test_add_then_run_and_export(tmp_path):
    db = str(tmp_path / "l.db")
    first = ladder_run(
        db,
        "--bots",
        SAMPLES[0],
        SAMPLES[1],
    )
    assert first.returncode == 0, first.stderr
    added = arena("ladder", "add", "--db", db, SAMPLES[2])
    assert added.returncode == 0 and "entered 1 bot" in added.stdout
    run = ladder_run(db)
    assert {r["bot"] for r in json.loads(run.stdout)} == {"random", "greedy", "heuristic"}
    csv_out = arena_main("ladder", "export", "--db", db, "--csv")
    lines = csv_out.stdout.strip().splitlines()
    assert lines[0] == "match,deal,seed,bot,points" and len(lines) > 8
    jsonl = [json.loads(x) for x in arena_main("ladder", "export", "--db", db).stdout.splitlines()]
    assert {r["bot"] for r in jsonl} == {"random", "greedy", "heuristic"}
    missing = arena_main("ladder", "add", "--db", str(tmp_path / "none.db"), SAMPLES[0])
    assert missing.returncode == 2 and "no such database" in missing.stderr


def test_a_bot_that_crashes_at_once_ranks_last_not_on_its_fallback(tmp_path):
    """Its seat is played to the end by the fallback policy (a fair player of the weakest
    cards, good enough to beat random): the ratings must count those hands as last place,
    not as the bot's own."""
    proc = ladder_run(
        tmp_path / "l.db", "--no-check", "--rounds", "2", "--bots", *SAMPLES[:2], RAISER
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = {r["bot"]: r for r in json.loads(proc.stdout)}
    assert [r["bot"] for r in json.loads(proc.stdout)][-1] == "raiser"
    dead = rows["raiser"]
    assert dead["forfeits"] == 2 and dead["first_places"] == 0 and not dead["in_field"]
    assert rows["random"]["in_field"] and rows["greedy"]["in_field"]
    assert rows["random"]["forfeits"] == rows["greedy"]["forfeits"] == 0
    assert rows["greedy"]["elo_high"] - rows["greedy"]["elo_low"] < 400  # not blown up
    table = arena_main("ladder", "show", "--db", str(tmp_path / "l.db"))
    assert "unbounded*" in table.stdout and "forfeits:" in table.stdout


def test_a_bot_that_cannot_start_is_refused_at_entry_and_the_rest_play(tmp_path):
    """A bot that fails while being imported is checked before it is entered (one hand
    against copies of itself), refused with its own error, and never rated; the bots that
    work play their ladder (before the check, it stopped the ladder)."""
    broken = str(ROOT / "tests" / "adversarial" / "bots" / "crash_at_start.py")
    db = tmp_path / "l.db"
    proc = arena(
        "ladder", "run", "--db", str(db), "--sandbox", "process", "--deals", "1",
        "--json", "--bots", *SAMPLES, broken,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "refused crash_at_start" in proc.stderr and "broken on purpose" in proc.stderr
    assert "did not start" in proc.stderr and "Traceback" not in proc.stderr
    assert sorted(r["bot"] for r in json.loads(proc.stdout)) == ["greedy", "heuristic", "random"]
    assert statuses(str(db)) == {"done": 1}
    shown = arena_main("ladder", "show", "--db", str(db), "--json")
    assert "crash_at_start" not in shown.stdout


def test_ladder_add_refuses_a_bot_that_forfeits_its_check_and_enters_the_rest(tmp_path):
    db = tmp_path / "l.db"
    assert ladder_run(db, "--deals", "1", "--bots", *SAMPLES).returncode == 0
    good = str(ROOT / "tests" / "adversarial" / "bots" / "good.py")
    proc = arena("ladder", "add", "--db", str(db), RAISER, good)
    assert proc.returncode == 3, proc.stderr
    assert "refused raiser" in proc.stderr and "RuntimeError: boom" in proc.stderr
    assert "raiser.py:" in proc.stderr  # the author's own file and line
    assert "entered 1 bot(s)" in proc.stdout
    shown = {
        r["bot"] for r in json.loads(arena_main("ladder", "show", "--db", str(db), "--json").stdout)
    }
    assert "good" in shown and "raiser" not in shown
    again = arena("ladder", "add", "--db", str(db), good)  # already in: not checked again
    assert again.returncode == 0 and "checking" not in again.stderr


def test_an_unchecked_bot_that_cannot_start_stops_the_ladder_and_is_never_rated(tmp_path):
    """--no-check: the runner's own guard — the ladder stops with the bot's error, and no
    match is rated (the fallback's play is not the bot's)."""
    broken = str(ROOT / "tests" / "adversarial" / "bots" / "crash_at_start.py")
    db = tmp_path / "l.db"
    proc = arena(
        "ladder", "run", "--db", str(db), "--sandbox", "process", "--deals", "1",
        "--no-check", "--bots", *SAMPLES[:2], broken,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "crash_at_start" in proc.stderr and "broken on purpose" in proc.stderr, proc.stderr
    assert "cannot start" in proc.stderr
    engine = create_engine(database_url(str(db)))
    with engine.connect() as conn:
        done = conn.execute(text("SELECT count(*) FROM matches WHERE status = 'done'")).scalar()
    engine.dispose()
    assert done == 0
    shown = json.loads(arena_main("ladder", "show", "--db", str(db), "--json").stdout)
    (entry,) = [r for r in shown if r["bot"] == "crash_at_start"]  # entered, never rated
    assert not entry["rated"] and entry["matches"] == 0 and entry["elo"] is None


def test_a_bot_that_cannot_start_in_a_later_rotation_of_a_batch_stops_the_ladder(tmp_path):
    """Its first rotation played, the next fresh instance fails at start: the batch is put
    back whole, nothing is rated, and the ladder stops with the bot's own error."""
    late = str(ROOT / "tests" / "adversarial" / "bots" / "second_rotation_crash.py")
    db = tmp_path / "l.db"
    proc = arena(
        "ladder", "run", "--db", str(db), "--sandbox", "process", "--deals", "1",
        "--rounds", "2", "--jobs", "1", "--bots", *SAMPLES[:2], late,
    )  # fmt: skip
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "cannot start" in proc.stderr and "broken on purpose" in proc.stderr, proc.stderr
    assert statuses(str(db)) == {"pending": 2}


def test_a_bot_that_leaves_after_its_hello_forfeits_and_cannot_void_the_match(tmp_path):
    """Leaving after Hello (having seen who it plays) is a forfeit, rated as last place:
    if it counted as "cannot start", any bot could void the matches it dislikes."""
    leaver = str(ROOT / "tests" / "adversarial" / "bots" / "leaves_after_hello.py")
    proc = arena(
        "ladder", "run", "--db", str(tmp_path / "l.db"), "--sandbox", "process", "--no-check",
        "--deals", "1", "--json", "--bots", *SAMPLES[:2], leaver,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = {r["bot"]: r for r in json.loads(proc.stdout)}
    assert rows["leaves_after_hello"]["forfeits"] == 1 and rows["leaves_after_hello"]["matches"]


def test_a_batch_of_matches_is_rated_as_its_matches(tmp_path):
    """Matches of one table played as one batch (``--jobs 1``; rounds 0, 6 and 12 of a
    group share its seating, the others are other tables), with a bot whose every
    instance exits at its third move: each match comes back on its own — its hands
    numbered from 0, its totals, its moves — and the exiter forfeits in every one, the
    hands its fallback played listed per match and rated as last place."""
    exiter = str(ROOT / "tests" / "adversarial" / "bots" / "exiter.py")
    db = tmp_path / "l.db"
    proc = arena(
        "ladder", "run", "--db", str(db), "--sandbox", "process", "--rounds", "13",
        "--no-check", "--jobs", "1", "--deals", "1", "--json", "--bots", *SAMPLES[:2], exiter,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = {r["bot"]: r for r in json.loads(proc.stdout)}
    assert rows["exiter"]["forfeits"] == 13 and rows["exiter"]["matches"] == 13
    assert [r["bot"] for r in json.loads(proc.stdout)][-1] == "exiter"
    stored = query(str(db), "select id, result from matches order by id")
    results = [json.loads(r) for _, r in stored]
    assert len({tuple(s["bot"] for s in r["seats"]) for r in results}) > 1  # seatings vary
    first = [s["bot"] for s in results[0]["seats"]]
    table = [
        (r, row)
        for r, row in zip(results, stored, strict=True)
        if [s["bot"] for s in r["seats"]] == first
    ]
    assert [r["batch"]["index"] for r, _ in table] == [0, 1, 2]
    for r, (mid, _) in table:
        assert [h["hand"] for h in r["hands"]] == [0, 1, 2, 3]
        totals = [sum(h["scores"][s] for h in r["hands"]) for s in range(4)]
        assert [s["score"] for s in r["seats"]] == totals
        assert r["hands"][-1]["cumulative"] == totals
        for s in r["seats"]:
            assert s["penalty_points"] == sum(h["penalties"][s["seat"]] for h in r["hands"])
            assert s["place"] == 1 + sum(t > s["score"] for t in totals)
        (exiter_seat,) = [s for s in r["seats"] if s["bot"] == "exiter"]
        assert exiter_seat["forfeit"]
        assert set(exiter_seat["forfeit_hands"]) <= {0, 1, 2, 3} and exiter_seat["forfeit_hands"]
        assert all(f["hand"] in range(4) for f in exiter_seat["faults"] if f["hand"] is not None)
        moved = query(str(db), f"select distinct hand from moves where match_id = {mid}")
        assert {h for (h,) in moved} == {0, 1, 2, 3}
        deals = query(str(db), f"select totals from deals where match_id = {mid}")
        assert len(deals) == 1


@pytest.mark.parametrize("rotations", [12, 24])
def test_a_ladder_with_12_or_24_rotations_plays_every_rotation(rotations, tmp_path):
    """One deal in every rotation: as many hands as rotations, and the hand holding the
    opening card (3D, which leads each independent hand) passes through every seat equally
    often; the block's totals are the entrants' summed points."""
    db = str(tmp_path / "l.db")
    proc = ladder_run(
        db,
        "--rounds",
        "1",
        "--deals",
        "1",
        "--rotations",
        str(rotations),
        "--bots",
        *SAMPLES,
    )
    assert proc.returncode == 0, proc.stderr
    [(result, seats)] = query(db, "select result, seats from matches")
    result, seats = (json.loads(x) if isinstance(x, str) else x for x in (result, seats))
    assert len(result["hands"]) == rotations
    openers = query(
        db,
        "select m.hand, m.seat, m.move from moves m join (select hand, min(turn) as t from "
        "moves group by hand) f on m.hand = f.hand and m.turn = f.t order by m.hand",
    )
    assert len(openers) == rotations and all("3D" in move.split() for _, _, move in openers)
    held = [seat for _, seat, _ in openers]
    assert sorted(held.count(s) for s in range(4)) == [rotations // 4] * 4
    [(totals,)] = query(db, "select totals from deals")
    totals = json.loads(totals) if isinstance(totals, str) else totals
    for vid in set(seats):
        mine = [s for s, v in enumerate(seats) if v == vid]
        points = sum(h["scores"][s] for h in result["hands"] for s in mine) / len(mine)
        assert totals[str(vid)] == pytest.approx(points)


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["hk", "family", "pusoy"])
def test_sample_bots_come_out_in_their_true_order_with_separated_intervals(preset, tmp_path):
    """10 matches of 4 deals × 4 rotations (160 hands) per preset separate the three.
    Measured (3 runs per preset, fresh deal keys; random's own draws are unseeded): the
    closest gap, greedy's low end over random's high end, was 67–102 Elo (hk), 86–99
    (family), 97–124 (pusoy), with intervals ±25–40; heuristic over greedy 139+ Elo.
    30 matches (±16–23) separated by 105+ and took three times as long."""
    proc = ladder_run(tmp_path / "l.db", "--rules", preset, "--rounds", "10", "--bots", *SAMPLES)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    shown = [(r["bot"], r["elo_low"], r["elo"], r["elo_high"]) for r in rows]
    assert [r["bot"] for r in rows] == ["heuristic", "greedy", "random"], shown
    gaps = [upper["elo_low"] - lower["elo_high"] for upper, lower in itertools.pairwise(rows)]
    assert min(gaps) > 0, f"interval gaps {gaps} Elo (must be > 0): {shown}"
    assert rows[0]["separated_from_next"] and rows[1]["separated_from_next"], shown


def test_a_new_ladder_with_no_bots_plays_the_sample_bots(tmp_path):
    proc = ladder_run(tmp_path / "l.db", "--deals", "1")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert {r["bot"] for r in rows} == {"random", "greedy", "heuristic", "expert"}


def test_each_run_stores_a_rating_snapshot(tmp_path):
    db = str(tmp_path / "l.db")
    for _ in range(2):
        proc = ladder_run(
            db,
            "--deals",
            "1",
            "--bots",
            SAMPLES[0],
            SAMPLES[2],
        )
        assert proc.returncode == 0, proc.stderr
    snaps = query(db, "select matches, ratings from rating_snapshots order by id")
    assert [m for m, _ in snaps] == [1, 1]
    ratings = snaps[-1][1]
    ratings = json.loads(ratings) if isinstance(ratings, str) else ratings
    assert {r["bot"] for r in ratings} == {"random", "heuristic"}


def test_ray_executor_on_a_local_ray_runtime(tmp_path):
    """The same match jobs on a Ray runtime the run starts; one writer keeps the results."""
    pytest.importorskip("ray", reason="Ray is not installed")
    db = str(tmp_path / "l.db")
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    proc = arena(
        "ladder", "run", "--db", db, "--sandbox", "inproc", "--executor", "ray", "--rounds", "2",
        "--json", "--bots", SAMPLES[0], SAMPLES[2], env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {r["bot"] for r in rows} == {"random", "heuristic"}
    assert statuses(db) == {"done": 2}
    assert query(db, "select count(*) from deals")[0][0] == 2 * 4


def test_ladder_run_says_what_it_does_in_plain_lines_when_not_a_terminal(tmp_path):
    """Redirected to a file, `ladder run` wrote nothing until the leaderboard; it never said
    which sandbox `auto` chose, nor that --rounds is a total (a rerun played 0 matches in
    silence)."""
    db = str(tmp_path / "l.db")
    proc = arena(
        "ladder", "run", "--db", db, "--sandbox", "inproc", "--deals", "1", "--rounds", "2",
        "--bots", *SAMPLES,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("2 match(es) to play") and "sandbox: inproc" in first
    done = [ln for ln in proc.stdout.splitlines() if ln.startswith("match ")]
    assert [ln.split()[1] for ln in done] == ["1/2", "2/2"]
    assert all("matches/min" in ln and "top: 1. " in ln for ln in done)
    again = arena("ladder", "run", "--db", db, "--rounds", "2")
    assert again.returncode == 0, again.stderr
    assert "0 match(es) to play" in again.stdout and "nothing to play" in again.stdout
    assert "--rounds 3" in again.stdout
    auto = arena("ladder", "run", "--db", str(tmp_path / "a.db"), "--deals", "1", *SAMPLES)
    assert auto.returncode == 0, auto.stderr
    assert "(chosen by --sandbox auto)" in auto.stdout.splitlines()[0]
    assert auto.stdout.splitlines()[0].split("sandbox: ")[1].split()[0] in ("docker", "process")
