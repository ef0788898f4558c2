"""The control groups of the process sandbox's seats, as the arena (root) sees them: which
controllers it may use, how many of a seat's processes its memory limit killed, and killing
and removing a seat's groups — at the seat's end, and after an arena that was killed.

The launcher (:mod:`.launch`, run on its own with no package around it) makes each seat's
groups and names where they live (:func:`.launch.cgroup_dirs`); this module is the rest of
their life, kept out of :mod:`.process` so that the backend reads as starting and watching a
bot, not as cgroup file formats."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from .launch import CGROUP_PREFIX, cgroup_dirs


def controllers() -> set[str]:
    """The control group controllers the arena can use for its seats (root only)."""
    if os.geteuid() != 0:
        return set()
    probe = cgroup_dirs("probe")
    if "v2" in probe:
        try:
            text = (Path("/sys/fs/cgroup") / "cgroup.controllers").read_text()
        except OSError:
            return set()
        return set(text.split()) & {"memory", "pids", "cpu"}
    return set(probe)


def oom_kills(groups: dict[str, Path]) -> int:
    """How many processes a seat's memory limit killed (its control group's count; 0 when
    the count cannot be read)."""
    count = 0
    for controller, group in groups.items():
        name = {"memory": "memory.oom_control", "v2": "memory.events"}.get(controller)
        if name is None:
            continue
        try:
            for line in (group / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    count = max(count, int(value))
        except (OSError, ValueError):
            pass
    return count


def kill_cgroup(name: str, timeout: float = 5.0, remove: bool = True) -> None:
    """Kill every process left in the seat's control groups (whatever it did to escape its
    process group), then remove the groups."""
    deadline = time.monotonic() + timeout
    for group in cgroup_dirs(name).values():
        if not group.is_dir():
            continue
        with contextlib.suppress(OSError):
            (group / "cgroup.kill").write_text("1")  # cgroup v2, Linux 5.14+
        while time.monotonic() < deadline:
            try:
                pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
            except OSError:
                break
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)
        if remove:
            while True:
                try:
                    group.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # the last processes are still exiting
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.02)


def remove_leftover_cgroups() -> list[str]:
    """Remove the seats' control groups that a killed arena left behind (empty: its bots
    died with it); a group with processes belongs to a running match and stays, and so
    does one made in the last minute.  Also the earlier layout's ``bigtwo-arena/NAME``."""
    removed = []
    for place in {g.parent for g in cgroup_dirs("x").values()}:
        old = place / "bigtwo-arena"
        groups = list(place.glob(f"{CGROUP_PREFIX}*")) + (
            [*old.iterdir(), old] if old.is_dir() else []
        )
        for group in groups:
            if not group.is_dir():
                continue
            try:
                if (group / "cgroup.procs").read_text().strip():
                    continue
                if time.time() - group.stat().st_mtime < 60:  # a seat being set up
                    continue
                group.rmdir()
                removed.append(str(group))
            except OSError:
                continue
    return removed
