"""The policy trained by examples/train_reinforce.py, as a bot: its weights are read from
``weights.npz`` next to this file.

    arena match examples/reinforce_bot random random random
    arena compare examples/reinforce_bot random --opponent random --max-matches 64
"""

from pathlib import Path

from reinforce_policy import LinearPolicy

from bigtwo.env import PolicyBot

WEIGHTS = Path(__file__).resolve().parent / "weights.npz"


class ReinforceBot(PolicyBot):
    name = "reinforce"

    def __init__(self) -> None:
        super().__init__(LinearPolicy.load(str(WEIGHTS)))
