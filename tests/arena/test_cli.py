"""The `arena` command as a user runs it: a real process, real output, real exit codes
(bad input, which ends before anything starts, through ``arena.cli.main`` in the test
process: ``testkit.arena_main``, checked against the process below)."""

import itertools
import json
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

import pytest

from bigtwo import RuleSet

from testkit import arena as run_arena
from testkit import arena_command, arena_main

arena = partial(run_arena, timeout=120)  # each command here ends in seconds


def arena_popen(*args):
    """The arena command running in the background, its output piped."""
    return subprocess.Popen(
        arena_command(*args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_demo_plays_a_whole_match_and_shows_hands_plays_and_scores():
    proc = arena("demo", "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Hand 1" in out and "leads and must play 3♦" in out
    assert "passes" in out and "— out!" in out and "Final standings" in out
    assert out.count("wins") >= 1


@pytest.mark.parametrize("preset", ["hk", "family", "pusoy"])
def test_demo_json_is_a_complete_consistent_result(preset):
    proc = arena("demo", "--rules", preset, "--seed", "5", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    rules = RuleSet.from_dict(result["rules"])
    assert rules == RuleSet.preset(preset) and result["match_over"]
    hands = result["hands"]
    totals = [0] * 4
    for h in hands:
        assert h["cards_left"][h["winner"]] == 0
        totals = [t + s for t, s in zip(totals, h["scores"], strict=True)]
        assert totals == h["cumulative"]
    assert [s["score"] for s in result["seats"]] == totals
    if preset == "pusoy":
        assert len(hands) == 10


def test_demo_with_overrides_and_hand_limit():
    proc = arena(
        "demo", "-r", "pusoy", "-s", "players=3", "-s", "bombs=anywhere", "--hands", "2", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["rules"]["players"] == 3 and result["rules"]["bombs"] == "anywhere"
    assert len(result["hands"]) == 2 and len(result["seats"]) == 3


def test_rules_file_round_trip(tmp_path):
    proc = arena("rules", "--rules", "family", "--set", "revolution=on")
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / "rules.json"
    path.write_text(proc.stdout)
    again = arena("demo", "--rules", str(path), "--hands", "1", "--json")
    assert json.loads(again.stdout)["rules"]["revolution"] is True


@pytest.mark.parametrize(
    "args, message",
    [
        (["demo", "--rules", "uno"], "--rules 'uno' is neither a preset"),
        (["demo", "--set", "bombz=anywhere"], "unknown rule option 'bombz'"),
        (["demo", "--set", "bombs"], "expected OPTION=VALUE"),
        (["demo", "--set", "players=9"], "rule option 'players': 9"),
        (["demo", "--hands", "0"], "--hands"),
        (["demo", "--seed", "x"], "--seed"),
    ],
)
def test_bad_input_is_a_one_line_error_and_nonzero_exit(args, message):
    proc = arena_main(*args)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["compare", "--json", "--max-matches", "0", "random", "greedy"],  # click's, 64, JSON
        ["demo", "--set", "bombz=anywhere"],  # the command's own error
        ["replay", "/no/such/file.jsonl"],  # exit 1
    ],
)
def test_arena_main_in_the_test_process_says_what_the_command_says(args):
    """The tests that only check what bad input is told run ``arena.cli.main`` in the
    test process (``testkit.arena_main``): it must give the process's exit code, stdout
    and stderr byte for byte."""
    real, here = arena(*args), arena_main(*args)
    assert (here.returncode, here.stdout, here.stderr) == (
        real.returncode,
        real.stdout,
        real.stderr,
    )


def test_bad_rules_files_name_the_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    proc = arena_main("demo", "--rules", str(bad))
    assert proc.returncode == 2 and str(bad) in proc.stderr
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"preset": "hk", "flush_compare": "biggest"}))
    proc = arena_main("demo", "--rules", str(wrong))
    assert proc.returncode == 2 and "flush_compare" in proc.stderr and str(wrong) in proc.stderr
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    proc = arena_main("demo", "--rules", str(binary))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_help_teaches():
    proc = arena_main("--help")
    assert proc.returncode == 0 and "demo" in proc.stdout and "rules" in proc.stdout
    proc = arena_main("demo", "--help")
    assert "Example: arena demo" in proc.stdout and "--set" in proc.stdout


