"""Shared set-up of the web tests: a real browser and a real HTTP server.

``browser``: Debian's chromium driven through chromedriver by Selenium (headless), one for
the whole session.  Without chromium or chromedriver the browser tests skip with a
one-line reason, except under ``ARENA_REQUIRE_BROWSER=1`` (CI), where they fail.

``serve_asgi`` (a fixture giving :func:`serve`; ``with serve_asgi(app) as url:``): runs an
ASGI app on a real uvicorn server in a thread, on 127.0.0.1 and a free port, and yields its
base URL; the server is shut down (and its thread joined) at the end.  ``live_server``: the
same for one test (``url = live_server(app)``).  Pages are tested through real sockets,
never a mock."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

REQUIRE_BROWSER = os.environ.get("ARENA_REQUIRE_BROWSER") == "1"


def browser_problem() -> str | None:
    """Why no browser test can run here, or None."""
    missing = [name for name in ("chromium", "chromedriver") if shutil.which(name) is None]
    if missing:
        return f"{' and '.join(missing)} not installed (apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    return None


def need_browser() -> None:
    """Skip the calling test with a one-line reason when no browser can run, or fail it
    under ARENA_REQUIRE_BROWSER=1."""
    problem = browser_problem()
    if problem:
        if REQUIRE_BROWSER:
            pytest.fail(f"ARENA_REQUIRE_BROWSER=1 but {problem}")
        pytest.skip(problem)


@pytest.fixture(scope="session")
def _session_browser() -> Iterator[Any]:
    """A headless chromium (Selenium WebDriver), 1280×720, shared by the session's tests
    (through :func:`browser`)."""
    need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "chromium"
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,720",
        "--hide-scrollbars",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # console errors, CSP refusals
    try:
        driver = webdriver.Chrome(
            service=Service(shutil.which("chromedriver") or "chromedriver"), options=opts
        )
    except Exception as exc:  # a broken install: the reason, on one line
        reason = f"chromium did not start: {str(exc).splitlines()[0] if str(exc) else exc!r}"
        if REQUIRE_BROWSER:
            pytest.fail(f"ARENA_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser(_session_browser: Any) -> Any:
    """The session's chromium, on a blank page with its console log emptied: a page an
    earlier test left open (polling a server that test has since stopped) neither runs on
    nor leaves its errors in this test's log (a refused /api/leaderboard of another test's
    server failed a "no script error" check once)."""
    _session_browser.get("about:blank")
    _session_browser.get_log("browser")
    return _session_browser


@contextlib.contextmanager
def serve(app: Any, timeout: float = 10.0) -> Iterator[str]:
    """Run ``app`` (ASGI) on uvicorn in a thread on 127.0.0.1; yield ``http://127.0.0.1:PORT``."""
    # the socket is bound here and handed to uvicorn: no moment in which another test
    # (another xdist worker) could take the port between a pick and a bind
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="auto")
    server = uvicorn.Server(config)  # off the main thread it leaves signals alone
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="uvicorn-test", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the test server stopped before it started (see its log)")
        if time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"the test server did not start within {timeout} s")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout)
        sock.close()


@pytest.fixture(scope="session")
def serve_asgi() -> Any:
    """:func:`serve`, for fixtures of any scope (``with serve_asgi(app) as url: ...``)."""
    return serve


@pytest.fixture
def live_server() -> Iterator[Any]:
    """``live_server(app)`` starts ``app`` for this test and returns its base URL; every
    server it started stops when the test ends."""
    with contextlib.ExitStack() as stack:
        yield lambda app: stack.enter_context(serve(app))
