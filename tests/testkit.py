"""What test files share: the ``arena`` command run as its users run it, and whether a
Docker engine can run the tests that need one.

Importable from every test file as ``testkit`` (pytest puts ``tests/`` on ``sys.path``
for tests/conftest.py)."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

import pytest

REQUIRE_DOCKER = os.environ.get("ARENA_REQUIRE_DOCKER") == "1"
"""CI sets ARENA_REQUIRE_DOCKER=1: a Docker test that cannot run fails instead of skipping."""


def free_port() -> int:
    """A loopback port nothing listens on, for a server that must be told its port before
    it binds (a command's ``--port``, a server restarted on the same port).

    A port the kernel hands out for ``bind(0)`` could be handed to another test's
    ``bind(0)`` or outgoing connection between this pick and the server's bind — a race
    that parallel test workers (pytest-xdist) lose.  So the pick is below the kernel's
    ephemeral range, in a band of this worker's own (``PYTEST_XDIST_WORKER`` gw0, gw1 …),
    at random within it (another suite running beside this one), and checked free."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    band = 20000 + (int(worker) if worker.isdigit() else 0) % 12 * 1000
    for _ in range(200):
        port = random.randrange(band, band + 1000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {band}–{band + 999}")


def arena_command(*args: str) -> list[str]:
    """The command line of ``arena ARGS`` with the interpreter running the tests
    (``python -m arena``), for a test that starts the command itself (in the background,
    under asyncio, to signal it)."""
    return [sys.executable, "-m", "arena", *args]


def arena(
    *args: str,
    timeout: float = 300,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    text: bool = True,
) -> subprocess.CompletedProcess:
    """Run ``arena ARGS`` to its end: a real process, its stdout and stderr captured
    (``str``, or ``bytes`` with ``text=False`` for a test that checks every byte).

    ``stdin``: what the command reads (by default it inherits the test's, empty under
    pytest); ``env``: its whole environment (by default the test's); ``timeout``: seconds
    after which a hung command fails the test (``subprocess.TimeoutExpired``)."""
    data: str | bytes | None = stdin if text or stdin is None else stdin.encode()
    return subprocess.run(
        arena_command(*args),
        input=data,
        capture_output=True,
        text=text,
        timeout=timeout,
        env=env,
    )


def arena_main(*args: str) -> subprocess.CompletedProcess:
    """``arena ARGS`` run by ``arena.cli.main`` (what ``arena`` and ``python -m arena``
    run) in this process, its stdout, stderr and exit code captured as ``arena`` gives them.

    For a test that only checks what a command says and its exit code (bad input, a typo'd
    name, a missing database): a process costs a second of interpreter start and imports
    per call.  Keep ``arena`` where the process itself is checked (signals, sandboxes, bots
    over sockets, a long run).  What ``main`` changes in a process is put back: argv, the
    open-files limit, the progress log's handlers."""
    import contextlib
    import io
    import logging
    import resource
    import traceback

    from arena.cli import main

    out, err = io.StringIO(), io.StringIO()
    notes = logging.getLogger("arena.progress")
    handlers, argv = list(notes.handlers), sys.argv
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)
    code: int = 0
    sys.argv = ["arena", *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as stop:  # as the interpreter turns it into an exit code
                if stop.code is None or isinstance(stop.code, int):
                    code = stop.code or 0
                else:
                    print(stop.code, file=sys.stderr)
                    code = 1
            except Exception:  # an uncaught error: the traceback a user would see
                traceback.print_exc()
                code = 1
    finally:
        sys.argv = argv
        notes.handlers[:] = handlers
        resource.setrlimit(resource.RLIMIT_NOFILE, limit)
    return subprocess.CompletedProcess(["arena", *args], code, out.getvalue(), err.getvalue())


def docker_problem() -> str | None:
    """Why the Docker tests cannot run here (no engine answers, or the base image is
    missing), or None when they can."""
    from arena.sandbox.containers import docker_client
    from arena.sandbox.images import DEFAULT_BASE

    client = docker_client(timeout=60)
    if client is None:
        return "no Docker engine answers"
    try:
        client.images.get(DEFAULT_BASE)
    except Exception:
        return f"base image {DEFAULT_BASE} missing (docker/make-base-image.sh builds it)"
    return None


def need_docker() -> None:
    """Skip the calling test with a one-line reason when Docker cannot run it, or fail it
    under ARENA_REQUIRE_DOCKER=1 (CI)."""
    problem = docker_problem()
    if problem:
        if REQUIRE_DOCKER:
            pytest.fail(f"ARENA_REQUIRE_DOCKER=1 but {problem}")
        pytest.skip(problem)


def _page_rebuilt(exc: Exception) -> bool:
    """Whether a browser call failed only because the page replaced the node it read (a
    reload, a redraw): chromedriver reports that as a stale element or, mid-navigation, as
    an inspector error "Node with given id does not belong to the document"."""
    name = type(exc).__name__
    return name == "StaleElementReferenceException" or (
        name == "WebDriverException" and "does not belong to the document" in str(exc)
    )


def wait_for(predicate: Callable[[], Any], seconds: float, what: str) -> Any:
    """Poll ``predicate`` every 0.3 s until it returns something true, and return that;
    fail naming ``what`` after ``seconds``. A read of a node the page rebuilt meanwhile
    counts as "not yet", never as a failure: pages that update themselves do that."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            found = predicate()
        except Exception as exc:
            if not _page_rebuilt(exc):
                raise
            found = None
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError(f"not within {seconds} s: {what}")
