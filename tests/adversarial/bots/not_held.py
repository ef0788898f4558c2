"""Plays a card it does not hold."""

from bigtwo import Bot


class NotHeld(Bot):
    def act(self, observation):
        return observation.unseen_cards()[-1:]
