"""The hostile-bot suite runs every case against each sandbox backend.

Docker cases need an engine and the base image: without them they skip with a one-line
reason, except under ARENA_REQUIRE_DOCKER=1 (CI), where they fail.  Process cases need
bubblewrap able to make a sandbox (as root, or as any user where unprivileged user
namespaces work); without it they skip, or fail under CI=1."""

import os
import subprocess
from pathlib import Path

import pytest

from arena.sandbox.containers import docker_client

from testkit import need_docker


@pytest.fixture(params=["process", pytest.param("docker", marks=pytest.mark.docker)])
def backend(request):
    if request.param == "process":
        from arena.sandbox.process import confinement_problem

        problem = confinement_problem()  # no bwrap, or no user namespaces: rlimits only
        if problem:
            if os.environ.get("CI"):
                pytest.fail(f"CI needs the confined process sandbox, but {problem}")
            pytest.skip(f"process sandbox: {problem}")
    if request.param == "docker":
        need_docker()
    return request.param


def leftovers(match_id: str, bot_file: str) -> list[str]:
    """What a match left behind: containers, processes, control groups."""
    found = []
    client = docker_client(timeout=60)
    if client is not None:
        label = f"org.bigtwo-arena.match={match_id}"
        # the engine's one listing call: the SDK's list() inspects each container after it,
        # and fails on one removed meanwhile (a cut-off start's container is removed by its
        # engine thread once the engine answers, maybe after the match has returned)
        listed = client.api.containers(all=True, filters={"label": label})
        found += [((c.get("Names") or [c["Id"][:12]])[0]).lstrip("/") for c in listed]
    ps = subprocess.run(
        ["pgrep", "-af", f"bigtwo.run .*{bot_file}"], capture_output=True, text=True
    )
    found += [line for line in ps.stdout.splitlines() if _of_match(line, match_id)]
    found += [str(g) for g in seat_cgroups(match_id)]
    return found


def _of_match(ps_line: str, match_id: str) -> bool:
    """Whether a process ``pgrep -a`` found belongs to this match: its environment names
    the match (ARENA_MATCH_ID, which every sandbox gives its bots, their launcher and
    bubblewrap), or cannot be read and it runs as this user.  Another arena's bots on the
    machine (the same sample bots, under another match id or none) are not this test's
    leftovers."""
    try:
        pid = int(ps_line.split()[0])
    except (IndexError, ValueError):
        return False
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:  # gone meanwhile, or another user's process this user cannot read
        try:
            return Path(f"/proc/{pid}").stat().st_uid == os.getuid()
        except OSError:
            return False
    return b"ARENA_MATCH_ID=" + match_id.encode() in environ


def seat_cgroups(match_id: str) -> list[Path]:
    """The process sandbox's control groups of a match's seats that still exist."""
    from arena.sandbox.launch import cgroup_dirs

    found = []
    for group in cgroup_dirs(match_id).values():  # where the seats' groups are made
        prefix = group.name
        if group.parent.is_dir():
            found += [g for g in group.parent.iterdir() if g.name.startswith(prefix)]
    return found
