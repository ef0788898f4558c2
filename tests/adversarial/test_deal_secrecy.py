"""No bot can know the other hands: default and ladder seeds cannot be guessed from
anything a bot can learn, and no bot instance plays a duplicate deal twice (each rotation
is played by fresh instances with no storage that survives between them)."""

import glob
import json
import os
import re
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from arena.bots import resolve
from arena.ladder.duplicate import rotated_deals
from arena.ladder.runner import deal_seed
from arena.ladder.store import FaultRow, Ladder, Match
from arena.match import by_rotation, run_match
from arena.referee.results import Fault
from arena.referee.time_control import TimeControl
from bigtwo import RuleSet, deal

from .bots import seed_searcher
from testkit import arena

BOTS = Path(__file__).parent / "bots"
ROOT = Path(__file__).resolve().parents[2]
HK = RuleSet.preset("hk")


def probe(seat: dict, word: str = "PROBE") -> list[str]:
    for fault in seat["faults"]:
        assert "BREACH" not in fault["detail"], fault["detail"]
    return [f["detail"] for f in seat["faults"] if word in f["detail"]]


def stored_faults(session: Session, match: Match, seat: int) -> dict:
    """A ladder seat's faults with their details, as ``probe`` reads them: from the
    ``faults`` table, the one place a ladder keeps a fault's detail (its stored result is
    public: kinds and fixed reasons only)."""
    rows = session.scalars(
        select(FaultRow)
        .where(FaultRow.match_id == match.id, FaultRow.seat == seat)
        .order_by(FaultRow.id)
    )
    return {"faults": [{"kind": f.kind, "detail": f.detail} for f in rows]}


def test_the_seed_search_finds_a_guessable_seed():
    """The probe works: a deal from a small or a public-data seed is found."""
    assert seed_searcher.search(HK, deal(HK, 1234)[3])[0] == 1234
    some_id = next(c for c in seed_searcher.candidates() if isinstance(c, str) and "/" in c)
    assert seed_searcher.search(HK, deal(HK, some_id)[0])[0] == some_id


def test_a_match_without_seed_is_not_guessable(backend):
    """`arena match` without --seed: a fresh secret seed; with --seed 5 the probe breaks in
    (it is for tests and replays, and says so)."""
    args = ["match", "--sandbox", backend, "--hands", "1", "--move-ms", "8000", "--json"]
    bots = [str(BOTS / "seed_searcher.py"), "random", "greedy", "heuristic"]
    result = arena(*args, *bots)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    found = probe(summary["seats"][0])
    tried = re.search(r"PROBE: tried (\d+) seeds", found[0] if found else "")
    assert tried and int(tried.group(1)) > 10_000, found
    assert not isinstance(summary["seed"], str) and summary["seed"] > 2**32  # secrets
    guessable = json.loads(arena(*args, "--seed", "5", *bots).stdout)
    assert any("BREACH" in f["detail"] for f in guessable["seats"][0]["faults"])