def test_match_runs_bots_as_processes_and_prints_json(tmp_path):
    record = tmp_path / "m.jsonl"
    proc = arena(
        "match",
        "--sandbox",
        "process",
        "--rules",
        "pusoy",
        "--hands",
        "2",
        "--seed",
        "3",
        "--record",
        str(record),
        "--json",
        "random",
        "greedy",
        "heuristic",
        "greedy",
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert set(result) >= {"match_id", "rules", "seed", "hands", "seats"}
    assert (
        result["rules"]
        == RuleSet.preset("pusoy").replace(match_end="hands", match_end_value=2).to_dict()
    )
    assert [s["bot"] for s in result["seats"]] == ["random", "greedy#1", "heuristic", "greedy#2"]
    for s in result["seats"]:
        assert set(s) >= {"seat", "bot", "score", "place", "forfeit", "faults"}
    assert len(result["hands"]) == 2 and all("cards_left" in h for h in result["hands"])
    replayed = arena_main("replay", "--quiet", str(record))
    assert replayed.returncode == 0 and "all legal; record complete" in replayed.stdout


def test_match_live_table_and_standings():
    proc = arena(
        "match", "--sandbox", "process", "--hands", "2", "greedy", "greedy", "random", "heuristic"
    )
    assert proc.returncode == 0, proc.stderr
    assert "hand  winner" in proc.stdout and "final standings" in proc.stdout
    # the winner column names the bot (it said "seat 3"), and as the standings do: with
    # the same bot twice, which copy ("greedy" alone did not say)
    lines = proc.stdout.splitlines()
    header = next(ln for ln in lines if ln.startswith("hand  winner"))
    assert header.split()[2:] == ["greedy#1", "greedy#2", "random", "heuristic"], header
    rows = [ln.split() for ln in lines if ln[:4].strip() in ("1", "2")]
    assert [r[0] for r in rows] == ["1", "2"], lines
    assert all(r[1] in ("greedy#1", "greedy#2", "random", "heuristic") for r in rows), rows


@pytest.mark.parametrize(
    "args, message",
    [
        (["match", "random", "nobot", "greedy", "greedy"], "bot 'nobot': no such sample bot"),
        (["match", "random", "greedy"], "2 bots given for a 4-player game"),
        (["match", "-r", "nope", "random", "greedy", "greedy", "greedy"], "--rules 'nope'"),
        (["match", "--sandbox", "vm", "random", "greedy", "greedy", "greedy"], "--sandbox"),
        (
            ["match", "--record", "/no/such/dir/x.jsonl", "random", "greedy", "greedy", "greedy"],
            "--record",
        ),
        (["replay", "/no/such/file.jsonl"], "No such file"),
    ],
)
def test_match_bad_input(args, message):
    proc = arena_main(*args)
    assert proc.returncode != 0 and message in proc.stderr and "Traceback" not in proc.stderr


def test_match_with_a_bot_that_fails_to_start(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("raise SystemExit('no luck')\n")
    proc = arena(
        "match",
        "--sandbox",
        "process",
        "--hands",
        "1",
        "--json",
        str(broken),
        "greedy",
        "greedy",
        "greedy",
    )
    assert proc.returncode == 3
    assert "bot 'broken' (seat 0) failed to start" in proc.stderr and "no luck" in proc.stderr
    result = json.loads(proc.stdout)  # stopped before the first hand: nothing to rate
    assert result["seats"][0]["forfeit"] and result["hands"] == [] and result["aborted"]


def test_replay_rejects_garbage(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    proc = arena_main("replay", str(bad))
    assert proc.returncode == 1 and "bad.jsonl:1: not JSON" in proc.stderr


def test_remote_seat_joins_over_tcp_with_the_printed_command(tmp_path):
    """A bot started by hand (as a student would) joins a match over loopback TCP, with
    TLS: the printed command names the arena's CA (made in --tls-dir)."""
    import re

    proc = arena_popen(
        "match",
        "--sandbox",
        "process",
        "--hands",
        "1",
        "--listen",
        "127.0.0.1:0",
        "--tls-dir",
        str(tmp_path / "tls"),
        "--startup-ms",
        "60000",
        "--json",
        "greedy",
        "random",
        "remote:alice",
        "greedy",
    )
    try:
        seen = []
        m = None
        for _ in range(50):  # the connection line; anything else printed first is kept
            line = proc.stderr.readline()
            seen.append(line)
            m = re.search(
                r"python -m bigtwo\.run BOT (--address \S+ --match-id \S+ --seat 2 "
                r"--token=\S+ --ca \S+)",
                line,
            )
            if m or not line:
                break
        assert m, seen
        heuristic = Path(__file__).resolve().parents[2] / "sample_bots" / "heuristic"
        bot = subprocess.run(
            [sys.executable, "-m", "bigtwo.run", str(heuristic), *m.group(1).split()],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert bot.returncode == 0, bot.stderr
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    result = json.loads(out)
    assert result["seats"][2]["bot"] == "alice" and result["seats"][2]["faults"] == []


def test_remote_seat_needs_listen():
    proc = arena("match", "--sandbox", "process", "random", "remote", "greedy", "greedy")
    assert proc.returncode == 2 and "--listen" in proc.stderr
    proc = arena(
        "match",
        "--sandbox",
        "process",
        "--listen",
        "nonsense",
        "random",
        "remote",
        "greedy",
        "greedy",
    )
    assert proc.returncode == 2 and "HOST:PORT" in proc.stderr


@pytest.mark.parametrize("sig, code", [("SIGINT", 130), ("SIGTERM", 143)])
def test_interrupting_a_match_stops_every_bot_and_keeps_the_record(tmp_path, sig, code):
    import signal
    import time

    record = tmp_path / "m.jsonl"
    tmp = Path(tempfile.gettempdir())
    before = set(tmp.glob("arena-*"))
    proc = arena_popen(
        "match",
        "--sandbox",
        "process",
        "--hands",
        "5000",
        "--record",
        str(record),
        "random",
        "greedy",
        "heuristic",
        "greedy",
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (
        not record.exists() or record.read_text().count('"hand_end"') < 2
    ):
        time.sleep(0.2)
    bots = subprocess.run(
        ["pgrep", "-f", "-P", str(proc.pid), "bigtwo.run"], capture_output=True, text=True
    ).stdout.split()
    assert len(bots) == 4
    folders = set(tmp.glob("arena-*")) - before  # the match's private folder
    assert len(folders) == 1
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "interrupted; every bot stopped" in err and str(record) in err
    assert "Traceback" not in err
    time.sleep(0.5)
    for pid in bots:  # every bot process is gone
        assert (
            not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
        )
    assert not any(f.exists() for f in folders)  # socket and seat folders removed
    replayed = arena_main("replay", "--quiet", str(record))
    assert replayed.returncode == 0 and "INCOMPLETE" in replayed.stdout


def _commands():
    """Every command path of the CLI, e.g. ("ladder", "run")."""
    import typer

    from arena.cli import app

    def walk(command, path):
        subs = getattr(command, "commands", None)
        if not subs:
            yield path
            return
        for name, sub in subs.items():
            yield from walk(sub, (*path, name))

    return list(walk(typer.main.get_command(app), ()))


HELP_SWEEP = """
import contextlib, io, json, sys
from arena.cli import main
out = {}
for path in json.loads(sys.argv[1]):
    sys.argv = ["arena", *path, "--help"]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            main()
        except SystemExit as stop:
            assert not stop.code, (path, stop.code)
    out[" ".join(path)] = buf.getvalue()
print(json.dumps(out))
"""
"""Every command's ``--help`` from one process: ``arena.cli.main`` (what ``arena`` and
``python -m arena`` run) called once per command line, its stdout kept.  A process per
command cost half a second each, 32 of them; the test below checks this output equals
the real command's."""


def test_help_names_values_not_python_types_and_wraps_whole_sentences():
    """Typer labelled options with their annotations (<bool> after a switch, <list[str]>,
    <int range>) and kept the docstrings' line breaks, so at another width a sentence
    stopped mid-line.  Every command's --help, at two widths: no Python type label, and
    each sentence of the description is wrapped by the terminal, not by the source."""
    import os
    import re

    commands = _commands()
    assert ("ladder", "run") in commands and ("compare",) in commands
    for width in ("80", "160"):
        env = {**os.environ, "COLUMNS": width}
        sweep = subprocess.run(
            [sys.executable, "-c", HELP_SWEEP, json.dumps(commands)],
            capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        assert sweep.returncode == 0, sweep.stderr
        helps = json.loads(sweep.stdout)
        real = arena("ladder", "run", "--help", env=env)  # the sweep shows what arena shows
        assert real.returncode == 0 and real.stdout == helps["ladder run"], width
        # the README's `ladder run --bots A B C` is in its help, and so is --move-ms (taken
        # but undocumented); compare has the time control of `arena match`
        flat = " ".join(helps["ladder run"].replace("│", " ").split())
        assert "also --bots A B C" in flat and "--move-ms MS [x>=1] Time allowed per move" in flat
        for option in ("--move-ms", "--bank-ms", "--startup-ms", "--max-strikes"):
            assert option in helps["compare"] and option in helps["match"], option
        said = " ".join(helps["match"].replace("│", " ").split())  # hands: one rule, stated
        assert "hands and turns count from 0" in said and "tables count hands from 1" in said
        for path in commands:
            out = helps[" ".join(path)]
            assert out, path
            labels = re.findall(r"<(?:bool|str|int|float|list|path)[^>]*>", out)
            assert not labels, (path, labels)
            if width == "160":  # wide enough that no description line wraps
                head = out.split("╭")[0]
                lines = [ln.rstrip() for ln in head.splitlines()[3:]]
                for line, after in itertools.pairwise(lines):
                    # a short line that stops mid-sentence, continued on the next line
                    # (not indented: an indented one is laid out by hand, a table)
                    cut = (
                        len(line) < 120
                        and line[-1:].isalnum()
                        and after[:1] == " "
                        and after[1:2].islower()
                    )
                    assert not cut, (path, line, after)


def test_a_forfeited_bot_is_listed_last_and_unplaced_in_the_standings():
    """Its seat is played on by the fallback, whose points may beat working bots: the table
    never ranks it above a bot that played its own (it was placed 1st on the fallback's
    win).  The others are placed among themselves, 1, 2, 3."""
    raiser = str(Path(__file__).resolve().parents[1] / "adversarial" / "bots" / "raiser.py")
    proc = arena("match", "--sandbox", "inproc", "--hands", "2", raiser, "random", "greedy",
                 "heuristic")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = [ln.split("│")[1:-1] for ln in proc.stdout.splitlines() if ln.startswith("│")]
    rows = [[c.strip() for c in r] for r in rows if len(r) == 6]
    assert [r[2] for r in rows][-1] == "raiser" and rows[-1][0] == "—" and rows[-1][4] == "yes"
    assert rows[0][0] == "1" and all(r[0] in ("1", "2", "3") for r in rows[:-1])  # ties share
    assert "forfeited, listed last" in proc.stdout
