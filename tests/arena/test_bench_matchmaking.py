"""bench/matchmaking.py runs: its --quick mode end to end (a real process), JSON out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "matchmaking.py"


@pytest.mark.slow  # ~7 s of CPU, but over 20 s on a busy machine
def test_matchmaking_bench_quick_runs():
    out = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    (result,) = report["results"]
    for scheduler in ("planner", "uniform"):
        figures = result[scheduler]
        assert set(figures) >= {"spearman", "top10", "top3", "never_seated_at_end"}
    assert result["planner"]["never_seated_after_round_1"] == 0
    assert "run 2/2" in out.stderr  # progress is printed


def test_matchmaking_bench_refuses_bad_arguments():
    out = subprocess.run(
        [sys.executable, str(BENCH), "--sizes", "30,x"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 2 and "--sizes" in out.stderr
    assert "Traceback" not in out.stderr
