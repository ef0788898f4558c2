"""Plays its weakest legal play; leads its weakest card.  Passes only when it must."""

from bigtwo import PASS, Bot


class GreedyBot(Bot):
    name = "greedy"

    def act(self, observation):
        # legal_moves is in the order Observation.legal_moves documents: weakest first,
        # the pass last
        for move in observation.legal_moves:
            if move is not PASS:
                return move
        return PASS
