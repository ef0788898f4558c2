"""Fails while importing: its helper, called at import, looks up a missing key."""

from bigtwo import Bot


def table():
    return {}["missing"]


TABLE = table()


class Broken(Bot):
    def act(self, observation):
        return observation.legal_moves[0]
