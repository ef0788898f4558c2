"""The PettingZoo AEC environment: one Big Two hand (or match) under any rule set.

    from bigtwo.env import env

    e = env(rules="hk", seed=1)
    e.reset(seed=1)
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        action = None if terminated or truncated else policy(obs["observation"], obs["action_mask"])
        e.step(action)

Agents ``player_0 …`` are the seats.  The observation is ``{"observation": float32
vector, "action_mask": int8 vector}`` (:mod:`bigtwo.env.encoding`); the mask is exactly
``Game.legal_moves()`` for the seat to move and all zero for the others.  Rewards are the
hand's scores under the rule set (signed, higher is better), given when a hand ends.  Like
PettingZoo's classic card games there is no parallel version.  An action outside the mask
raises ``ValueError`` (wrap with PettingZoo's ``TerminateIllegalWrapper`` to end the
episode instead).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv  # type: ignore[import-untyped]
from pettingzoo.utils import wrappers  # type: ignore[import-untyped]

from ..cards import format_cards
from ..combos import PASS, Move
from ..game import Game
from ..rules import RuleSet
from .encoding import OBS_SIZE, ActionCodec, Encoder, PublicState

EPISODES = ("hand", "match")


def rules_of(rules: str | RuleSet | Mapping[str, Any]) -> RuleSet:
    """A preset name, a :class:`RuleSet` or a dict of options (``{"preset": "pusoy",
    "players": 3}``) as a RuleSet."""
    if isinstance(rules, RuleSet):
        return rules
    if isinstance(rules, str):
        return RuleSet.preset(rules)
    if isinstance(rules, Mapping):
        return RuleSet.from_dict(rules)
    raise TypeError(f"rules: a preset name, a RuleSet or a dict, got {type(rules).__name__}")


class raw_env(AECEnv):  # type: ignore[misc]  # PettingZoo's name; AECEnv is untyped
    """Big Two as a PettingZoo AEC environment (see the module docstring).

    ``rules``: a preset name, a RuleSet or a dict of options.  ``seed``: the seed of the
    deals when ``reset`` is given none.  ``episode``: ``"hand"`` (one hand per episode,
    dealt afresh at each reset) or ``"match"`` (a whole match under the rule set's
    ``match_end``; rewards at the end of every hand).  ``render_mode``: ``None`` or
    ``"ansi"`` (``render()`` returns the table as text, every hand shown).

    ``reset(options={"hands": [cards of seat 0, …]})`` deals those hands (the holder of
    the lowest card leads it), e.g. to evaluate on fixed deals."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi"],
        "name": "bigtwo_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        rules: str | RuleSet | Mapping[str, Any] = "hk",
        seed: int | None = None,
        render_mode: str | None = None,
        episode: str = "hand",
    ) -> None:
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if episode not in EPISODES:
            raise ValueError(f"episode must be one of {EPISODES}, got {episode!r}")
        self.rules = rules_of(rules)
        self.render_mode = render_mode
        self.episode = episode
        self.codec = ActionCodec.for_rules(self.rules)
        self.encoder = Encoder(self.rules)
        n = self.rules.players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(-1.0, 1.0, (OBS_SIZE,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (self.codec.n,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self.codec.n) for a in self.possible_agents}
        self._rng = random.Random(seed)
        self._zero_mask = np.zeros(self.codec.n, dtype=np.int8)
        self.game: Game | None = None
        """The engine's state (every hand: for tools and wrappers, not for policies)."""

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The agent's observation space (PettingZoo's API): the 499-number vector and the action
        mask, the same for every seat."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """The agent's action space (PettingZoo's API): one index per move of any position, so a
        policy's output layer has a fixed size (docs/env.md)."""
        return self.action_spaces[agent]

    # ----- episode ----------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new hand (or match) from the environment's seeded generator, so runs repeat;
        ``options={"hands": [...]}`` deals fixed cards, to evaluate on the same deals."""
        if seed is not None:
            self._rng = random.Random(seed)
        hands = (options or {}).get("hands")
        game_seed = self._rng.getrandbits(63)
        if hands is not None:
            self.game = Game.from_hands(self.rules, hands, seed=game_seed)
        else:
            self.game = Game(self.rules, game_seed)
        self.public = PublicState(self.rules)
        self._rewarded = False
        # per seat: (its sorted hand, the bit of each card's position in it)
        self._bits: list[tuple[Any, dict[int, int]]] = [((), {})] * self.rules.players
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._new_turn()

    def _new_turn(self) -> None:
        """The seat to move and its legal moves by index (computed once per turn)."""
        g = self.game
        assert g is not None
        self.agent_selection = self.possible_agents[g.turn]
        moves = g.legal_moves()
        hand = g.hand(g.turn)
        cached = self._bits[g.turn]
        if cached[0] is hand:  # the seat's hand is unchanged since its last turn
            bit = cached[1]
        else:
            bit = {c: 1 << i for i, c in enumerate(hand)}
            self._bits[g.turn] = (hand, bit)
        by_bits = self.codec._by_bits
        legal: dict[int, Move] = {}
        for m in moves:
            if m is PASS:
                legal[self.codec.pass_index] = m
                continue
            b = 0
            for c in m.cards:
                b |= bit[c]
            legal[by_bits[b]] = m
        self._legal = legal
        self._mask: np.ndarray | None = None

    def step(self, action: int | None) -> None:
        """Play the selected agent's action (an index from its action mask) through the engine,
        which judges it; an illegal index raises rather than being corrected, since a
        training loop that sends one has a bug worth seeing."""
        sel = self.agent_selection
        if self.terminations[sel] or self.truncations[sel]:
            self._was_dead_step(action)
            return
        g = self.game
        assert g is not None
        move = self._legal.get(int(action)) if action is not None else None
        if move is None:
            raise ValueError(
                f"{sel}: action {action!r} is not legal now (legal: {sorted(self._legal)})"
            )
        s = g.turn
        self._cumulative_rewards[sel] = 0
        rewards = self.rewards
        if self._rewarded:  # the last step ended a hand: its rewards are delivered
            for a in rewards:
                rewards[a] = 0
            self._rewarded = False
        g.apply(move)
        self.public.apply(s, move, g.trick is None)
        if g.hand_over:
            scores = g.results[-1].scores
            for i, a in enumerate(self.possible_agents):
                rewards[a] = scores[i]
            self._rewarded = True
            if self.episode == "hand" or g.match_over:
                for a in self.agents:
                    self.terminations[a] = True
                self._mask = None
                self._legal = {}
                self._accumulate_rewards()
                # the dead steps start with the next seat, as play would have gone on
                self.agent_selection = self.possible_agents[(s + 1) % g.players]
                return
            g.next_hand()
            self.public.start_hand()
            self._bits = [((), {})] * g.players
        self._new_turn()
        if self._rewarded:
            self._accumulate_rewards()

    def _accumulate_rewards(self) -> None:
        rewards = self.rewards
        cum = self._cumulative_rewards
        for a in cum:
            r = rewards[a]
            if r:
                cum[a] += r

    # ----- observations -----------------------------------------------------------------
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """What ``agent`` may know now, encoded: built only from that seat's hand and the public
        moves, so nothing of the other hands can leak into training."""
        g = self.game
        assert g is not None
        seat = self.agent_name_mapping[agent]
        trick = g.trick
        vec = self.encoder.vector(
            self.public,
            seat,
            g.hand(seat),
            trick,
            g.last_player if trick is not None else None,
            g.counts,
            g.locked_out if g._locked else (),
            g.turn,
            g.reversed,
            g.must_include,
            g.first_trick,
            g.scores,
        )
        if seat == g.turn and self._legal:
            mask = self._mask
            if mask is None:
                mask = self._mask = np.zeros(self.codec.n, dtype=np.int8)
                mask[list(self._legal)] = 1
            mask = mask.copy()
        else:
            mask = self._zero_mask.copy()
        return {"observation": vec, "action_mask": mask}

    # ----- the action encoding, for the seat to move (or ``agent``) -----------------------
    def encode(self, move: Move | Any, agent: str | None = None) -> int:
        """The index of ``move`` for ``agent`` (default: the seat to move)."""
        g = self.game
        assert g is not None
        seat = g.turn if agent is None else self.agent_name_mapping[agent]
        return self.codec.encode(move, g.hand(seat))

    def decode(self, index: int, agent: str | None = None) -> Move | None:
        """The move ``index`` stands for, for ``agent`` (default: the seat to move);
        ``None`` when those cards are no combination."""
        g = self.game
        assert g is not None
        seat = g.turn if agent is None else self.agent_name_mapping[agent]
        return self.codec.decode(index, g.hand(seat), self.rules)

    def legal_moves(self) -> dict[int, Move]:
        """The seat to move's legal moves by index (empty once the episode is over)."""
        return dict(self._legal)

    # ----- rendering --------------------------------------------------------------------
    def render(self) -> str | None:
        """The table as text (``render_mode="ansi"``), every hand shown, for watching a policy
        play; ``None`` without a render mode."""
        if self.render_mode is None:
            return None
        g = self.game
        if g is None:
            return "(not reset)"
        lines = [f"hand {g.hand_no}  scores {list(g.scores)}"]
        for s, a in enumerate(self.possible_agents):
            mark = ">" if s == g.turn and not g.hand_over else " "
            lines.append(f"{mark} {a} [{g.counts[s]:2d}] {format_cards(g.hand(s))}")
        if g.trick is not None:
            lines.append(f"to beat: {g.trick.describe()} by player_{g.last_player}")
        elif g.hand_over:
            lines.append(f"hand won by player_{g.winner}: {list(g.results[-1].scores)}")
        else:
            must = f" (must include {g.must_include})" if g.must_include is not None else ""
            lines.append(f"player_{g.turn} leads{must}")
        return "\n".join(lines)

    def close(self) -> None:
        """Nothing to release (no window, no process); PettingZoo's API asks for it."""
        pass


def env(
    rules: str | RuleSet | Mapping[str, Any] = "hk",
    seed: int | None = None,
    render_mode: str | None = None,
    episode: str = "hand",
) -> AECEnv:
    """The environment, wrapped as PettingZoo's classic games are (order enforcing)."""
    return wrappers.OrderEnforcingWrapper(raw_env(rules, seed, render_mode, episode))
