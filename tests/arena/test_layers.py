"""The layer contracts (pyproject.toml, ``[tool.importlinter]``; why each holds:
docs/architecture.md, "Layer contracts") hold for the code as it stands: the rules engine
imports only the standard library, the SDK never the arena, each arena layer only those
below it, and no two modules of the referee or the sandbox (or two of the arena's packages)
import each other in a loop.  CI runs ``lint-imports`` too; this test makes the README's
test command check the same."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_layer_contracts_hold():
    pytest.importorskip("importlinter", reason="import-linter is in the test extra")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "sdk")])}
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports_command; "
            "sys.exit(lint_imports_command())",
            "--no-cache",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout, proc.stdout
