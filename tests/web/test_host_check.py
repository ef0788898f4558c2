"""``arena play`` (and ``arena serve``) answer only to their own host names: DNS rebinding
cannot hand a page of another site the local Play server (issue 21).

The attack: a page of ``http://evil.test:PORT`` makes its name resolve to 127.0.0.1 once
loaded; its script's requests then reach the arena, same-origin as far as the browser
knows, WebSocket included.  Here chromium maps evil.test to 127.0.0.1 itself
(``--host-resolver-rules``: no DNS lookup happens), the attacker's page is served from a
port by a tiny server of the test, which then gives the port up to a real ``arena play``:
the page, still open, is now on the arena's origin as a rebound page would be.  Its fetch
and its WebSocket are refused; so is a page of another origin opening the table's
WebSocket; the honest ``http://127.0.0.1:PORT/`` still plays.  The same refusals are also
checked without a browser (raw requests naming another Host), and for ``arena serve``."""

from __future__ import annotations

import base64
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import REQUIRE_BROWSER, need_browser

from testkit import arena_command, free_port


def _wait_up(proc: subprocess.Popen[str], url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.TransportError:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.1)
    raise AssertionError(f"{url} did not answer within 60 s")


@contextlib.contextmanager
def arena_play(tmp_path: Path, port: int = 0) -> Iterator[tuple[int, str]]:
    """A real ``arena play`` (bots in-process: no sandbox needed); (port, table id)."""
    proc = subprocess.Popen(
        arena_command(
            "play", "--no-open", "--sandbox", "inproc", "--port", str(port),
            "--db", str(tmp_path / "p.db"),
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"open http://127\.0\.0\.1:(\d+)/play/([\w-]+)", line)
        assert found, (line, proc.stderr.read() if proc.poll() is not None else "")
        port, table = int(found[1]), found[2]
        _wait_up(proc, f"http://127.0.0.1:{port}/play")
        yield port, table
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        try:
            _out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _out, err = proc.communicate(timeout=10)
    assert "Traceback" not in err, err


def _handshake(port: int, path: str, host: str, origin: str | None) -> str:
    """A WebSocket opening handshake sent by hand; the status line answered."""
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        f"GET {path} HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13",
    ]  # fmt: skip
    if origin is not None:
        lines.append(f"Origin: {origin}")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n" not in head:
            chunk = s.recv(1024)
            if not chunk:
                break
            head += chunk
    return head.split(b"\r\n", 1)[0].decode("latin-1")


def test_arena_play_refuses_other_hosts_and_origins(tmp_path: Path):
    with arena_play(tmp_path) as (port, table):
        base = f"http://127.0.0.1:{port}"
        for host in (f"evil.test:{port}", "evil.test", f"10.0.0.1:{port}", "127.0.0.1.evil.test"):
            page = httpx.get(f"{base}/play/{table}", headers={"host": host}, timeout=10)
            assert page.status_code == 400, (host, page.status_code)
            assert "answers to" in page.text and page.text.count("\n") == 1, page.text
        assert "evil.test" in page.text
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
            page = httpx.get(f"{base}/play/{table}", headers={"host": host}, timeout=10)
            assert page.status_code == 200, (host, page.status_code)
        ws = f"/play/{table}/ws"
        rebound = _handshake(port, ws, f"evil.test:{port}", f"http://evil.test:{port}")
        assert " 101 " not in rebound and (" 400 " in rebound or " 403 " in rebound), rebound
        foreign = _handshake(port, ws, f"127.0.0.1:{port}", "http://127.0.0.1:1")
        assert " 403 " in foreign, foreign
        null = _handshake(port, ws, f"127.0.0.1:{port}", "null")
        assert " 403 " in null, null
        honest = _handshake(port, ws, f"127.0.0.1:{port}", f"http://127.0.0.1:{port}")
        assert " 101 " in honest, honest


