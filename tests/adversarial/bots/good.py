"""An honest bot for the fault tests: plays its weakest legal play (greedy)."""

from bigtwo import PASS, Bot


class Good(Bot):
    def act(self, observation):
        for move in observation.legal_moves:
            if move is not PASS:
                return move
        return PASS
