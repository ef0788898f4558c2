"""Ratings and the sequential test, on synthetic data of known truth."""

import math
import random

import pytest

from arena.ladder.ratings import fit_bradley_terry, fit_plackett_luce, pairwise_from_blocks
from arena.ladder.simulate import exact_order, play_blocks
from arena.ladder.sprt import SPRT

ELOS = {f"bot{i}": 60.0 * i for i in range(6)}


def test_plackett_luce_recovers_the_true_order_with_intervals():
    rng = random.Random(7)
    fit = fit_plackett_luce(play_blocks(ELOS, 3000, rng))
    assert exact_order([r.bot for r in fit.ratings], ELOS)
    for r in fit.ratings:
        assert r.low < r.elo < r.high
    assert abs(sum(r.elo for r in fit.ratings)) < 1e-6  # anchored on the field's mean
    top, bottom = fit.ratings[0].bot, fit.ratings[-1].bot
    assert fit.separated(top, bottom) and fit.superiority[top][bottom] > 0.999
    assert fit.superiority[bottom][top] < 0.001


def test_bradley_terry_cross_check_agrees_on_the_order():
    rng = random.Random(8)
    blocks = play_blocks(ELOS, 3000, rng)
    pl = [r.bot for r in fit_plackett_luce(blocks).ratings]
    bt = [r.bot for r in fit_bradley_terry(pairwise_from_blocks(blocks)).ratings]
    assert pl == bt


def test_anchor_bot_sits_at_zero():
    rng = random.Random(9)
    fit = fit_plackett_luce(play_blocks(ELOS, 800, rng), anchor="bot0")
    anchor = fit.by_bot()["bot0"]
    assert anchor.elo == pytest.approx(0, abs=1e-9) and anchor.stderr == pytest.approx(0, abs=1e-6)


def test_intervals_rarely_separate_a_wrongly_ordered_pair():
    """Over many simulated ladders, a pair whose 95% intervals do not overlap is in the
    wrong order at most 2.5% of the time (the issue's bound)."""
    elos = {f"b{i}": 20.0 * i for i in range(5)}
    wrong = separated = 0
    for seed in range(40):
        fit = fit_plackett_luce(play_blocks(elos, 600, random.Random(seed)))
        rated = fit.by_bot()
        for a in elos:
            for b in elos:
                if elos[a] > elos[b] and fit.separated(a, b):
                    separated += 1
                    wrong += rated[a].elo < rated[b].elo
    assert separated > 50
    assert wrong / separated <= 0.025


def test_an_unbeaten_bot_gets_a_finite_rating():
    blocks = [{"a": 3, "b": 1, "c": 0}] * 50
    fit = fit_plackett_luce(blocks)
    assert all(math.isfinite(r.elo) and math.isfinite(r.high) for r in fit.ratings)
    assert [r.bot for r in fit.ratings] == ["a", "b", "c"]


def test_a_bot_that_always_loses_does_not_widen_the_fields_intervals():
    """A crashing entrant finishes last in every block: no finite rating exists for it.
    It is flagged, left out of the mean anchor, and the others' intervals stay what they
    would be without it."""
    elos = {f"b{i}": 40.0 * i for i in range(5)}
    alive = play_blocks(elos, 1200, random.Random(5))
    with_dead = play_blocks({**elos, "dead": -1e4}, 1500, random.Random(5))
    assert all(min(r, key=r.get) == "dead" for b in with_dead for r in b if "dead" in r)
    plain, fit = fit_plackett_luce(alive).by_bot(), fit_plackett_luce(with_dead).by_bot()
    assert not fit["dead"].in_field and all(plain[b].in_field for b in elos)
    assert all(fit[b].in_field for b in elos)
    widths = {b: fit[b].high - fit[b].low for b in elos}
    plain_widths = {b: plain[b].high - plain[b].low for b in elos}
    for b in elos:  # the same order of width (the data differ), not blown up
        assert widths[b] < 1.5 * plain_widths[b]
    assert fit["dead"].high - fit["dead"].low > 10 * max(widths.values())
    assert abs(sum(fit[b].elo for b in elos)) < 1e-6  # anchored on the field's mean


