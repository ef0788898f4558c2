"""Always passes, even when it leads (illegal), and plays its weakest card on any trick."""

from bigtwo import PASS, Bot


class Illegal(Bot):
    def act(self, observation):
        if observation.trick is None:
            return PASS  # passing when leading is illegal
        return [observation.hand[0]]  # often does not beat, often the wrong size
