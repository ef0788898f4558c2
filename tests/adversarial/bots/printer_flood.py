"""Prints without end on stdout and stderr, from threads of its own, while it plays well:
what the arena keeps of it must be capped, and the match must not slow down."""

import sys
import threading

from bigtwo import Bot


def flood(stream, mark: bytes) -> None:
    line = b"FLOOD-" + mark * 200 + b"\n"
    while True:
        stream.write(line)


class PrinterFlood(Bot):
    def __init__(self):
        print("FIRST-LINE of the flooder", flush=True)
        for stream, mark in ((sys.stdout.buffer, b"o"), (sys.stderr.buffer, b"e")):
            threading.Thread(target=flood, args=(stream, mark), daemon=True).start()

    def act(self, observation):
        return observation.legal_moves[0]
