"""A loopback stand-in for a stalled Docker engine: a Unix-socket proxy in front of the real
engine's socket that relays everything, except that it holds chosen requests (``POST
…/containers/create`` or ``POST …/containers/<id>/start``) unanswered until released.
Point a client at it with ``DOCKER_HOST=unix://<path>``; the engine itself is untouched."""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from pathlib import Path

ENGINE = "/var/run/docker.sock"
ROUTES = {
    "create": re.compile(rb"^POST /(v[\d.]+/)?containers/create[ ?]"),
    "start": re.compile(rb"^POST /(v[\d.]+/)?containers/[^/ ]+/start[ ?]"),
    "nothing": re.compile(rb"(?!)"),
}


class StallingProxy:
    """Relays a client's connections to the engine; a request that matches ``stall`` is
    held (nothing of it reaches the engine) until ``release()``, which sends it on."""

    def __init__(self, path: Path, stall: str, engine: str = ENGINE) -> None:
        self.path, self.engine, self.pattern = path, engine, ROUTES[stall]
        self.released = threading.Event()
        self.dropped = False
        self.stalled = 0
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(64)
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"unix://{self.path}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(self.engine)
            with self.lock:
                self.conns += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, requests: bool) -> None:
        try:
            while data := src.recv(65536):
                if requests and self.pattern.match(data) and not self.released.is_set():
                    with self.lock:
                        self.stalled += 1
                    self.released.wait()
                    if self.dropped:  # closed, not released: the request never arrives
                        return
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def release(self) -> None:
        """Send the held requests on, and stop holding any."""
        self.released.set()

    def close(self) -> None:
        """Stop: held requests are dropped (their callers may have given up long ago: a
        create sent on now would make a container nobody waits for)."""
        self.dropped = True
        self.release()
        self.server.close()
        with self.lock:
            for s in self.conns:
                s.close()
