"""The round-by-round planner (arena.ladder.schedule): its contract on random fields that
change between rounds (hypothesis), small fields as before, placement, errors."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ladder import planning, schedule
from arena.ladder.schedule import RoundPlan, Standing, placement_groups, plan_round


def _connected(ids: set[int], met: dict[tuple[int, int], int]) -> bool:
    return _components(ids, met) == 1


def _components(ids: set[int], met: dict[tuple[int, int], int]) -> int:
    parent = {e: e for e in ids}

    def root(e: int) -> int:
        while parent[e] != e:
            e = parent[e]
        return e

    for a, b in met:
        if a in ids and b in ids:
            parent[root(a)] = root(b)
    return len({root(e) for e in ids})


def _meet(met: dict[tuple[int, int], int], plan: RoundPlan) -> None:
    for g in plan.groups:
        for a, b in itertools.combinations(sorted(set(g)), 2):
            met[(a, b)] = met.get((a, b), 0) + 1


@st.composite
def ladders(draw):
    """A field of 5–500 entrants and, for each of a few rounds, who joins and who retires
    before it; ratings come from a seeded generator (drawn by hypothesis)."""
    n = draw(st.integers(5, 500))
    seats = draw(st.sampled_from([4, 4, 4, 2, 3, 5]))
    rounds = draw(
        st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), min_size=1, max_size=4)
    )
    return n, seats, rounds, draw(st.integers(0, 2**32 - 1)), draw(st.booleans())


@settings(max_examples=40, deadline=None)
@given(ladders())
def test_every_round_seats_every_active_entrant_and_keeps_the_field_connected(case):
    n, seats, changes, salt, rated_from_start = case
    rng = random.Random(salt)
    next_id = 1000
    active = set(rng.sample(range(1, 5000), n))
    matches: Counter[int] = Counter()
    truth = {e: rng.gauss(0, 150) for e in active}
    new = set(active)
    met: dict[tuple[int, int], int] = {}
    for round_no, (joins, retires) in enumerate([(0, 0), *changes], start=1):
        if round_no > 1:
            for e in rng.sample(sorted(active), min(retires, len(active) - 2)):
                active.discard(e)
            for _ in range(joins):
                next_id += 1
                active.add(next_id)
                truth[next_id] = rng.gauss(0, 150)
                new.add(next_id)
        standings = []
        for e in sorted(active):
            rated = (round_no > 1 or rated_from_start) and e not in new and rng.random() < 0.9
            standings.append(
                Standing(
                    e,
                    matches[e],
                    elo=truth[e] + rng.gauss(0, 40) if rated else None,
                    stderr=rng.uniform(1, 200) if rated else None,
                    new=e in new,
                )
            )
        rng.shuffle(standings)
        plan = plan_round(standings, round_no=round_no, seed=f"s{salt}", seats=seats, met=met)

        # deterministic: the same arguments in another order give the same plan
        again = plan_round(
            list(reversed(standings)),
            round_no=round_no,
            seed=f"s{salt}",
            seats=seats,
            met=dict(reversed(list(met.items()))),
        )
        assert again == plan

        seated = Counter(e for g in plan.groups for e in g)
        assert set(seated) == active, "every active entrant seated, no absent one"
        if len(active) >= seats:
            counts = Counter(e for g in plan.groups for e in set(g))
            assert max(counts.values()) - min(counts.values()) <= 1
            if math.comb(len(active), seats) > schedule.MAX_ALL_GROUPS:
                # one cover, bridges while the graph is split, a bounded share of extras
                assert max(counts.values()) <= 2
                cover = math.ceil(len(active) / seats)
                splits = _components(active, met) - 1
                bridges = math.ceil(splits / (seats - 1))
                assert len(plan.groups) <= cover + bridges + schedule.EXTRA_GROUPS
            for g in plan.groups:
                assert len(g) == seats and len(set(g)) == seats
                assert list(g) == sorted(g)
        else:
            assert all(len(g) == seats for g in plan.groups)
            assert max(seated.values()) - min(seated.values()) <= 1
        matches.update(seated)
        _meet(met, plan)
        new.clear()
        if len(active) > seats:
            assert _connected(active, met), f"round {round_no}: comparison graph split"


def test_small_fields_plan_as_before():
    """C(n, 4) <= 70: every group once, as planning.groups_for; fewer bots than seats: its
    rotation."""
    assert schedule.MAX_ALL_GROUPS == planning.MAX_ALL_GROUPS
    for n in range(2, 9):
        ids = [3 * i + 7 for i in range(n)]
        standings = [Standing(e, 5, elo=10.0 * e, stderr=20.0) for e in ids]
        for r in (1, 2):
            plan = plan_round(standings, round_no=r, seed="k", met={(7, 10): 4})
            assert [list(g) for g in plan.groups] == planning.groups_for(ids)


def test_a_large_field_is_one_cover_a_round_and_extras_at_the_top():
    """200 rated entrants: a round is 50 groups seating every entrant once, and one extra
    group seating 4 entrants a second time: the top of the table, as a Thompson draw sees
    it."""
    rng = random.Random(1)
    standings = [Standing(e, 3, elo=rng.gauss(0, 150), stderr=30.0) for e in range(200)]
    met = {(a, a + 1): 1 for a in range(199)}
    plan = plan_round(standings, round_no=4, seed="k", met=met)
    assert len(plan.groups) == 50 + schedule.EXTRA_GROUPS == 51
    counts = Counter(e for g in plan.groups for e in g)
    assert set(counts) == set(range(200)) and set(counts.values()) == {1, 2}
    twice = {e for e, c in counts.items() if c == 2}
    assert len(twice) == 4
    top = sorted(range(200), key=lambda e: -(standings[e].elo or 0.0))[:10]
    assert twice <= set(top), "the extras go to the top of the table"


def test_rounds_differ_and_seeds_matter():
    standings = [Standing(e, 0, elo=float(e), stderr=50.0) for e in range(40)]
    a = plan_round(standings, round_no=1, seed="k")
    assert plan_round(standings, round_no=2, seed="k") != a
    assert plan_round(standings, round_no=1, seed="other") != a
    assert plan_round(standings, round_no=1, seed="k") == a


def test_close_uncertain_entrants_meet_more_than_distant_ones():
    """Thompson groups: over many rounds, neighbours in rating share a group far more
    often than entrants 1,000 Elo apart."""
    standings = [Standing(e, 0, elo=20.0 * e, stderr=15.0) for e in range(100)]
    met: dict[tuple[int, int], int] = {}
    for r in range(1, 41):
        _meet(met, plan_round(standings, round_no=r, seed="k", met=met))
    near = sum(met.get((e, e + 1), 0) for e in range(99)) / 99
    far = sum(met.get((e, e + 50), 0) for e in range(50)) / 50
    assert near > 10 * max(far, 0.1), (near, far)
    assert far > 0  # exploration: distant entrants still meet sometimes


def test_new_entrant_is_placed_across_the_range():
    """A newcomer in a rated field plays opponents from the top, the middle and the bottom
    of the table in its first round."""
    field = [Standing(e, 10, elo=10.0 * e, stderr=20.0) for e in range(60)]
    newcomer = Standing(500, 0, new=True)
    plan = plan_round([*field, newcomer], round_no=7, seed="k")
    group = plan.groups[0]  # placement first (it may also fill the short group: 0 matches)
    assert 500 in group
    others = sorted(e for e in group if e != 500)
    assert others[0] < 20 <= others[1] < 40 <= others[2], group

    groups = placement_groups(newcomer, field, seed="k", count=2)
    assert len(groups) == 2
    opponents = sorted(e for g in groups for e in g if e != 500)
    assert len(set(opponents)) == 6
    assert [e // 10 for e in opponents] == [0, 1, 2, 3, 4, 5]  # one from each sixth
    for g in groups:
        assert 500 in g and len(set(g)) == 4 and list(g) == sorted(g)
        spread = [e for e in g if e != 500]
        assert max(spread) - min(spread) >= 20  # each group spans the range
    assert placement_groups(newcomer, list(reversed(field)), seed="k", count=2) == groups


def test_placement_in_a_tiny_field_rotates():
    groups = placement_groups(Standing(9, 0, new=True), [Standing(2, 4)], seed="k", count=1)
    assert groups == ((2, 9, 2, 9),)


@pytest.mark.parametrize("ids", [[], [5], [5, 5, 5]])
def test_fewer_than_two_distinct_bots_is_an_error(ids):
    with pytest.raises(ValueError, match="at least two distinct bots"):
        plan_round([Standing(e, 0) for e in ids], round_no=1, seed="k")
    with pytest.raises(ValueError, match="at least two distinct bots"):
        placement_groups(Standing(5, 0), [Standing(e, 0) for e in ids], seed="k")


def test_odd_ratings_do_not_break_a_plan():
    """NaN / infinite ratings or errors count as unrated; zero or negative errors as none."""
    odd = [math.nan, math.inf, -math.inf, None]
    standings = [
        Standing(
            e,
            e % 3,
            elo=odd[e % 4] if e % 5 == 0 else float(e),
            stderr=[0.0, -3.0, math.nan, 9.0][e % 4],
        )
        for e in range(50)
    ]
    plan = plan_round(standings, round_no=3, seed="k")
    assert Counter(e for g in plan.groups for e in g).keys() == set(range(50))


def test_a_thousand_entrants_plan_quickly():
    """Behaviour first; the time bound is generous (the planner takes milliseconds)."""
    import time

    rng = random.Random(2)
    standings = [Standing(e, 9, elo=rng.gauss(0, 150), stderr=40.0) for e in range(1000)]
    met = {(a, b): 1 for a in range(1000) for b in range(a + 1, min(a + 30, 1000))}
    start = time.perf_counter()
    plan = plan_round(standings, round_no=10, seed="k", met=met)
    assert time.perf_counter() - start < 5
    assert len(plan.groups) == 250 + schedule.EXTRA_GROUPS


def test_the_plan_is_the_same_in_another_process():
    """A ladder killed and restarted plans the same round again: nothing hangs on the
    process (string hashing, dict order)."""
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json, random\n"
        "from arena.ladder.schedule import Standing, plan_round\n"
        "rng = random.Random(3)\n"
        "st = [Standing(e, e % 4, elo=rng.gauss(0, 150) if e % 7 else None, stderr=30.0,"
        " new=e % 11 == 0) for e in range(300)]\n"
        "met = {(a, a + 3): 1 for a in range(290)}\n"
        "print(json.dumps(plan_round(st, round_no=5, seed='ladder-7', met=met).groups))\n"
    )
    plans = []
    for hashseed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
        )
        assert out.returncode == 0, out.stderr
        plans.append(json.loads(out.stdout))
    assert plans[0] == plans[1]
    assert len(plans[0]) >= 75
