"""A bot author sees their own bot: a bot that cannot start stops `arena match` before the
first hand with its own error, and every error names the author's file and line — never
the sandbox's copy (``/bot/…``) — on both sandboxes."""

import json
import subprocess
from pathlib import Path

from testkit import arena

AUTHORS = Path(__file__).resolve().parents[1] / "arena" / "authors"


def match(backend: str, bot: str, *extra: str) -> subprocess.CompletedProcess:
    seats = [bot, "random", "greedy", "random"]
    options = ["--sandbox", backend, "--hands", "2", "--move-ms", "3000", *extra]
    return arena("match", *seats, *options)


def test_a_bot_that_cannot_start_stops_the_match_before_its_first_hand(backend):
    path = AUTHORS / "typo.py"
    proc = match(backend, str(path), "--json")
    assert proc.returncode == 3, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["hands"] == [] and "no hand was played" in summary["aborted"]
    assert not summary["seats"][0]["connected"]
    assert f"SyntaxError: expected ':' at {path}:7" in proc.stderr, proc.stderr
    assert "/bot/" not in proc.stderr
    shown = match(backend, str(path))  # the table: no hand rows, only the error
    assert shown.returncode == 3 and "final standings" not in shown.stdout
    assert f"{path}:7" in shown.stderr


def test_an_import_error_shows_the_authors_frames(backend):
    path = AUTHORS / "import_error.py"
    proc = match(backend, str(path))
    assert proc.returncode == 3
    said = " ".join(proc.stderr.split())  # the console wraps long lines
    assert f"KeyError: 'missing' at {path}:10 in <module> → {path}:7 in table" in said, said
    assert "/bot/" not in said


def test_a_raising_act_shows_the_authors_frames(backend):
    path = AUTHORS / "index_error.py"
    proc = match(backend, str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    faults = json.loads(proc.stdout)["seats"][0]["faults"]
    detail = faults[0]["detail"]
    assert faults[0]["kind"] == "crash" and "IndexError" in detail
    assert f"{path}:8 in act → {path}:12 in pick: return moves[len(moves) + 5]" in detail
    assert "/bot/" not in detail


def test_a_class_that_is_not_a_bot_says_so(backend):
    path = AUTHORS / "not_a_bot.py"
    proc = match(backend, str(path))
    said = " ".join(proc.stderr.split())
    assert proc.returncode == 3 and "class MyBot(Bot)" in said, said
    named = match(backend, f"{path}:MyBot")
    said = " ".join(named.stderr.split())
    assert named.returncode == 3 and "'MyBot' is not a Bot subclass" in said, said
