"""bigtwo.env (issue 14): the PettingZoo environment, its encodings, the Gymnasium wrapper,
PolicyBot and the training example.

- PettingZoo's own ``api_test`` and ``seed_test`` for each preset and for 2 and 3 players,
  one hand and whole-match episodes;
- on random positions of random rule sets (hypothesis): the mask is exactly
  ``legal_moves()`` (one index per move), ``decode(encode(m)) == m``, and the
  environment's observation of every seat equals :func:`observation_vector` of that seat's
  :class:`bigtwo.Observation` (which holds only what the seat may know);
- information: two deals that differ only in the other seats' unplayed cards, played with
  the same public moves, give the seat the same observations;
- the Gymnasium wrapper's rewards, opponents' hooks and PolicyBot in matches;
- the training example, short, improves on its initial policy on fixed evaluation deals.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, seed_test
from test_properties import rule_sets

from bigtwo import PASS, Bot, Game, RuleSet, deal, play_local
from bigtwo.env import (
    LAYOUT,
    OBS_SIZE,
    ActionCodec,
    BigTwoGymEnv,
    PolicyBot,
    action_mask,
    env,
    observation_vector,
    raw_env,
    sample_bot,
)

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = [
    "hk",
    "family",
    "pusoy",
    {"preset": "hk", "players": 2},
    {"preset": "hk", "players": 3},
    {"preset": "family", "players": 3},
    {"preset": "pusoy", "players": 2},
]


def _id(config: object) -> str:
    return config if isinstance(config, str) else f"{config['preset']}-{config['players']}p"


@pytest.mark.parametrize("rules", CONFIGS, ids=_id)
def test_pettingzoo_api_and_seed_tests(rules):
    api_test(env(rules=rules), num_cycles=200)
    seed_test(lambda: env(rules=rules), num_cycles=200)


def test_api_and_seed_tests_for_whole_matches_and_every_option_on():
    rules = RuleSet.preset("hk").replace(
        match_end="hands", match_end_value=3, bombs="anywhere", revolution=True,
        no_lone_two_finish=True, pass_locks_out=True, alert_rule=True,
        no_pass_first_trick=True, twos_double_penalty=True, teams=True,
        straights="family", opening="card-holder-every-hand",
    )  # fmt: skip
    api_test(env(rules=rules, episode="match"), num_cycles=300)
    seed_test(lambda: env(rules=rules.to_dict(), episode="match"), num_cycles=300)


def test_action_counts_and_codec_round_trip():
    assert ActionCodec.for_hand_size(13).n == 13 + 78 + 286 + 1287 + 1
    assert ActionCodec.for_hand_size(17).n == 17 + 136 + 680 + 6188 + 1
    assert raw_env("hk").action_space("player_0").n == 1665
    assert raw_env({"preset": "pusoy", "players": 3}).action_space("player_2").n == 7022
    assert ActionCodec.for_actions(7022).hand_size == 17
    codec = ActionCodec.for_hand_size(13)
    assert codec.positions[codec.offsets[5]] == (0, 1, 2, 3, 4)
    assert codec.pass_index == 1664 and codec.size_of(1664) == 0
    assert sum(LAYOUT[i][1] for i in range(len(LAYOUT))) == OBS_SIZE


def _random_position(rules: RuleSet, seed: int, steps: int) -> Game:
    rng = random.Random(seed)
    g = Game(rules, seed)
    for _ in range(steps):
        if g.hand_over:
            if g.match_over:
                break
            g.next_hand()
        g.apply(rng.choice(g.legal_moves()))
    return g


@settings(max_examples=60, deadline=None)
@given(rules=rule_sets(), seed=st.integers(0, 10**6), steps=st.integers(0, 120))
def test_mask_is_exactly_the_legal_moves_and_encode_decode_round_trip(rules, seed, steps):
    g = _random_position(rules, seed, steps)
    if g.hand_over:
        return
    codec = ActionCodec.for_rules(rules)
    hand = g.hand(g.turn)
    moves = g.legal_moves()
    indices = [codec.encode(m, hand) for m in moves]
    assert len(set(indices)) == len(moves)  # every legal move exactly one index
    for m, i in zip(moves, indices, strict=True):
        assert codec.decode(i, hand, rules) == m
        back = codec.decode(i, hand, rules)
        assert back is PASS if m is PASS else back.cards == m.cards
    mask = action_mask(g.observation(g.turn))
    assert set(np.flatnonzero(mask)) == set(indices)
    # an index that is no legal move decodes to cards the engine refuses (or to nothing)
    rng = np.random.default_rng(seed)
    for i in rng.integers(codec.n, size=20):
        if mask[i]:
            continue
        move = codec.decode(int(i), hand, rules)
        assert move is None or g.refusal(move) is not None


@settings(max_examples=25, deadline=None)
@given(rules=rule_sets(), seed=st.integers(0, 10**6), episode=st.sampled_from(["hand", "match"]))
def test_env_observations_are_the_seats_own_observations(rules, seed, episode):
    """Stepping the env with random legal indices: at every turn, for every seat, the env's
    observation is the vector of ``Observation.of(game, seat)`` (only what the seat may
    know), and the mover's mask is its legal moves; rewards are the hands' scores."""
    e = raw_env(rules, episode=episode)
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    totals = dict.fromkeys(e.possible_agents, 0)
    steps = 0
    for agent in e.agent_iter(400):
        obs, reward, terminated, truncated, _ = e.last()
        totals[agent] += reward
        if terminated or truncated:
            e.step(None)
            continue
        g = e.game
        for s, other in enumerate(e.possible_agents):
            want = observation_vector(g.observation(s))
            assert np.array_equal(e.observe(other)["observation"], want), (s, steps)
        assert np.array_equal(obs["action_mask"], action_mask(g.observation(g.turn)))
        assert not e.observe(e.possible_agents[(g.turn + 1) % g.players])["action_mask"].any()
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(rng.choice(legal)))
        steps += 1
    g = e.game
    if not e.agents:  # the episode ended: every seat got its scores
        expected = g.scores if episode == "match" else g.results[-1].scores
        assert [totals[a] for a in e.possible_agents] == list(expected)


def _hidden_swap(rules: RuleSet, seed: int, steps: int, me: int):
    """A position of a random game, and the deal of a second game identical for seat ``me``
    (its cards, every public move) but with the other seats' unplayed cards shuffled among
    them (each keeps its count)."""
    g = _random_position(rules, seed, steps)
    if g.hand_over or g.hand_no:
        return None
    played = [[c for a in g.history if a.seat == s for c in a.move.cards] for s in range(g.players)]
    pool = [c for s in range(g.players) if s != me for c in g.hand(s)]
    random.Random(seed).shuffle(pool)
    other = []
    for s in range(g.players):
        if s == me:
            other.append(list(g.hand(s)) + played[s])
        else:
            k = len(g.hand(s))
            other.append(pool[:k] + played[s])
            pool = pool[k:]
    return g, other


@settings(max_examples=40, deadline=None)
@given(
    preset=st.sampled_from(["hk", "pusoy"]),
    players=st.sampled_from([2, 3, 4]),
    seed=st.integers(0, 10**6),
    steps=st.integers(1, 60),
)
def test_other_seats_cards_never_reach_an_observation(preset, players, seed, steps):
    rules = RuleSet.preset(preset).replace(players=players)
    me = seed % players
    found = _hidden_swap(rules, seed, steps, me)
    if found is None:
        return
    g, swapped = found
    original = [list(g.hand(s)) + [c for a in g.history if a.seat == s for c in a.move.cards]
                for s in range(players)]  # fmt: skip
    views = []
    for hands in (original, swapped):
        e = raw_env(rules)
        e.reset(options={"hands": hands})
        seen = [e.observe(e.possible_agents[me])]
        for a in g.history:  # the same public moves, in the same order
            e.step(e.encode(a.move))
            seen.append(e.observe(e.possible_agents[me]))
        views.append(seen)
    for a, b in zip(*views, strict=True):
        assert np.array_equal(a["observation"], b["observation"])
        assert np.array_equal(a["action_mask"], b["action_mask"])


def test_observation_changes_with_the_seats_own_cards():
    """The converse, so the information test cannot pass on a constant vector."""
    rules = RuleSet.preset("hk")
    e = raw_env(rules)
    e.reset(seed=1)
    a = e.observe("player_0")["observation"]
    e.reset(seed=2)
    assert not np.array_equal(a, e.observe("player_0")["observation"])


class Recorder(Bot):
    """Counts what it is told, and plays the weakest move."""

    def __init__(self) -> None:
        self.events = self.starts = self.ends = self.acts = 0

    def on_hand_start(self, observation):
        self.starts += 1

    def on_event(self, action):
        self.events += 1

    def on_hand_end(self, result):
        self.ends += 1

    def act(self, observation):
        self.acts += 1
        return observation.legal_moves[0]


def test_gym_wrapper_rewards_hooks_and_default_opponents():
    recorder = Recorder()
    e = BigTwoGymEnv("hk", opponents=[recorder, "greedy", "random"], seat=1, seed=3)
    total = 0.0
    for _ in range(3):
        obs, info = e.reset()
        assert np.array_equal(obs["action_mask"], info["action_mask"])
        done, reward = False, 0.0
        while not done:
            legal = np.flatnonzero(obs["action_mask"])
            obs, r, done, truncated, info = e.step(int(legal[0]))
            assert not truncated
            reward += r
        assert reward == e.game.results[-1].scores[1]  # the learner sits at seat 1
        total += reward
    assert recorder.starts == recorder.ends == 3
    assert recorder.events > 3 * 13 and recorder.acts > 0
    default = BigTwoGymEnv({"preset": "pusoy", "players": 3}, seed=1, seat=None)
    assert [b.display_name for b in default.opponents] == ["random", "random"]
    obs, _ = default.reset(seed=4)
    assert obs["observation"].shape == (OBS_SIZE,) and obs["action_mask"].shape == (7022,)


def test_gym_wrapper_whole_match_rewards_add_up_to_the_match_scores():
    rules = RuleSet.preset("hk").replace(match_end="hands", match_end_value=3)
    e = BigTwoGymEnv(rules, episode="match", seat=2, seed=5)
    obs, info = e.reset()
    total, done = info["reward_before_first_turn"], False
    while not done:
        legal = np.flatnonzero(obs["action_mask"])
        obs, r, done, _, _ = e.step(int(legal[-1]))
        total += r
    assert len(e.game.results) == 3 and total == e.game.scores[2]


def test_policy_bot_plays_legally_in_a_match():
    rng = np.random.default_rng(0)

    def policy(observation, mask):
        assert observation.shape == (OBS_SIZE,)
        return int(rng.choice(np.flatnonzero(mask)))

    for rules in ("hk", RuleSet.preset("family").replace(players=3)):
        n = 4 if rules == "hk" else 3
        r = play_local([PolicyBot(policy, name="p")] + ["sample_bots/random"] * (n - 1),
                       rules, seed=2, strict=True)  # fmt: skip
        assert r.game.match_over and not r.faults and r.names[0] == "p"

    def illegal(observation, mask):
        return int(np.flatnonzero(mask == 0)[0])

    r = play_local([PolicyBot(illegal)] + ["sample_bots/random"] * 3, "hk",
                   deals=[deal(RuleSet.preset("hk"), 1, 0)])  # fmt: skip
    assert r.faults and "not legal" in r.faults[0].detail


def test_the_engine_does_not_import_numpy_and_policy_bot_not_pettingzoo():
    code = (
        "import sys\n"
        "import bigtwo, bigtwo.game, bigtwo.local\n"
        "assert 'numpy' not in sys.modules, 'the engine imported numpy'\n"
        "import bigtwo.env\n"
        "assert 'numpy' not in sys.modules, 'importing bigtwo.env alone loads nothing'\n"
        "from bigtwo.env import PolicyBot\n"
        "assert 'numpy' in sys.modules and 'pettingzoo' not in sys.modules\n"
        "from bigtwo.env import env\n"
        "assert 'pettingzoo' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_render_ansi():
    e = raw_env("hk", render_mode="ansi")
    e.reset(seed=1)
    text = e.render()
    assert "player_0" in text and "leads (must include 3D)" in text


def _train_module():
    sys.path.insert(0, str(ROOT / "examples"))
    sys.path.insert(0, str(ROOT / "examples" / "reinforce_bot"))
    try:
        import train_reinforce
    finally:
        sys.path.remove(str(ROOT / "examples"))
    return train_reinforce


@pytest.mark.slow  # ~10 s of CPU; over 20 s of wall time on a busy 2-core machine
def test_training_example_improves_on_its_initial_policy(tmp_path):
    """The example's short version: trained against random bots, the policy's points per
    hand on fixed evaluation deals (same deals, same seeded opponents) beat the untrained
    policy's, and the saved weights load as a bot (bot.py next to them)."""
    train = _train_module()
    policy, curve = train.train(800, eval_every=800, eval_deals=150, log=False)
    (start, before), (_, after) = curve
    assert start == 0 and after > before + 1, curve
    # the sample random bot, in the learner's seat on the same deals, scores less
    baseline = train.evaluate_bot(lambda: sample_bot("random", seed=99), "hk", 150)
    assert after > baseline + 4, (after, baseline)
    folder = tmp_path / "bot"
    folder.mkdir()
    for name in ("bot.py", "reinforce_policy.py"):
        (folder / name).write_text((ROOT / "examples" / "reinforce_bot" / name).read_text())
    policy.save(str(folder / "weights.npz"))
    rules = RuleSet.preset("hk")
    r = play_local([str(folder)] + ["sample_bots/random"] * 3, rules,
                   deals=[deal(rules, "bot", d) for d in range(4)], strict=True)  # fmt: skip
    assert r.names[0] == "reinforce" and not r.faults


def test_docs_describe_the_layout_in_force():
    """docs/env.md's table of blocks and its list of rule entries are the code's."""
    from bigtwo.env.encoding import OFFSETS, RULE_FEATURES

    text = (ROOT / "docs" / "env.md").read_text(encoding="utf-8")
    for name, size in LAYOUT:
        assert f"| `{name}` | {OFFSETS[name]} | {size} |" in text, name
    assert f"**{OBS_SIZE}** entries" in text
    flat = " ".join(text.split())
    assert ", ".join(f"`{r}`" for r in RULE_FEATURES) + "." in flat
