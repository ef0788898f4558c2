"""A small policy for Big Two: a softmax over the legal actions of a linear score of each
action's features (numpy only).

The features are computed from what ``bigtwo.env`` gives a policy — the observation vector
and the action mask — with the action encoding's own tables (``ActionCodec.padded``: the
hand positions of every index), so the same function serves training (in the
environment) and play (``PolicyBot`` in a match).
"""

from __future__ import annotations

import numpy as np

from bigtwo.env import ActionCodec
from bigtwo.env.encoding import OFFSETS

FEATURES = (
    "pass",
    "single",
    "pair",
    "triple",
    "five",
    "mean strength",
    "top strength",
    "cards left after",
    "finishes the hand",
    "plays a 2",
    "leads a single",
    "leads a pair",
    "leads a triple",
    "leads a five",
    "top strength when an opponent holds 1 card",
    "pass when an opponent holds at most 2 cards",
    "cards of the played ranks kept back",
    "top position in the hand",
    "top strength when following",
    "bias",
)

_HAND = OFFSETS["hand"]
_LEAD = OFFSETS["trick_category"] + 8
_LEFT = OFFSETS["cards_left"]


def features(observation: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(legal indices, features)``: one row of :data:`FEATURES` per legal action."""
    codec = ActionCodec.for_actions(len(mask))
    legal = mask.nonzero()[0]
    hand = np.flatnonzero(observation[_HAND : _HAND + 52])  # strengths, weakest first
    h = len(hand)
    pos = codec.padded[legal].astype(np.int64)  # (m, 5) positions, -1 past the size
    valid = pos >= 0
    strength = np.where(valid, hand[np.clip(pos, 0, max(h - 1, 0))] if h else 0, -1)
    size = valid.sum(axis=1)
    is_pass = size == 0
    top = strength.max(axis=1).clip(0) / 51.0
    mean = np.where(is_pass, 0.0, (strength.clip(0) * valid).sum(axis=1) / np.maximum(size, 1))
    leading = observation[_LEAD] > 0
    left = observation[_LEFT : _LEFT + 4 * 18].reshape(4, 18)
    counts = left.argmax(axis=1)[1:]  # the others' card counts (0 for empty slots too)
    others = counts[left[1:].sum(axis=1) > 0]  # slots of seats that exist
    fewest = others.min() if others.size else 13
    ranks = np.where(valid, strength // 4, -1)
    per_rank = np.bincount(hand // 4, minlength=13) if h else np.zeros(13, int)
    kept = np.zeros(len(legal))
    for j in range(5):  # each distinct rank of the play once (its cards are sorted)
        r = ranks[:, j]
        new = r >= 0
        if j:
            new &= r != ranks[:, j - 1]
        kept += np.where(new, per_rank[r.clip(0)], 0)
    kept = (kept - size).clip(0) / 4.0
    f = np.zeros((len(legal), len(FEATURES)))
    f[:, 0] = is_pass
    f[:, 1] = size == 1
    f[:, 2] = size == 2
    f[:, 3] = size == 3
    f[:, 4] = size == 5
    f[:, 5] = mean / 51.0
    f[:, 6] = top
    f[:, 7] = (h - size) / 13.0
    f[:, 8] = (h - size == 0) & ~is_pass
    f[:, 9] = (strength >= 48).any(axis=1)
    if leading:
        f[:, 10:14] = f[:, 1:5]
    f[:, 14] = top * (fewest == 1)
    f[:, 15] = is_pass * (fewest <= 2)
    f[:, 16] = kept
    f[:, 17] = np.where(is_pass, 0.0, pos.max(axis=1) / max(h - 1, 1))
    f[:, 18] = top * (not leading)
    f[:, 19] = 1.0
    return legal, f


class LinearPolicy:
    """``softmax(features @ weights)`` over the legal actions."""

    def __init__(self, weights: np.ndarray | None = None) -> None:
        self.weights = np.zeros(len(FEATURES)) if weights is None else np.asarray(weights, float)

    @classmethod
    def load(cls, path: str) -> LinearPolicy:
        with np.load(path) as data:
            return cls(data["weights"])

    def save(self, path: str) -> None:
        np.savez(path, weights=self.weights, features=np.array(FEATURES))

    def probabilities(self, f: np.ndarray) -> np.ndarray:
        z = f @ self.weights
        z = np.exp(z - z.max())
        return z / z.sum()

    def sample(
        self, observation: np.ndarray, mask: np.ndarray, rng: np.random.Generator
    ) -> tuple[int, np.ndarray, int]:
        """``(action index, features, row chosen)`` drawn from the policy (training)."""
        legal, f = features(observation, mask)
        row = int(rng.choice(len(legal), p=self.probabilities(f)))
        return int(legal[row]), f, row

    def __call__(self, observation: np.ndarray, mask: np.ndarray) -> int:
        """The most likely action (play): what ``PolicyBot`` calls."""
        legal, f = features(observation, mask)
        return int(legal[int(np.argmax(f @ self.weights))])
