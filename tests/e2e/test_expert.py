"""The expert sample bot (issue 13): full matches as a real process through the referee
under every preset and the option mixes of docs/rules.md, within its time budget,
reproducible with a seed; and the heuristic within a small budget of its own."""

import json
import random
import sys
import time
from pathlib import Path

import pytest

from bigtwo import PASS, Bot, Game, RuleSet, deal, play_local
from bigtwo.loader import load_bot_class

from .conftest import play

ROOT = Path(__file__).resolve().parents[2]
Expert = load_bot_class(str(ROOT / "sample_bots" / "expert"))
Heuristic = load_bot_class(str(ROOT / "sample_bots" / "heuristic"))
RandomBot = load_bot_class(str(ROOT / "sample_bots" / "random"))

MIXES = {
    "hk": RuleSet.preset("hk"),
    "family": RuleSet.preset("family"),
    "pusoy": RuleSet.preset("pusoy"),
    "hk-2-players": RuleSet.preset("hk").replace(players=2),
    "pusoy-3-players": RuleSet.preset("pusoy").replace(players=3, suit_order="CSDH"),
    "hk-teams-twos-doubled": RuleSet.preset("hk").replace(teams=True, twos_double_penalty=True),
    "family-every-house-rule": RuleSet.preset("family").replace(
        bombs="anywhere",
        revolution=True,
        no_lone_two_finish=True,
        no_pass_first_trick=True,
        lowest_straight_tops=True,
        opening="card-holder-every-hand",
    ),
    "flat-circular-locks": RuleSet.preset("hk").replace(
        scoring="flat",
        straights="no-two+circular",
        pass_locks_out=True,
        alert_rule=True,
        five_card_hands=True,
        allow_triples=False,
        match_end="hands",
    ),
}
OTHERS = ["heuristic", "greedy", "random"]
MOVE_MS = 120  # the expert searches for half of it


