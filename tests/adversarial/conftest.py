"""The hostile-bot suite runs every case against each sandbox backend.

Docker cases need an engine and the base image: without them they skip with a one-line
reason, except under ARENA_REQUIRE_DOCKER=1 (CI), where they fail."""

import os
import subprocess

import pytest

from arena.sandbox.containers import docker_client
from arena.sandbox.images import DEFAULT_BASE

REQUIRE_DOCKER = os.environ.get("ARENA_REQUIRE_DOCKER") == "1"


def _docker_problem() -> str | None:
    client = docker_client(timeout=5)
    if client is None:
        return "no Docker engine answers"
    try:
        client.images.get(DEFAULT_BASE)
    except Exception:
        return f"base image {DEFAULT_BASE} missing (docker/make-base-image.sh builds it)"
    return None


@pytest.fixture(params=["process", "docker"])
def backend(request):
    if request.param == "process":
        from arena.sandbox.process import isolation_note

        note = isolation_note()  # not root, or not Linux: limits only, no confinement
        if note:
            if os.environ.get("CI"):
                pytest.fail(f"CI needs the confined process sandbox, but {note}")
            pytest.skip(note)
    if request.param == "docker":
        problem = _docker_problem()
        if problem:
            if REQUIRE_DOCKER:
                pytest.fail(f"ARENA_REQUIRE_DOCKER=1 but {problem}")
            pytest.skip(problem)
    return request.param


def leftovers(match_id: str, bot_file: str) -> list[str]:
    """What a match left behind: containers, processes, control groups."""
    found = []
    client = docker_client(timeout=5)
    if client is not None:
        label = f"org.bigtwo-arena.match={match_id}"
        found += [c.name for c in client.containers.list(all=True, filters={"label": label})]
    ps = subprocess.run(
        ["pgrep", "-af", f"bigtwo.run .*{bot_file}"], capture_output=True, text=True
    )
    found += [line for line in ps.stdout.splitlines() if line.strip()]
    for base in ("/sys/fs/cgroup/pids/bigtwo-arena", "/sys/fs/cgroup/bigtwo-arena"):
        if os.path.isdir(base):
            found += [d for d in os.listdir(base) if d.startswith(match_id)]
    return found
