"""A bot's author sees their bot: what it printed is kept per seat (`arena match --logs`),
named in the result and the record, and the table of faults says why each fault happened
and where in the author's own files — through the real `arena` command, real sandboxed
processes (and containers, when an engine answers)."""

import json
import subprocess
from pathlib import Path

import pytest

from arena.sandbox.output import LOG_CAP, TAIL_KEEP, CappedLog, last_words
from arena.seatlogs import SeatLogs, log_name

from testkit import arena, arena_main, need_docker

BOTS = Path(__file__).resolve().parent / "seat_log_bots"
AUTHORS = Path(__file__).resolve().parent / "authors"


@pytest.fixture(params=["process", pytest.param("docker", marks=pytest.mark.docker)])
def backend(request):
    if request.param == "process":
        from arena.sandbox.process import confinement_problem

        problem = confinement_problem()
        if problem:
            pytest.skip(f"process sandbox: {problem}")
    else:
        need_docker()
    return request.param


def match(backend: str, bot: Path, *extra: str) -> subprocess.CompletedProcess:
    seats = [str(bot), "random", "greedy", "random"]
    options = ["--sandbox", backend, "--hands", "2", "--seed", "5", "--move-ms", "3000"]
    return arena("match", *seats, *options, *extra)


def test_a_bots_stdout_and_stderr_are_in_its_log_named_in_the_result_and_record(backend, tmp_path):
    logs, record = tmp_path / "logs", tmp_path / "m.jsonl"
    proc = match(
        backend, BOTS / "chatty.py", "--logs", str(logs), "--record", str(record), "--json"
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    seat = summary["seats"][0]
    assert seat["faults"] == []
    assert seat["log"] == str((logs / "seat0-chatty.log").resolve())
    text = Path(seat["log"]).read_text()
    assert "STDOUT-LINE choosing among" in text and "STDERR-LINE thinking hard" in text
    # every seat has its own file; the sample bots printed nothing
    assert sorted(p.name for p in logs.iterdir()) == [
        "seat0-chatty.log",
        "seat1-random_1.log",
        "seat2-greedy.log",
        "seat3-random_2.log",
    ]
    assert [s["log"] for s in summary["seats"]] == [
        str((logs / n).resolve())
        for n in (
            "seat0-chatty.log",
            "seat1-random_1.log",
            "seat2-greedy.log",
            "seat3-random_2.log",
        )
    ]
    header = json.loads(record.read_text().splitlines()[0])
    assert header["type"] == "match"
    assert [s["log"] for s in header["seats"]] == [s["log"] for s in summary["seats"]]
    checked = arena_main("replay", "--quiet", str(record))  # the record still checks
    assert checked.returncode == 0, checked.stderr
    shown = match(backend, BOTS / "chatty.py", "--logs", str(logs))  # the table names them
    assert shown.returncode == 0, shown.stderr
    assert "logs (what each bot printed):" in shown.stdout
    assert str(logs / "seat0-chatty.log") in "".join(shown.stdout.split())  # rich wraps it


def test_without_logs_no_log_is_named_and_nothing_is_left(tmp_path):
    proc = match("process", BOTS / "chatty.py", "--json")
    assert proc.returncode == 0, proc.stderr
    assert all("log" not in s for s in json.loads(proc.stdout)["seats"])


def test_a_raising_bot_shows_its_exception_and_its_own_lines_in_the_table(backend, tmp_path):
    path = AUTHORS / "index_error.py"
    proc = match(backend, path, "--logs", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())  # rich wraps long lines
    assert "crash ×3" in out
    assert "IndexError: tuple index out of range" in out
    assert f"{path}:8 in act → {path}:12 in pick" in out
    assert "/bot/" not in out
    # the full traceback is in its log, with the author's paths
    log = (tmp_path / "seat0-index_error.log").read_text()
    assert "Traceback (most recent call last)" in log
    assert f'File "{path}", line 12, in pick' in log and '"/bot/' not in log


def test_a_bot_whose_process_dies_shows_where_in_its_code(backend):
    path = BOTS / "base_exc.py"
    proc = match(backend, path)
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    assert "Boom: out of the whole program" in out
    assert f"{path}:16 in act → {path}:11 in deeper" in out, out


def test_act_returning_none_shows_the_reason_in_the_table_not_only_illegal():
    proc = match("process", BOTS / "none_bot.py")
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    assert "illegal ×3" in out
    # one line for the repeated fault, with where it happened and why
    assert "seat 0 none_bot: illegal ×3 (hand 1 turn" in out
    assert "act() returned None, which is not a play" in out
    assert out.count("act() returned None") == 1
    # one numbering each, as --help says: the table's "hand 1" is JSON's hand 0 (a list
    # index: hands[0]), the same deal (same seed)
    data = json.loads(match("process", BOTS / "none_bot.py", "--json").stdout)
    assert [f["hand"] for f in data["seats"][0]["faults"]] == [0, 0, 0]
    assert data["hands"][0]["hand"] == 0


def test_log_names_of_hostile_bot_names_stay_in_the_folder(tmp_path):
    hostile = [
        "../../etc/passwd",
        "..",
        "a/b\\c",
        "\x1b]0;owned\x07\x1b[2J",
        "evil\u202egnp.exe",
        "",
        "/" * 300,
        "x" * 500,
        "name\nwith\rnewlines\x00",
    ]
    names = [log_name(i, n) for i, n in enumerate(hostile)]
    for i, name in enumerate(names):
        assert name.startswith(f"seat{i}-") and name.endswith(".log")
        assert "/" not in name and "\\" not in name and ".." not in name
        assert all(c.isascii() and (c.isalnum() or c in "._-") for c in name), name
        assert len(name) <= 60
    assert names[0] == "seat0-etc_passwd.log" and names[1] == "seat1-bot.log"
    logs = SeatLogs(tmp_path / "logs", hostile, [True] * len(hostile))
    made = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert made == sorted(names) and list(tmp_path.iterdir()) == [tmp_path / "logs"]
    # a symlink planted where a log goes is not followed
    target = tmp_path / "victim"
    target.write_text("keep")
    (tmp_path / "logs" / names[2]).unlink()
    (tmp_path / "logs" / names[2]).symlink_to(target)
    with pytest.raises(OSError):
        logs.append(2, b"overwrite")
    assert target.read_text() == "keep"


def test_a_capped_log_keeps_its_head_a_marker_and_its_tail():
    log = CappedLog()
    log.write(b"FIRST\n")
    for _ in range(40):
        log.write(b"x" * 100_000)
    log.write(b"\nLAST WORDS\n")
    value = log.getvalue()
    assert value.startswith(b"FIRST\n") and value.endswith(b"LAST WORDS\n")
    assert f"[log truncated at {LOG_CAP} bytes".encode() in value
    assert len(value) <= LOG_CAP + TAIL_KEEP + 200
    small = CappedLog()
    small.write(b"hello\n")
    assert small.getvalue() == b"hello\n" and not small.truncated


def test_last_words_name_the_bots_own_frames():
    stderr = (
        b"noise\nTraceback (most recent call last):\n"
        b'  File "/usr/lib/python3/x.py", line 3, in run\n'
        b'  File "/bot/bot.py", line 7, in act\n    deeper()\n'
        b'  File "/bot/helpers.py", line 2, in deeper\n    raise ValueError("no")\n'
        b"ValueError: no\n"
    )
    assert last_words(stderr) == (
        "ValueError: no at /bot/bot.py:7 in act → /bot/helpers.py:2 in deeper"
    )
    assert last_words(b"just a line\n") == "just a line"
    assert last_words(b"") == ""