@pytest.mark.parametrize("mix", list(MIXES))
async def test_the_expert_plays_full_matches_through_the_referee_without_a_fault(mix, record_file):
    rules = MIXES[mix]
    names = ["expert", *OTHERS][: rules.players]
    result = await play(names, rules, hands=2, seed=13, record=record_file, move_ms=MOVE_MS)
    assert result.match_over and len(result.hands) == 2
    assert result.sandbox == "process"
    for seat in result.seats:
        assert seat.faults == () and not seat.forfeit, seat
    turns = [json.loads(line) for line in record_file.read_text().splitlines()]
    mine = [t for t in turns if t["type"] == "turn" and t["seat"] == 0 and not t["by_referee"]]
    assert len(mine) > 5
    searched = sorted(t["ms"] for t in mine)
    assert searched[len(searched) // 2] < MOVE_MS  # half the allowance, plus messages


@pytest.mark.parametrize("mix", list(MIXES))
def test_the_experts_play_outs_follow_the_engine_move_for_move(mix):
    """The search plays its play-outs on the engine (a clone of the deal's game), and every
    move its policies make (the others' default policy, its own seat's planned play) is
    one of the engine's legal moves."""
    module = sys.modules[Expert.__module__]
    rules = MIXES[mix]
    planner = module.Planner(rules)
    for d in range(32):
        game = Game.from_hands(rules, deal(rules, "sim", d))
        obs = game.observation(game.turn)
        search = module.Search(obs, game.must_include, random.Random(d), module.Singles(rules))
        masks = [game.cards_mask(s) for s in range(rules.players)]
        world = search.world(masks)
        assert world.hands == game.hands and world.turn == game.turn
        sim = module.Sim(world.clone(), masks, search.deal_groups(masks), search.fast)
        # half the deals with no seat planning, half with seat d % players planning (and
        # in a quarter of them the other seats modelled as playing in units)
        sim.me, sim.planner = (-1, None) if d < 16 else (d % rules.players, planner)
        if d >= 24:  # the other seats modelled in units or at random
            sim.kinds = [0 if s == sim.me else 1 + (s + d) % 2 for s in range(rules.players)]
            sim.rng = random.Random(d)
        while not sim.game.hand_over:
            move = sim.policy(sim.turn)
            assert move in sim.game.legal_moves(), (mix, d, move, sim.game.legal_moves())
            winner = sim.apply(move)
            assert (winner is not None) == sim.game.hand_over
        assert world.history == game.history  # the play-out was the clone's alone


class LowestFirst(Bot):
    """Issue 13's baseline (as bench/strength.py has it)."""

    def act(self, observation):  # type: ignore[no-untyped-def]
        strength = observation.rules.strength
        plays = [m for m in observation.legal_moves if m is not PASS]
        return min(plays, key=lambda m: max(map(strength, m.cards))) if plays else PASS


@pytest.mark.parametrize("preset", ["hk", "family", "pusoy"])
def test_the_expert_models_lowest_first_as_such_and_others_in_units_over_a_match(preset):
    """From the hands' public moves only (the referee shows a bot no other seat's cards):
    lowest-first stays modelled as lowest-first, the heuristic and random bots do not."""
    module = sys.modules[Expert.__module__]
    rules = RuleSet.preset(preset)
    expert = Expert(seed=3, rollouts=3)
    bots = [expert, LowestFirst(), Heuristic(), RandomBot(seed=1)]
    play_local(bots, rules, deals=[deal(rules, "kinds", i) for i in range(4)])
    assert expert.kinds() == [module.LOW, module.LOW, module.UNITS, module.UNITS]


@pytest.mark.parametrize("preset", ["hk", "family", "pusoy"])
def test_what_a_hand_shows_never_flags_lowest_first_and_flags_the_heuristic(preset):
    module = sys.modules[Expert.__module__]
    rules = RuleSet.preset(preset)
    flagged = [0, 0]
    for d in range(8):
        game = Game.from_hands(rules, deal(rules, "dev", d))
        bots = [LowestFirst(), Heuristic(), LowestFirst(), Heuristic()]
        while not game.hand_over:
            obs = game.observation(game.turn)
            search = module.Search(obs, game.must_include, random.Random(d), module.Singles(rules))
            shown = search.deviant(obs)
            assert not shown[0] and not shown[2], (d, game.history)
            game.apply(bots[game.turn].act(obs))
        flagged[0] += shown[1]
        flagged[1] += shown[3]
    assert sum(flagged) >= 8  # the heuristic shows itself in most hands


@pytest.mark.serial  # measures time
def test_the_expert_searches_within_its_budget_and_the_allowance():
    rules = RuleSet.preset("hk")
    expert = Expert(seed=1, budget_ms=30)
    times = []
    original = expert.act

    def timed(observation):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        move = original(observation)
        times.append((time.perf_counter() - start) * 1000)
        return move

    expert.act = timed  # type: ignore[method-assign]
    play_local([expert, Heuristic(), Heuristic(), Heuristic()], rules, deals=[deal(rules, 1)])
    assert expert.stats["deals"] > 0 and len(times) > 5
    assert sorted(times)[len(times) // 2] <= 30 + 5
    expert.move_ms = 40  # the referee's allowance: half of it at most
    assert expert.budget() == pytest.approx(0.020)


def test_the_heuristic_is_fast():
    rules = RuleSet.preset("hk")
    start = time.perf_counter()
    result = play_local([Heuristic() for _ in range(4)], rules, deals=[deal(rules, 2)])
    assert (time.perf_counter() - start) * 1000 / result.turns < 20


@pytest.mark.parametrize("preset", ["hk", "pusoy"])
def test_the_expert_repeats_a_match_move_for_move_with_the_same_seed(preset):
    rules = RuleSet.preset(preset)
    deals = [deal(rules, "repeat", i) for i in range(2)]

    def moves(seed):  # type: ignore[no-untyped-def]
        bots = [Expert(seed=seed, rollouts=4), Heuristic(), Expert(seed=seed, rollouts=4)]
        result = play_local([*bots, Heuristic()], rules, deals=deals)
        return [(a.seat, str(a.move)) for a in result.game.history]

    assert moves(5) == moves(5)
