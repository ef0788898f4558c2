"""The SDK installed as a user installs it — ``pip install ./sdk``, not editable, into a
fresh virtual environment, away from the repository — still has its sample bots: by name
(``bigtwo.samples``, the Gymnasium wrapper's opponents) and as files to copy, and the arena
finds the same bots through it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import json, sys
if len(sys.argv) == 1:  # the SDK alone, as a bot author has it: no arena to lean on
    sys.modules["arena"] = None
import bigtwo
out = {"sdk": bigtwo.__file__}
try:
    from bigtwo.env.gym import sample_bot
except ImportError:  # no gymnasium here
    out["gym"] = None
else:
    try:
        out["gym"] = type(sample_bot("greedy")).__name__
    except Exception as exc:
        out["gym"] = f"{type(exc).__name__}: {exc}"
from bigtwo.loader import load_bot_class
from bigtwo.samples import names, path

out["found"] = {n: str(path(n)) for n in names()}
out["classes"] = {n: load_bot_class(p).__name__ for n, p in out["found"].items()}
if len(sys.argv) > 1:  # the arena from the checkout, the SDK from the venv
    from arena.bots import is_sample_bot, resolve

    spec = resolve("heuristic")
    out["arena"] = [str(spec.path), is_sample_bot(spec)]
print(json.dumps(out))
"""


def _build_backend_problem() -> str | None:
    """Why this interpreter cannot build the SDK offline (no build isolation), or None."""
    try:
        import setuptools
    except ImportError:
        return "setuptools is not installed (the SDK's build backend)"
    version = tuple(int(p) for p in setuptools.__version__.split(".")[:2] if p.isdigit())
    if version < (64, 0):
        return f"setuptools {setuptools.__version__} is older than the SDK's >=64"
    if version < (70, 1):  # bdist_wheel came into setuptools with 70.1
        try:
            import wheel  # noqa: F401
        except ImportError:
            return f"setuptools {setuptools.__version__} builds wheels only with `wheel`"
    return None


@pytest.mark.slow
def test_a_non_editable_install_has_the_sample_bots(tmp_path):
    problem = _build_backend_problem()
    if problem:
        pytest.skip(problem)
    venv = str(tmp_path / "venv")  # no pip of its own: the host's, with its setuptools
    venv_python = tmp_path / "venv" / "bin" / "python"
    try:
        subprocess.run(
            [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv],
            check=True,
            capture_output=True,
            timeout=300,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"no virtual environment can be made here: {exc}")
    # a copy of the SDK alone, as an sdist holds it: nothing of the checkout around it
    sdk = tmp_path / "sdk"
    shutil.copytree(
        ROOT / "sdk",
        sdk,
        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"),
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_"))}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    installed = subprocess.run(
        [
            str(venv_python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            str(sdk),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    shutil.rmtree(sdk)  # what the venv holds is all there is

    def probe(*args: str, pythonpath: str | None = None) -> dict:
        run_env = dict(env, PYTHONPATH=pythonpath) if pythonpath else env
        proc = subprocess.run(
            [str(venv_python), "-c", PROBE, *args],
            capture_output=True,
            text=True,
            timeout=300,
            env=run_env,
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout.splitlines()[-1])

    site = tmp_path / "venv" / "lib"
    said = probe()
    assert Path(said["sdk"]).is_relative_to(site), said  # the installed copy, not the checkout
    if said["gym"] is not None:  # the Gymnasium wrapper's opponents, by name
        assert said["gym"] == "GreedyBot", said
    assert {"random", "greedy", "heuristic", "expert"} <= set(said["found"]), said
    for name, file in said["found"].items():
        assert Path(file).is_relative_to(site), (name, file)
        assert Path(file).name == "bot.py" and (Path(file).parent / "README.md").is_file()
    assert said["classes"]["greedy"] == "GreedyBot", said

    # the arena (from the checkout) resolves a sample bot's name to the installed SDK's file
    said = probe("arena", pythonpath=str(ROOT))
    path, sample = said["arena"]
    assert Path(path).is_relative_to(site) and sample, said


def test_a_sample_bots_name_is_never_a_path():
    from bigtwo import samples

    assert {"random", "greedy", "heuristic", "expert"} <= set(samples.names())
    greedy = samples.path("greedy")
    assert greedy is not None and greedy.name == "bot.py" and samples.is_sample(greedy)
    for name in ("../greedy", "greedy/..", "..", ".", "", "greedy/bot.py", "/etc", "nope"):
        assert samples.path(name) is None, name
    assert not samples.is_sample(ROOT / "sdk" / "bigtwo" / "samples.py")
