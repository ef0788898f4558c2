"""A Gymnasium single-agent environment: one seat learns, the other seats are bots.

    from bigtwo.env import BigTwoGymEnv

    e = BigTwoGymEnv(rules="hk", opponents=["random", "greedy", "heuristic"], seed=1)
    obs, info = e.reset()
    while True:
        action = policy(obs["observation"], obs["action_mask"])
        obs, reward, terminated, truncated, info = e.step(action)
        if terminated:
            break

The opponents are any :class:`bigtwo.Bot` (instances, classes, or what ``play_local``
takes: ``"sample_bots/greedy"``, ``"my_bot.py:MyBot"``, or a sample bot's name), called
through every hook as in :func:`bigtwo.play_local`, and judged the same way (a fault plays
the referee's default action).  By default every other seat is the sample ``random`` bot.
The reward is the learner's hand score when a hand ends (0 otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np

from .. import samples
from ..bot import Bot
from ..game import Game
from ..loader import load_bot_class
from ..local import LocalMatch, match_start_observation
from ..rules import RuleSet
from .aec import raw_env

BotLike = Bot | type[Bot] | str


def sample_bot(name: str, **kwargs: Any) -> Bot:
    """A sample bot by name (``random``, ``greedy``, ``heuristic``, ``expert``: see
    :mod:`bigtwo.samples`), made with ``kwargs``."""
    path = samples.path(name)
    if path is None:
        known = ", ".join(samples.names())
        raise ValueError(f"no sample bot named {name!r} (sample bots: {known})")
    return load_bot_class(str(path))(**kwargs)


def _bot(spec: BotLike, seed: int) -> Bot:
    if isinstance(spec, Bot):
        return spec
    if isinstance(spec, type):
        return spec()
    if "/" not in spec and not spec.endswith(".py") and ":" not in spec:
        try:  # a sample bot; the random one takes a seed
            return sample_bot(spec, seed=seed) if spec == "random" else sample_bot(spec)
        except ValueError:
            pass
    return load_bot_class(spec)()


class _Learner(Bot):
    """The learning seat's place in the bot list: never asked to act."""

    def act(self, observation: Any) -> Any:  # pragma: no cover - never called
        raise AssertionError("the learning seat is played by the environment's caller")


