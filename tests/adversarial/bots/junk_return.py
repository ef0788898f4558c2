"""Returns something that is no play at all."""

from bigtwo import Bot


class Junk(Bot):
    def act(self, observation):
        return 3.14
