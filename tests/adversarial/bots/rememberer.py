"""Tries to carry what it saw from one rotation of a duplicate deal to the next, so that it
would know the other seats' cards when the same deal comes round again: it leaves a note
(its instance id and the hands it was dealt) everywhere it can write — its folder, its
home, the working folder, /tmp, /dev/shm, /var/tmp — and, at its first move, reads every
note it can find.  A note of another instance is a breach ("BREACH: ...").  It reports how
many places it tried and how many notes it found ("PROBE: ..."), once per instance, so a
probe that did not run cannot pass."""

import glob
import os
import secrets

from bigtwo import Bot

PLACES = [
    os.path.dirname(os.path.abspath(__file__)),
    os.path.expanduser("~"),
    os.getcwd(),
    "/tmp",
    "/dev/shm",
    "/var/tmp",
]


class Rememberer(Bot):
    def __init__(self):
        self.me = secrets.token_hex(6)
        self.first = True
        self.writable = 0

    def on_hand_start(self, observation):
        cards = " ".join(str(c) for c in observation.hand)
        for place in PLACES:
            try:
                with open(os.path.join(place, f".rememberer-{self.me}"), "a") as f:
                    f.write(cards + "\n")
                self.writable += 1
            except OSError:
                pass

    def act(self, observation):
        if self.first:
            self.first = False
            others = set()
            for place in PLACES:
                for path in glob.glob(os.path.join(place, ".rememberer-*")):
                    if not path.endswith(self.me):
                        others.add(path)
            if others:
                raise RuntimeError(f"BREACH: notes of {len(others)} earlier instances")
            raise RuntimeError(
                f"PROBE: instance {self.me} wrote {self.writable} notes, found none of others"
            )
        return observation.legal_moves[0]
