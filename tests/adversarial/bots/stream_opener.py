"""Opens call after call over its seat's one connection, once its seat is attached.

A seat's socket accepts one connection, ever; but HTTP/2 carries many streams over one
connection, and each ``Play`` call that reaches the referee's servicer costs it Python
(reading the Hello, refusing it), in the event loop every match of a ladder shares.  This
bot takes its seat's connection itself, speaking HTTP/2 by hand (no gRPC, so nothing
stands between it and the wire): the preface, its Hello on stream 1 — it waits until the
referee answers with its MatchStart — then a further ``Play`` with a Hello on stream 3, 5,
7, ... as fast as the referee answers, never acknowledging the referee's SETTINGS (whose
stream limit then binds nobody but the referee).

It reports on stderr, then exits (the sandbox puts its last line in the fault):
``STREAM PROBE: attached=1 attempts=A served=S refused=R stalled=T cut=C``: A extra calls
written, S answered by the servicer (a HEADERS frame on the stream), R reset by gRPC's
transport, T unanswered for a second; ``cut=1`` when the referee closed the connection.
``STREAM PROBE FAILED`` when it never got its seat (the probe did not run).
"""

import os
import socket
import struct
import sys
import time

from bigtwo import Bot
from bigtwo.v1 import referee_pb2 as pb

ATTEMPTS = 200  # extra calls, at most
BUDGET_S = 10.0  # for all of them
ANSWER_S = 1.0  # wait for each call's answer

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 3, 4, 6, 7, 8
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1


def frame(kind: int, flags: int, sid: int, payload: bytes = b"") -> bytes:
    head = struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", sid)
    return head + payload


def literal(index: int, value: bytes) -> bytes:
    """An HPACK literal header field without indexing, its name from the static table (an
    index below 15), no Huffman coding."""
    return bytes([index, len(value)]) + value


# :method POST and :scheme http are in HPACK's static table (entries 3 and 6); :authority
# is entry 1, :path 4, content-type 31 (15 + 16), te a new name
HEADER_BLOCK = (
    b"\x83\x86"
    + literal(4, b"/bigtwo.v1.Referee/Play")
    + literal(1, b"localhost")
    + b"\x0f\x10"
    + bytes([16])
    + b"application/grpc"
    + b"\x00\x02te\x08trailers"
)


class Conn:
    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.buf = b""
        self.closed = False

    def send(self, data: bytes) -> bool:
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            self.closed = True
            return False

    def frames(self, until: float):
        """Frames (kind, flags, sid, payload) as they come, until ``until`` or the end."""
        while not self.closed:
            while len(self.buf) >= 9:
                n = int.from_bytes(self.buf[:3], "big")
                if len(self.buf) < 9 + n:
                    break
                head, payload = self.buf[:9], self.buf[9 : 9 + n]
                self.buf = self.buf[9 + n :]
                sid = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
                yield head[3], head[4], sid, payload
            left = until - time.monotonic()
            if left <= 0:
                return
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.closed = True
                return
            self.buf += chunk


def call(sid: int, hello: bytes, end: bool) -> bytes:
    message = b"\x00" + struct.pack(">I", len(hello)) + hello
    return frame(HEADERS, END_HEADERS, sid, HEADER_BLOCK) + frame(
        DATA, END_STREAM if end else 0, sid, message
    )


def probe() -> str:
    token = os.environ.get("ARENA_TOKEN")
    if token is None and os.environ.get("ARENA_TOKEN_FILE"):
        with open(os.environ["ARENA_TOKEN_FILE"], encoding="utf-8") as f:
            token = f.read().strip()
    hello = pb.BotMessage(
        hello=pb.Hello(
            match_id=os.environ["ARENA_MATCH_ID"],
            seat=int(os.environ["ARENA_SEAT"]),
            token=token or "",
            bot_name="stream_opener",
            protocol_version=1,
        )
    ).SerializeToString()
    conn = Conn(os.environ["ARENA_ADDRESS"].removeprefix("unix://"))
    conn.send(
        PREFACE
        + frame(SETTINGS, 0, 0)
        + frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 1 << 30))
        + call(1, hello, end=False)
    )
    attached = False
    for kind, _, sid, payload in conn.frames(time.monotonic() + 30):
        if kind == DATA and sid == 1 and payload:  # the MatchStart: the seat is ours
            attached = True
            break
    if not attached:
        return f"STREAM PROBE FAILED: never attached (connection closed: {conn.closed})"
    attempts = served = refused = stalled = 0
    deadline = time.monotonic() + BUDGET_S
    for k in range(ATTEMPTS):
        if conn.closed or time.monotonic() > deadline:
            break
        sid = 3 + 2 * k
        if not conn.send(call(sid, hello, end=True)):
            break
        attempts += 1
        answered = False
        for kind, flags, fsid, payload in conn.frames(time.monotonic() + ANSWER_S):
            if kind == PING and not flags & ACK:  # stay alive: answer the referee's pings
                conn.send(frame(PING, ACK, 0, payload))
            elif kind == HEADERS and fsid == sid:
                served += 1
                answered = True
                break
            elif kind == RST_STREAM and fsid == sid:
                refused += 1
                answered = True
                break
        if not answered and not conn.closed:
            stalled += 1
    if not conn.closed:  # did the referee end it anyway? (a last look)
        for _ in conn.frames(time.monotonic() + 2):
            pass
    return (
        f"STREAM PROBE: attached=1 attempts={attempts} served={served} refused={refused} "
        f"stalled={stalled} cut={int(conn.closed)}"
    )


class StreamOpener(Bot):
    def __init__(self) -> None:
        try:
            report = probe()
        except Exception as exc:
            report = f"STREAM PROBE FAILED: {type(exc).__name__}: {exc}"
        print(report, file=sys.stderr, flush=True)
        os._exit(3)

    def act(self, observation):  # never reached
        return observation.legal_moves[0]
