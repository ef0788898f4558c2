"""The final evaluation (``arena ladder final``, :mod:`arena.ladder.final`): fresh secret
deals concentrated on the top of a real ladder of fast sample bots until the top is
separated or the budget is spent, the standings then marked final (regular planning
refused until reopened), and a phase killed with SIGKILL resumed with nothing played twice.
"""

from __future__ import annotations

import collections
import json
import shutil
import signal
import subprocess
import time
from functools import partial
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from arena.ladder.final import Place, batch_of, choose_groups, contenders, doubts
from arena.ladder.store import database_url

from testkit import arena as run_arena
from testkit import arena_command, arena_main

arena = partial(run_arena, timeout=600)
ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_bots"


def query(db: str, sql: str) -> list:
    engine = create_engine(database_url(db))
    try:
        with engine.connect() as con:
            return list(con.execute(text(sql)).all())
    finally:
        engine.dispose()


def settings(db: str) -> dict:
    (raw,) = query(db, "select settings from ladders")[0]
    return json.loads(raw) if isinstance(raw, str) else raw


def final_matches(db: str) -> list[tuple[str, str, list[int]]]:
    rows = query(db, "select key, status, seats from matches where key like 'final-%' order by id")
    return [(k, s, json.loads(seats) if isinstance(seats, str) else seats) for k, s, seats in rows]


def labels(db: str) -> dict[int, str]:
    return dict(query(db, "select v.id, b.name from bot_versions v join bots b on b.id = v.bot_id"))


def copies(tmp: Path, *names: str, source: str = "random") -> list[str]:
    """A sample bot under other names (distinct bots of equal strength).  Copies of the
    deterministic heuristic play a duplicate deal alike, so no number of deals separates
    them; copies of random can be told apart by chance (the deals are keyed by the
    ladder's own random secret)."""
    out = []
    for name in names:
        shutil.copytree(SAMPLE / source, tmp / name)
        out.append(str(tmp / name))
    return out