def test_arena_serve_answers_its_own_names_and_the_allowed_ones(tmp_path: Path):
    port = free_port()
    proc = subprocess.Popen(
        arena_command(
            "serve", "--db", str(tmp_path / "c.db"), "--port", str(port),
            "--allowed-host", "contest.test",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_up(proc, base + "/")
        for host, status in [
            (f"127.0.0.1:{port}", 200), ("localhost", 200), ("contest.test", 200),
            ("CONTEST.TEST.:443", 200), ("evil.test", 400), (f"evil.test:{port}", 400),
        ]:  # fmt: skip
            got = httpx.get(base + "/", headers={"host": host}, timeout=10)
            assert got.status_code == status, (host, got.status_code, got.text)
        assert "--allowed-host" in got.text
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "Traceback" not in err, err


def test_the_names_a_bind_answers_to():
    from arena.web.hosts import allowed_hosts, host_name

    loop = allowed_hosts("127.0.0.1", 8000)
    assert all(loop.allows(h) for h in ("127.0.0.1", "localhost", "::1"))
    assert not loop.allows("evil.test") and not loop.allows("10.0.0.1")
    every = allowed_hosts("0.0.0.0", 8000, ["contest.example.org"])
    assert every.allows("192.0.2.7") and every.allows("2001:db8::1")
    assert every.allows("contest.example.org") and not every.allows("evil.test")
    one = allowed_hosts("192.0.2.7", 8000)
    assert one.allows("192.0.2.7") and not one.allows("192.0.2.8")
    assert allowed_hosts("127.0.0.1", 8000, ["*"]).allows("anything.test")
    assert host_name("[::1]:8000") == "::1" and host_name("Evil.Test.:80") == "evil.test"


# ----- in a real browser ----------------------------------------------------------------------

ATTACK_PAGE = """<!doctype html><title>a page of another site</title><script>
window.results = {};
function socket(name, url) {
  var ws = new WebSocket(url), opened = false;
  ws.onopen = function () { opened = true; window.results[name] = "open"; ws.close(); };
  ws.onclose = function () { if (!opened) window.results[name] = "refused"; };
}
window.attack = function (table, port) {
  fetch("/play/" + table).then(function (r) {
    return r.text().then(function (t) { window.results.page = r.status + " " + t; });
  }, function (e) { window.results.page = "failed " + e; });
  socket("same_origin", "ws://" + location.host + "/play/" + table + "/ws");
  socket("loopback", "ws://127.0.0.1:" + port + "/play/" + table + "/ws");
};
</script>"""


class _Attacker(BaseHTTPRequestHandler):
    # chromium keeps a spare, idle connection open to a site it has just loaded; a handler
    # thread that waited on it for ever answered the page's later fetch *after* the port had
    # gone to the arena (seen once in CI): idle connections are dropped within a second,
    # and the site's close waits for every handler (below)
    timeout = 1.0

    def do_GET(self) -> None:
        body = ATTACK_PAGE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def attacker_site(port: int = 0) -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", port), _Attacker)
    server.daemon_threads = False
    server.block_on_close = True  # server_close() joins the handlers: none outlives the site
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture
def evil_browser() -> Iterator[Any]:
    """A headless chromium that resolves evil.test to 127.0.0.1 by itself."""
    need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "chromium"
    for arg in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--window-size=1280,720", "--host-resolver-rules=MAP evil.test 127.0.0.1",
        "--disable-features=BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessChecks",
    ):  # fmt: skip
        opts.add_argument(arg)
    try:
        driver = webdriver.Chrome(
            service=Service(shutil.which("chromedriver") or "chromedriver"), options=opts
        )
    except Exception as exc:
        reason = f"chromium did not start: {str(exc).splitlines()[0] if str(exc) else exc!r}"
        if REQUIRE_BROWSER:
            pytest.fail(f"ARENA_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def _results(browser: Any, keys: tuple[str, ...], timeout: float = 20.0) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    while True:
        got = browser.execute_script("return window.results") or {}
        if all(k in got for k in keys) or time.monotonic() > deadline:
            return dict(got)
        time.sleep(0.1)


@pytest.mark.browser
def test_a_rebound_page_and_a_foreign_page_are_refused_the_honest_page_plays(
    evil_browser: Any, tmp_path: Path
):
    browser = evil_browser
    # the attacker's page, loaded from evil.test:PORT while its own server holds PORT ...
    with attacker_site() as port:
        browser.get(f"http://evil.test:{port}/")
        assert browser.execute_script("return typeof window.attack") == "function"
    # ... then PORT is the arena's: evil.test:PORT has been rebound to it
    with arena_play(tmp_path, port) as (port, table):
        browser.execute_script("window.attack(arguments[0], arguments[1])", table, port)
        got = _results(browser, ("page", "same_origin", "loopback"))
        assert got.get("page", "").startswith("400 ") and "answers to" in got["page"], got
        assert got.get("same_origin") == "refused", got
        assert got.get("loopback") == "refused", got  # another origin: refused as well

        # a page loaded at evil.test:PORT now: the arena's refusal, not its Play page
        browser.get(f"http://evil.test:{port}/play/{table}")
        text = browser.find_element("tag name", "body").text
        assert "answers to" in text and "evil.test" in text, text
        assert not browser.execute_script("return !!window.arenaPlay")

        # a page of another origin on this machine opening the table's WebSocket
        with attacker_site() as other:
            browser.get(f"http://127.0.0.1:{other}/")
            browser.execute_script("window.attack(arguments[0], arguments[1])", table, port)
            got = _results(browser, ("loopback",))
            assert got.get("loopback") == "refused", got

        # the honest page plays
        browser.get(f"http://127.0.0.1:{port}/play/{table}")
        deadline = time.monotonic() + 20
        while not browser.execute_script("return !!(window.arenaPlay && window.arenaPlay.state)"):
            assert time.monotonic() < deadline, "the honest Play page got no update"
            time.sleep(0.1)
