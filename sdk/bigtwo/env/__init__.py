"""Reinforcement learning on the arena's exact rules: ``bigtwo.env`` (``pip install
bigtwo-sdk[rl]``; docs/env.md).

- :func:`env` / :class:`raw_env`: the PettingZoo AEC environment (agents ``player_0 …``,
  observations ``{"observation", "action_mask"}``, rewards = the hand's scores);
- :class:`ActionCodec`, :data:`LAYOUT`, :func:`observation_vector`, :func:`action_mask`:
  the fixed action and observation encodings;
- :class:`BigTwoGymEnv`: one seat learns, the other seats are any bots (Gymnasium);
- :class:`PolicyBot`: a ``policy(observation, action_mask) -> index`` as a :class:`Bot`,
  to play in ``arena match`` / ladders.

This package is the only part of the SDK that imports numpy (and PettingZoo/Gymnasium):
the engine stays standard library only.  Names are loaded on first use, so a bot that
needs only :class:`PolicyBot` (numpy) does not import PettingZoo.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "env": "aec",
    "raw_env": "aec",
    "rules_of": "aec",
    "ActionCodec": "encoding",
    "LAYOUT": "encoding",
    "OBS_SIZE": "encoding",
    "RULE_FEATURES": "encoding",
    "action_mask": "encoding",
    "observation_vector": "encoding",
    "BigTwoGymEnv": "gym",
    "sample_bot": "gym",
    "PolicyBot": "policy",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'bigtwo.env' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