class BigTwoGymEnv(gymnasium.Env):
    """One hand (or match) from the point of view of seat ``seat``.

    ``rules``, ``episode`` and the encodings are those of :class:`bigtwo.env.raw_env`;
    ``opponents``: one bot per other seat, in seat order (default: the sample ``random``
    bot, seeded from ``seed``).  ``seat``: the learner's seat, or ``None`` for a seat drawn
    at random at each reset.  Observations are ``{"observation", "action_mask"}``; the mask
    is also in ``info["action_mask"]``.  ``reset(options={"hands": deal})`` plays that deal.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"]}  # noqa: RUF012 - gymnasium.Env's

    def __init__(
        self,
        rules: str | RuleSet | Mapping[str, Any] = "hk",
        opponents: Sequence[BotLike] | None = None,
        seat: int | None = 0,
        seed: int | None = None,
        episode: str = "hand",
        render_mode: str | None = None,
        max_strikes: int = 3,
    ) -> None:
        self.aec = raw_env(rules, seed=seed, render_mode=render_mode, episode=episode)
        self.rules = self.aec.rules
        n = self.rules.players
        if seat is not None and not 0 <= seat < n:
            raise ValueError(f"seat must be 0..{n - 1} or None, got {seat}")
        if opponents is None:
            opponents = ["random"] * (n - 1)
        if len(opponents) != n - 1:
            raise ValueError(f"{len(opponents)} opponents for {n - 1} other seats")
        base = 0 if seed is None else seed
        self.opponents = [_bot(o, base + i + 1) for i, o in enumerate(opponents)]
        self.fixed_seat = seat
        self.seat = 0 if seat is None else seat
        self.max_strikes = max_strikes
        self.render_mode = render_mode
        agent = self.aec.possible_agents[0]
        self.observation_space = self.aec.observation_space(agent)
        self.action_space = self.aec.action_space(agent)
        self._seat_rng = np.random.default_rng(seed)
        self._judge: LocalMatch | None = None

    # ----- the table ----------------------------------------------------------------------
    def _seated(self) -> list[Bot]:
        bots: list[Bot] = list(self.opponents)
        bots.insert(self.seat, _Learner())
        return bots

    @property
    def game(self) -> Game:
        """The engine's game under the environment, for inspecting the state in tests and
        debugging; the learner should read only its observations."""
        assert self.aec.game is not None
        return self.aec.game

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start an episode and play the other seats up to the learner's first turn, so every
        observation returned is one where the learner must act."""
        super().reset(seed=seed)
        if seed is not None:
            self._seat_rng = np.random.default_rng(seed)
        if self.fixed_seat is None:
            self.seat = int(self._seat_rng.integers(self.rules.players))
        self.aec.reset(seed=seed, options=options)
        g = self.game
        bots = self._seated()
        self._judge = LocalMatch(g, bots, tuple(b.display_name for b in bots), self.max_strikes)
        self._hands_seen = 0
        for s, bot in enumerate(bots):
            if s != self.seat:
                self._judge.hook(bot, "on_match_start", match_start_observation(g.rules, s))
        self._deal_hooks()
        reward = self._play_others()
        obs = self._obs()
        return obs, {"action_mask": obs["action_mask"], "reward_before_first_turn": reward}

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Play the learner's action, then the other seats' moves until its next turn or the
        episode's end; the reward is the learner's score from that stretch."""
        g = self.game
        if g.turn != self.seat or self._done:
            raise RuntimeError("step() after the episode ended: call reset()")
        reward = self._apply(int(action))
        reward += self._play_others()
        obs = self._obs()
        return obs, float(reward), self._done, False, {"action_mask": obs["action_mask"]}

    def render(self) -> str | None:
        """The table as text, as :meth:`raw_env.render`."""
        return self.aec.render()

    # ----- the other seats --------------------------------------------------------------
    @property
    def _done(self) -> bool:
        return self.aec.terminations[self.aec.possible_agents[self.seat]]

    def _deal_hooks(self) -> None:
        judge = self._judge
        assert judge is not None
        for s, bot in enumerate(judge.bots):
            if s != self.seat:
                judge.hook(bot, "on_hand_start", judge.observe(s, acting=False))

    def _apply(self, action: int) -> float:
        """Step the AEC env with ``action`` for the seat to move, tell the bots, and
        return the learner's reward from it."""
        g = self.game
        judge = self._judge
        assert judge is not None
        hands_before = len(g.results)
        self.aec.step(action)
        history_action = g.history[-1]
        for s, bot in enumerate(judge.bots):
            if s != self.seat:
                judge.hook(bot, "on_event", history_action)
        reward = 0.0
        if len(g.results) > hands_before:
            result = g.results[-1]
            reward = float(result.scores[self.seat])
            judge.hand_ended(result, skip=self.seat)
            if self._done:
                scores, places = tuple(g.scores), tuple(g.places())
                for s, bot in enumerate(judge.bots):
                    if s != self.seat:
                        judge.hook(bot, "on_match_end", scores, places)
            else:
                self._deal_hooks()
        return reward

    def _play_others(self) -> float:
        """Play the bots' turns until the learner's turn or the episode's end."""
        g = self.game
        judge = self._judge
        assert judge is not None
        reward = 0.0
        while not self._done and g.turn != self.seat:
            move, _ = judge.move()
            reward += self._apply(self.aec.encode(move))
        return reward

    def _obs(self) -> dict[str, np.ndarray]:
        return self.aec.observe(self.aec.possible_agents[self.seat])