def test_a_rating_needs_two_bots():
    with pytest.raises(ValueError, match="two distinct bots"):
        fit_plackett_luce([{"a": 1}])


def run_sprt(mean, seed, budget=4000):
    rng = random.Random(seed)
    test = SPRT(elo0=0, elo1=10, alpha=0.05, beta=0.05)
    for _ in range(budget):
        decision = test.add(rng.gauss(mean, 1.0))
        if decision:
            return decision, test
    return None, test


def test_sprt_decides_both_ways():
    better, t1 = run_sprt(0.1, 1)
    worse, _ = run_sprt(-0.1, 2)
    assert better == "H1" and worse == "H0"
    elo, low, high = t1.elo()
    assert low < elo < high and elo > 0


def test_sprt_false_positive_rate_stays_near_alpha():
    h1 = sum(run_sprt(0.0, seed)[0] == "H1" for seed in range(300))
    assert h1 / 300 <= 0.08  # alpha = 0.05, with room for sampling error


def test_sprt_checks_its_parameters():
    with pytest.raises(ValueError):
        SPRT(elo0=5, elo1=5)
    with pytest.raises(ValueError):
        SPRT(alpha=0.7)


def test_elo_history_moves_toward_the_truth_but_is_only_a_trace():
    from arena.ladder.runner import elo_history

    rng = random.Random(11)
    blocks = play_blocks(ELOS, 2000, rng, unit="totals")
    history = elo_history(blocks)
    assert len(history) == len(blocks)
    final = history[-1]
    assert final["bot5"] > final["bot0"]
    assert abs(sum(final.values())) < 1e-6  # zero-sum updates


def test_block_rankings_give_each_game_and_each_set_of_cards():
    """Seats A B C A (A fills the fourth seat); rotation r gives seat s hand (s + r) % 4."""
    from arena.ladder.duplicate import block_rankings

    scores = [  # scores[r][s]
        [9, -3, -2, -4],
        [-1, 8, -5, -2],
        [-6, -1, 10, -3],
        [-2, -4, -1, 7],
    ]
    orders = block_rankings(["A", "B", "C", "A"], scores, 4)
    games, cards = orders[:4], orders[4:]
    assert games[0] == {"A": (9 - 4) / 2, "B": -3, "C": -2}
    assert games[3] == {"A": (-2 + 7) / 2, "B": -4, "C": -1}
    # hand 0 was held by seat 0 in rotation 0, seat 3 in r1, seat 2 in r2, seat 1 in r3
    assert cards[0] == {"A": (9 + -2) / 2, "C": 10, "B": -4}
    # hand 1: seat 1 in r0, seat 0 in r1, seat 3 in r2, seat 2 in r3
    assert cards[1] == {"B": -3, "A": (-1 + -3) / 2, "C": -1}
    with pytest.raises(ValueError, match="4 rows of 4"):
        block_rankings(["A", "B", "C", "D"], scores[:3], 4)


def test_correlated_orders_of_a_block_count_once():
    """A block that repeats one order five times is as much evidence as the order once:
    the sandwich widens the intervals back; five separate blocks would narrow them."""
    rng = random.Random(21)
    single = play_blocks(ELOS, 1200, rng, duplicate=False)
    once = fit_plackett_luce(single).by_bot()
    repeated = fit_plackett_luce([[b] * 5 for b in single]).by_bot()
    separate = fit_plackett_luce([b for b in single for _ in range(5)]).by_bot()
    for bot in ELOS:
        width = once[bot].high - once[bot].low
        assert repeated[bot].elo == pytest.approx(once[bot].elo, abs=0.5)
        assert repeated[bot].high - repeated[bot].low == pytest.approx(width, rel=0.15)
        assert separate[bot].high - separate[bot].low < 0.6 * width


def test_ties_are_shared_out_not_broken_by_seat_order():
    """Two bots always level: neither is ahead, whatever order they are listed in."""
    blocks = [{"a": 1.0, "b": 1.0, "c": 0.0}] * 40 + [{"c": 1.0, "a": 0.0, "b": 0.0}] * 10
    fit = fit_plackett_luce(blocks).by_bot()
    assert fit["a"].elo == pytest.approx(fit["b"].elo, abs=1e-3)