def test_ladder_deals_are_keyed(tmp_path):
    """The ladder plans deals by public ids and deals them from seeds keyed with a secret
    kept in the database: a real ladder run gives the searcher nothing, and no public id
    (or anything the old planner made from public data) deals the cards played."""
    db = tmp_path / "l.db"
    searcher = str(BOTS / "seed_searcher.py")
    samples = [str(ROOT / "sample_bots" / n) for n in ("random", "greedy", "heuristic")]
    result = arena(
        "ladder", "run", "--db", str(db), "--sandbox", "process", "--rounds", "1",
        "--deals", "1", "--move-ms", "8000", "--json", "--bots", searcher, *samples,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    engine = create_engine(f"sqlite:///{db}")
    with Session(engine) as session:
        ladder = session.scalar(select(Ladder))
        key = ladder.settings["deal_key"]
        assert len(bytes.fromhex(key)) == 32
        match = session.scalar(select(Match).where(Match.status == "done"))
        assert match is not None
        found = []
        for s in match.result["seats"]:
            if match.seats[s["seat"]] == min(match.seats):  # the searcher entered first
                found += probe(stored_faults(session, match, s["seat"]))
        assert found, match.result["seats"]
        for public in match.deal_seeds:
            played = deal(HK, deal_seed(key, public))
            assert played != deal(HK, public) and played != deal(HK, f"default/{public}")
    engine.dispose()


def _cleanup_notes() -> None:
    for place in (BOTS, Path.home(), Path.cwd(), Path("/tmp"), Path("/dev/shm"), Path("/var/tmp")):
        for path in glob.glob(str(place / ".rememberer-*")):
            os.unlink(path)


async def play_rotations(backend: str, deals: int = 2) -> tuple[Fault, ...]:
    rules = HK
    hands = rotated_deals(rules, [f"memo/{i}" for i in range(deals)], 4)
    specs = [resolve(str(BOTS / "rememberer.py"))] + [resolve(str(BOTS / "good.py"))] * 3
    tc = TimeControl(move_ms=3000, bank_ms=1000, startup_ms=30000, max_strikes=5)
    result = await run_match(
        specs, rules, 1, tc, backend, deals=hands, segments=by_rotation(len(hands), 4)
    )
    assert result.match_over and len(result.hands) == 4 * deals
    assert [h.hand for h in result.hands] == list(range(4 * deals))
    for seat in result.seats[1:]:
        assert seat.faults == () and not seat.forfeit, seat
    return result.seats[0].faults


async def test_no_memory_carries_from_one_rotation_to_the_next(backend):
    """Four rotations, four fresh instances: each reports it wrote its notes and found
    none of an earlier instance's (the probe fails the test on a breach)."""
    faults = await play_rotations(backend)
    for f in faults:
        assert "BREACH" not in f.detail, f.detail
    reports = [f.detail for f in faults if "PROBE" in f.detail]
    assert len(reports) == 4, faults  # one per rotation: four instances
    ids = {re.search(r"instance (\w+)", r).group(1) for r in reports}  # type: ignore[union-attr]
    assert len(ids) == 4  # four distinct instances
    assert all("wrote" in r and " 0 notes" not in r for r in reports), reports


async def test_the_memory_probe_sees_notes_where_storage_is_shared():
    """The probe works: trusted in-process bots share the machine's /tmp, so the second
    instance finds the first one's note."""
    _cleanup_notes()
    try:
        faults = await play_rotations("inproc", deals=1)
    finally:
        _cleanup_notes()
    assert any("BREACH" in f.detail for f in faults), faults


@pytest.mark.parametrize("rotations", [4])
def test_by_rotation_splits_whole_deals(rotations):
    segs = by_rotation(8, rotations)
    assert segs == [[0, 4], [1, 5], [2, 6], [3, 7]]
    with pytest.raises(ValueError):
        by_rotation(7, 4)


async def test_side_channels_between_live_instances_are_denied(backend, tmp_path):
    """The next rotation's instances start while the current ones play: the channels by
    which two live bots could pass cards through a file both can read (locks, leases,
    inotify) and the page-cache probes are denied by the seccomp profile."""
    from .bots import covert
    from .test_hostile import play

    live = []  # the control: outside a sandbox the probes work
    for probe in covert.probes():
        try:
            probe()
            live.append(probe.__name__)
        except OSError:
            pass
    assert {"flock", "posix_lock", "get_lock", "ofd_lock", "inotify"} <= set(live), live
    seat, _ = await play(backend, "covert", tmp_path)
    reports = [f.detail for f in seat.faults if "DENIED" in f.detail]
    assert reports and "8 of 8" in reports[0], seat.faults


def test_a_ladder_batch_starts_fresh_instances_per_rotation_not_per_match(backend, tmp_path):
    """Three matches of one table, played as one batch (``--jobs 1``): each rotation has its
    own instances, which play that rotation of all three matches' deals — two rememberer
    seats, four rotations: eight instances (not 24), none finding another's notes."""
    db = tmp_path / "l.db"
    result = arena(
        "ladder", "run", "--db", str(db), "--sandbox", backend, "--rounds", "3", "--jobs", "1",
        "--deals", "1", "--json", "--bots", str(BOTS / "rememberer.py"), str(BOTS / "good.py"),
        timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    engine = create_engine(f"sqlite:///{db}")
    with Session(engine) as session:
        matches = list(session.scalars(select(Match).where(Match.status == "done")))
        assert len(matches) == 3
        assert sorted(m.result["batch"]["index"] for m in matches) == [0, 1, 2]
        assert len({m.result["batch"]["id"] for m in matches}) == 1
        reports = []
        for m in matches:
            assert [h["hand"] for h in m.result["hands"]] == [0, 1, 2, 3]
            for s in m.result["seats"]:
                if m.seats[s["seat"]] == min(m.seats):  # the rememberer entered first
                    reports += probe(stored_faults(session, m, s["seat"]))
    engine.dispose()
    ids = [re.search(r"instance (\w+)", r).group(1) for r in reports]  # type: ignore[union-attr]
    assert len(ids) == 8 and len(set(ids)) == 8, reports
    assert all("wrote" in r and " 0 notes" not in r for r in reports), reports
