"""Allocates (and touches) memory until something stops it."""

from bigtwo import Bot

HOARD = []


class MemoryHog(Bot):
    def act(self, observation):
        while True:
            HOARD.append(bytearray(32 << 20))
