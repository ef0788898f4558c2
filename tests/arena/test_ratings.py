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
    assert all(min(b, key=b.get) == "dead" for b in with_dead if "dead" in b)
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
    blocks = play_blocks(ELOS, 2000, rng)
    history = elo_history(blocks)
    assert len(history) == len(blocks)
    final = history[-1]
    assert final["bot5"] > final["bot0"]
    assert abs(sum(final.values())) < 1e-6  # zero-sum updates
