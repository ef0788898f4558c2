"""Helpers for end-to-end tests: real bot processes, a real referee on a real Unix socket."""

from pathlib import Path

import pytest

from arena.bots import resolve
from arena.match import run_match
from arena.referee.time_control import TimeControl
from bigtwo import RuleSet

BOTS = Path(__file__).resolve().parents[1] / "adversarial" / "bots"


def bot(name: str):
    """A sample bot by name, or one of the purpose-written bots in tests/e2e/bots."""
    path = BOTS / f"{name}.py"
    return resolve(str(path) if path.exists() else name)


async def play(names, rules="hk", hands=1, seed=1, record=None, sandbox="process", **tc):
    """A match of ``names`` (sample bots, or tests/e2e/bots) under ``rules``: its summary."""
    ruleset = RuleSet.preset(rules) if isinstance(rules, str) else rules
    ruleset = ruleset.replace(match_end="hands", match_end_value=hands)
    tc = TimeControl(**{"move_ms": 2000, "bank_ms": 5000, "startup_ms": 20000, **tc})
    return await run_match([bot(n) for n in names], ruleset, seed, tc, sandbox, record)


@pytest.fixture
def record_file(tmp_path):
    return tmp_path / "match.jsonl"
