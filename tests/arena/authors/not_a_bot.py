"""Forgot to subclass Bot."""


class MyBot:
    def act(self, observation):
        return observation.legal_moves[0]
