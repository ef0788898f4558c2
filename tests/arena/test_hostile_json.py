"""Hostile JSON is refused with one line naming where, never a traceback: a record line of
100,000 ``[`` (``json.loads`` recurses once a level and raises RecursionError, which no
caller caught), and the same nesting in every other place the arena parses someone else's
JSON — a rules file, a stored record the web viewer reads, a Play page's request."""

from __future__ import annotations

import gzip
import json

import pytest

from bigtwo import RulesError, RuleSet
from bigtwo.record import RecordError, read_events

from testkit import arena as run_arena

DEEP = "[" * 100_000


def _one_line_refusal(proc, where: str) -> None:
    err = proc.stderr.strip()
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    assert len(err.splitlines()) == 1, err
    assert where in err and "nested deeper than" in err, err


def test_arena_replay_of_a_deeply_nested_line_is_one_line_naming_it(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text(DEEP + "\n")
    proc = run_arena("replay", str(path), timeout=120)
    _one_line_refusal(proc, f"{path}:1")


def test_a_deep_object_a_long_line_and_bad_text_are_record_errors(tmp_path, monkeypatch):
    deep_obj = tmp_path / "obj.jsonl"
    deep_obj.write_text('{"a":' * 5000 + "1" + "}" * 5000 + "\n")
    with pytest.raises(RecordError, match=r"obj.jsonl:1: nested deeper"):
        list(read_events(deep_obj))
    monkeypatch.setattr("bigtwo.record.MAX_LINE_CHARS", 1000)  # 32 Mi in earnest
    long = tmp_path / "long.jsonl"
    long.write_text('{"type":"x","pad":"' + "a" * 1_100 + '"}\n')
    with pytest.raises(RecordError, match=r"long.jsonl:1: a line longer than"):
        list(read_events(long))


def test_the_rules_file_and_rules_text_refuse_deep_nesting(tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text("[" * 5000)  # under the size cap: the depth is what is refused
    proc = run_arena("match", "--rules", str(rules), "random", "random", "random", "random")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert str(rules) in proc.stderr and "nested deeper" in proc.stderr, proc.stderr
    with pytest.raises(RulesError, match="nested deeper"):
        RuleSet.from_json(DEEP)


def test_the_web_viewer_reads_a_deep_stored_line_as_a_bad_line():
    from arena.web.replay_data import replay_data, stored_events

    data = gzip.compress(b'{"type":"match"}\n' + DEEP.encode() + b"\n")
    events = stored_events(data)
    assert events[1] is None
    out = replay_data(events)
    assert out["valid"] is False and out["problem"]


def test_brackets_inside_strings_do_not_count_and_escapes_are_followed():
    from bigtwo.jsontext import JSONTextError, loads_bounded, nesting_depth

    text = json.dumps({"a": '[[[[\\"[[[', "b": [[["x"]]]})
    assert nesting_depth(text) == 4
    assert loads_bounded(text, max_depth=4)["b"] == [[["x"]]]
    with pytest.raises(JSONTextError):
        loads_bounded(text, max_depth=3)
    with pytest.raises(ValueError):  # a JSONTextError is a ValueError: old callers hold
        loads_bounded("[" * 2000 + "]" * 2000)