def regular(db: str, bots: list[str], *extra: str) -> None:
    proc = arena(
        "ladder", "run", "--db", db, "--sandbox", "inproc", "--deals", "1", "--json",
        "--bots", *bots, *extra,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr


# ----- choosing the batch ------------------------------------------------------------------
def _table(elos: list[float], separated_after: set[int]) -> list[Place]:
    """Entrants 1..n ranked by ``elos``; P(a stronger than b) from a rough logistic, and
    rank i separated from rank i+1 when i is in ``separated_after``."""
    names = [f"b{i}" for i in range(1, len(elos) + 1)]
    places = []
    for i, (name, elo) in enumerate(zip(names, elos, strict=True)):
        sup = {o: 1 / (1 + 10 ** ((e - elo) / 100)) for o, e in zip(names, elos, strict=True)}
        sup.pop(name)
        places.append(Place(i + 1, name, elo, i + 1 in separated_after, sup))
    return places


def test_the_batch_is_built_around_the_doubtful_top_pairs():
    """Eight entrants; the top three close together (not separated), the others far below
    and separated: the batch seats only the top three and the nearest one below, the most
    doubtful pair first; a paused entrant is never seated, unrated ones are placed first."""
    table = _table([300, 290, 280, 100, 0, -100, -200, -300], {4, 5, 6, 7})
    assert [(d.upper.vid, d.lower.vid) for d in doubts(table, 3)] == [(1, 2), (2, 3), (3, 4)]
    assert {p.vid for p in contenders(table, 3)} == {1, 2, 3}  # 4 is far below the 3rd
    groups = choose_groups(table, [], 3, 4)
    assert groups == [[1, 2, 3, 4]]  # one group settles the three doubtful pairs at once
    assert len(batch_of(groups, 4, 100)) == 4 and batch_of(groups, 4, 3) == [groups[0]] * 3
    assert batch_of(groups, 4, 0) == []
    # the top separated already: nothing doubtful, nothing to play
    assert choose_groups(_table([900, 500, 100, -300], {1, 2, 3}), [], 2, 4) == []
    # a doubtful pair holding a paused bot cannot be played: left out
    paused = [p if p.vid != 2 else Place(2, p.label, p.elo, False, p.superiority, False)
              for p in _table([300, 290, 0, -300], {3})]  # fmt: skip
    for group in choose_groups(paused, [], 1, 4):
        assert 2 not in group
    # an entrant with no rating yet is placed first, with the top
    first = choose_groups(table, [42], 3, 4)[0]
    assert 42 in first and 1 in first
    # fewer entrants than seats: repeated in rotation, as regular planning does
    assert choose_groups(_table([10, 0], set()), [], 1, 4) == [[1, 2, 1, 2]]


# ----- a real ladder ------------------------------------------------------------------------
@pytest.mark.slow
def test_final_separates_the_top_then_the_ladder_is_final_until_reopened(tmp_path: Path):
    """Three sample bots after one regular match: `ladder final --top 2` plays fresh deals
    until heuristic > greedy > random are separated (measured: 4 to 8 final matches of one
    deal), marks the ladder final — `ladder show` says so, `ladder run` plans nothing —
    and `--reopen` lets regular play go on."""
    db = str(tmp_path / "l.db")
    regular(db, [str(SAMPLE / n) for n in ("random", "greedy", "heuristic")])
    proc = arena("ladder", "final", "--db", db, "--top", "2", "--budget", "60", "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "final evaluation of ladder 'default': the top 2, at most 60 match(es)" in out
    assert "not yet separated:" in out and "final match 1/60 done" in out
    marker = settings(db)["final"]
    assert marker["separated"] and marker["stopped"] == "separated", out
    assert marker["top"] == ["heuristic", "greedy"] and marker["k"] == 2
    played = [m for m in final_matches(db) if m[1] == "done"]
    assert len(played) == marker["matches"] == len(final_matches(db)) and 0 < len(played) < 60
    assert "final_phase" not in settings(db)
    shown = arena_main("ladder", "show", "--db", db)
    assert "FINAL since" in shown.stdout and "the top 2 separated" in shown.stdout
    rows = json.loads(arena_main("ladder", "show", "--db", db, "--json").stdout)
    assert rows[0]["separated_from_next"] and rows[1]["separated_from_next"]
    # final: no regular match is planned, and saying so is not a traceback
    before = query(db, "select count(*) from matches")[0][0]
    run = arena_main("ladder", "run", "--db", db, "--rounds", "3")
    assert run.returncode == 2 and "is final" in run.stderr and "--reopen" in run.stderr
    assert "Traceback" not in run.stderr
    assert query(db, "select count(*) from matches")[0][0] == before
    # ... nor is a bot entered by a `ladder run` that then refuses to play (it was entered,
    # checked and left in the field before the refusal: a final table that grew a row)
    entries = query(db, "select count(*) from entries")[0][0]
    run = arena_main("ladder", "run", str(SAMPLE / "expert"), "--db", db, "--rounds", "3")
    assert run.returncode == 2 and "is final" in run.stderr, run.stderr
    assert query(db, "select count(*) from entries")[0][0] == entries
    again = arena_main("ladder", "final", "default", "--db", db, "--json")
    assert again.returncode == 0 and json.loads(again.stdout) == marker  # as it stands
    refused = arena_main("ladder", "final", "--db", db, "--top", "3")
    assert refused.returncode == 2 and "final already" in refused.stderr
    reopened = arena_main("ladder", "final", "--db", db, "--reopen")
    assert reopened.returncode == 0 and "reopened" in reopened.stdout
    assert "final" not in settings(db) and settings(db)["final_history"] == [marker]
    regular(db, [], "--rounds", "2")
    assert query(db, "select count(*) from matches")[0][0] == before + 1


@pytest.mark.slow
def test_final_concentrates_its_matches_on_the_top(tmp_path: Path):
    """Five bots after one regular round (5 matches, each bot in 4): `ladder final --top 1`
    seats the leader in every final match, plays deals no regular match played, and stops
    at its budget, never past it.

    The five are copies of the deterministic heuristic: every match is four identical
    players on duplicate deals, so every bot's evidence is the same and no secret deal can
    separate the leader (a leader with one twin among greedy and two randoms was separated
    by chance after the regular round, seen once beside a ladder: the phase played nothing)."""
    db = str(tmp_path / "l.db")
    regular(db, copies(tmp_path, "h1", "h2", "h3", "h4", "h5", source="heuristic"))
    proc = arena("ladder", "final", "--db", db, "--top", "1", "--budget", "8", "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    marker = settings(db)["final"]
    played = [m for m in final_matches(db) if m[1] == "done"]
    assert len(played) == marker["matches"] <= 8
    assert marker["stopped"] == ("separated" if marker["separated"] else "budget")
    if not marker["separated"]:
        assert marker["matches"] == 8
    names = labels(db)
    leader = marker["top"][0]
    seated = collections.Counter(names[v] for _, _, seats in played for v in set(seats))
    # four deals a bot after one regular round: the leader is not separated yet
    assert played, proc.stdout
    # regular rounds seat each bot in 4 of 5 matches; the final phase, the leader in all
    assert seated[leader] == len(played), (leader, seated)
    assert query(db, "select count(*) from matches where key not like 'final-%'")[0][0] == 5
    # fresh deals: no final deal's id (hence its keyed seed) is a regular one's
    deals = query(db, "select m.key, d.seed from deals d join matches m on m.id = d.match_id")
    final_ids = {s for k, s in deals if k.startswith("final-")}
    assert len(final_ids) == len(played) and not final_ids & {
        s for k, s in deals if not k.startswith("final-")
    }


@pytest.mark.slow
def test_a_killed_final_phase_resumes_without_losing_or_doubling_a_match(db, tmp_path: Path):
    """Four copies of heuristic never separate: the phase runs to its budget of 6.  Killed
    with SIGKILL after two of them, run again it plays what is left: 6 final matches, each
    with its one deal block, none twice, and the marker says 6 (SQLite and PostgreSQL)."""
    db = str(db)
    regular(db, copies(tmp_path, "ha", "hb", "hc", "hd", source="heuristic"))
    cmd = arena_command(
        "ladder", "final", "--db", db, "--top", "1", "--budget", "6", "--jobs", "1",
    )  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if sum(s == "done" for _, s, _ in final_matches(db)) >= 2:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = [m for m in final_matches(db) if m[1] == "done"]
    assert 2 <= len(before) < 6 and "final" not in settings(db)
    assert settings(db)["final_phase"]["budget"] == 6  # under way: regular play refused
    run = arena_main("ladder", "run", "--db", db)
    assert run.returncode == 2 and "final evaluation" in run.stderr
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    done = [m for m in final_matches(db) if m[1] == "done"]
    assert len(done) == len(final_matches(db)) == 6
    assert [k for k, _, _ in done[: len(before)]] == [k for k, _, _ in before]  # kept
    marker = settings(db)["final"]
    assert marker["matches"] == 6 and marker["stopped"] == "budget"
    per_match = query(
        db,
        "select m.key, count(*) from deals d join matches m on m.id = d.match_id "
        "where m.key like 'final-%' group by m.key",
    )
    assert len(per_match) == 6 and all(n == 1 for _, n in per_match)


def test_final_refuses_bad_input_with_one_line(tmp_path: Path):
    db = str(tmp_path / "l.db")
    missing = arena_main("ladder", "final", "--db", db)
    assert missing.returncode == 2 and "no such database" in missing.stderr
    regular(db, [str(SAMPLE / "random"), str(SAMPLE / "greedy")])
    for args, words in (
        (["nope"], "no ladder named 'nope'"),
        (["a", "--name", "b"], "two ladder names"),
        (["--top", "0"], "--top"),
        (["--top", "101"], "top 1 to 100"),
        (["--executor", "mpi"], "--executor"),
    ):
        proc = arena_main("ladder", "final", "--db", db, *args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert words in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)
    assert "final_phase" not in settings(db)
