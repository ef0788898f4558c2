"""The sandbox backends by name — what ``--sandbox`` takes — and the one place that picks
and builds one (``auto``: docker when an engine answers, else process).

Apart from :mod:`.base` because the backends implement that interface and this module
builds them: in one file they would import each other.  Each backend is imported only when
it is chosen (the Docker library, say, is slow to load and unused by a process match)."""

from __future__ import annotations

from typing import Any

from .base import Sandbox

SANDBOXES = ("auto", "docker", "process", "inproc")


def choose_sandbox(name: str) -> str:
    """The backend ``name`` stands for: ``auto`` is docker when an engine answers and has
    the base image, else process; any other name is itself.  Commands say which ``auto``
    chose, so that nobody believes their bots confined when they are not."""
    if name != "auto":
        return name
    from .containers import docker_client
    from .images import DEFAULT_BASE

    client = docker_client(timeout=20)
    if client is not None:
        try:
            client.images.get(DEFAULT_BASE)
            return "docker"
        except Exception:
            pass
    return "process"


def make_sandbox(
    name: str, memory_mb: int | None = None, pids: int | None = None, cpus: float | None = None
) -> Sandbox:
    """The backend by name; ``auto`` is docker when an engine answers, else process.
    Limits left None keep the backend's defaults."""
    name = choose_sandbox(name)
    if name == "docker":
        from .containers import ContainerLimits, DockerSandbox

        base = ContainerLimits()
        limits = ContainerLimits(
            memory_mb=memory_mb or base.memory_mb,
            pids=pids or base.pids,
            cpus=cpus or base.cpus,
        )
        return DockerSandbox(limits=limits)
    if name == "process":
        from .process import ProcessSandbox

        kwargs: dict[str, Any] = {
            k: v for k, v in (("memory_mb", memory_mb), ("pids", pids), ("cpus", cpus)) if v
        }
        return ProcessSandbox(**kwargs)
    if name == "inproc":
        from .inproc import InprocSandbox

        return InprocSandbox()
    raise ValueError(f"unknown sandbox {name!r} (choose one of {', '.join(SANDBOXES)})")
