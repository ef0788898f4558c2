"""A trained policy as a bot: :class:`PolicyBot`.

    from bigtwo.env import PolicyBot

    class MyBot(PolicyBot):
        def __init__(self):
            super().__init__(my_policy, name="my-rl-bot")

``policy(observation, action_mask) -> index`` receives exactly what the environment gives
(:func:`bigtwo.env.observation_vector` of the bot's :class:`bigtwo.Observation`, and the
mask of its legal moves), so a policy trained in :mod:`bigtwo.env` plays the same way in
``arena match``, ladders and :func:`bigtwo.play_local`, through the referee like any bot.
Needs numpy only (not PettingZoo or Gymnasium).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..bot import Bot
from ..combos import Move
from ..observation import Observation
from .encoding import ActionCodec, legal_indices, observation_vector

Policy = Callable[[np.ndarray, np.ndarray], int]


class PolicyBot(Bot):
    """Plays ``policy(observation_vector, action_mask)``'s index.  An index outside the mask
    raises ``ValueError`` in ``act`` (a fault: the referee plays its default action)."""

    def __init__(self, policy: Policy, name: str = "") -> None:
        self.policy = policy
        if name:
            self.name = name

    def act(self, observation: Observation) -> Move:
        """Encode the observation as the environments do, ask the policy for an index and play
        that move; an index outside the mask is a ``ValueError``, which the referee records
        as this bot's fault rather than silently playing something else."""
        codec = ActionCodec.for_rules(observation.rules)
        moves = observation.legal_moves
        indices = legal_indices(codec, observation.hand, moves)
        mask = np.zeros(codec.n, dtype=np.int8)
        mask[indices] = 1
        index = int(self.policy(observation_vector(observation), mask))
        try:
            return moves[indices.index(index)]
        except ValueError:
            raise ValueError(f"the policy chose action {index}, which is not legal") from None
