"""Clean up after runs that were killed: the one place that knows every kind of thing a
match leaves behind when its referee dies without stopping its bots, so that ``arena
sandbox gc`` (and a future web layer's housekeeping) run the same clean-up."""

from __future__ import annotations

import shutil
from dataclasses import dataclass


@dataclass
class Collected:
    """What :func:`collect` removed; ``containers`` is None when no Docker engine answered."""

    containers: int | None
    folders: int
    cgroups: int


def collect() -> Collected:
    """Remove the arena's containers whose match is over, its match folders whose referee no
    longer answers (a running match is left alone), and the process sandbox's empty
    control groups."""
    from .cgroups import remove_leftover_cgroups
    from .containers import docker_client, match_alive, remove_leftovers

    client = docker_client()
    containers = len(remove_leftovers(client)) if client is not None else None
    from ..referee.match_folder import match_folders

    folders = [f for f in sorted(match_folders()) if not match_alive(f)]
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    return Collected(containers, len(folders), len(remove_leftover_cgroups()))
