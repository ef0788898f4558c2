"""Before its client connects, speaks raw HTTP/2 to the referee's socket: a GOAWAY frame
whose debug text carries escape sequences (title set, screen clear, colour), which gRPC's
own log would print to the operator's terminal.  Then it leaves, saying what it sent, so
the probe is seen to have run."""

import os
import socket
import struct
import sys
import time

EVIL = b"\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[31mGOAWAY-TEXT"


def frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return (
        struct.pack(">I", len(payload))[1:]
        + bytes([kind, flags])
        + struct.pack(">I", stream)
        + payload
    )


address = os.environ["ARENA_ADDRESS"].removeprefix("unix://")
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
    s.connect(address)
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b""))
    time.sleep(0.3)
    s.sendall(frame(7, 0, 0, struct.pack(">II", 0, 2) + EVIL))
    time.sleep(0.5)
sys.exit("PROBE: sent a GOAWAY frame carrying escape sequences")
