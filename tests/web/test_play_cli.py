"""``arena play`` as a person starts it: a real process serving the Play page, its first
table opened with the command's bots and rules, played through the page's socket, replayed,
and stopped with Ctrl-C; bad options refused before anything starts."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest
from test_tables import Page

from testkit import arena_main

ARENA = [sys.executable, "-m", "arena"]


def _start(tmp_path, *args: str) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ, COLUMNS="200")
    proc = subprocess.Popen(
        [*ARENA, "play", "--no-open", "--db", str(tmp_path / "p.db"), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    found = re.search(r"open (http://127\.0\.0\.1:\d+)(/play/[\w-]+)", line)
    assert found, (line, proc.stderr.read() if proc.poll() is not None else "")
    base, path = found.groups()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the address is printed just before it listens
        try:
            if httpx.get(base + path, timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
    return proc, base + path


def test_arena_play_serves_the_first_table_plays_it_and_stops_on_ctrl_c(tmp_path):
    proc, url = _start(
        tmp_path, "--sandbox", "process", "--rules", "pusoy", "--set", "players=3",
        "--seat", "2", "--hands", "1", "random", "greedy",
    )  # fmt: skip
    try:
        base, path = url.split("/play/")[0], "/play/" + url.split("/play/")[1]
        page = Page(base, path)
        hello = page.recv()
        assert hello["seat"] == 2 and hello["names"] == ["random", "greedy", "you"]
        while True:
            msg = page.until("turn", "match_end", timeout=60)
            if msg["type"] in ("match_end", "closed"):
                break
            first = msg["legal"][0]["cards"]
            kind = "play" if first else "pass"
            reply = page.ask({"type": kind, "turn_id": msg["turn_id"], "cards": first or []})
            assert reply["type"] == "sent", reply
        assert msg["type"] == "match_end", msg
        start = next(u for u in page.updates if u["type"] == "match_start")
        assert start["rules"]["suit_order"] == "CSHD" and start["move_ms"] == 60_000
        page.close()
        replay = httpx.get(base + msg["replay_url"], timeout=10)
        assert replay.status_code == 200 and "Re-validated by the engine" in replay.text
        listed = httpx.get(base + "/play", timeout=10).text
        assert msg["replay_url"] in listed
    finally:
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "args, words",
    [
        (["--set", "players=3", "--seat", "3"], "seats are 0 to 2"),
        (["random"], "give 3 opponents, not 1"),
        (["random", "greedy", "no/such/bot"], "no/such/bot"),
        (["--rules", "poker"], "poker"),
        (["--sandbox", "vm"], "--sandbox 'vm'"),
    ],
)
def test_arena_play_refuses_bad_options_before_serving(tmp_path, args, words):
    done = arena_main("play", "--no-open", "--db", str(tmp_path / "p.db"), *args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert words in done.stderr and "open http" not in done.stdout
