"""The ``docker`` backend: one container per bot per match, locked down.

Defaults: no network and no IPC namespace sharing; the seat's socket folder bind-mounted
read-only (the bot can connect, but not create, replace or link anything there); a read-only
root with a small size-limited tmpfs ``/tmp``; user 65534; every capability dropped;
no-new-privileges; the arena's own seccomp profile (``seccomp.json``: also denies io_uring
and AF_VSOCK); memory limit with swap equal to it; a CPU quota and the weight of one
process; a pids limit; open-files and core ulimits; a capped log (about 1 MiB: a dying
bot's last words name its fault, and ``arena match --logs`` keeps it for its author).
The seat token goes to that container only.  Containers are labelled with the match and
seat and removed at match end whatever happened; ``arena sandbox gc`` removes leftovers of
a crashed run."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..bots import BotSpec
from .base import BotHandle, Credentials, Sandbox, SandboxUnavailable
from .images import DEFAULT_BASE, LABEL, ImageBuilder
from .output import LOG_CAP, from_engine, last_words

SECCOMP = Path(__file__).with_name("seccomp.json")
SOCKET_IN_CONTAINER = "/run/arena"


@dataclass(frozen=True)
class ContainerLimits:
    """Resource limits of one bot container (recorded with the match)."""

    memory_mb: int = 256
    cpus: float = 1.0
    pids: int = 64
    nofile: int = 64
    tmpfs_mb: int = 16

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def docker_client(timeout: int = 30) -> Any:
    """A client for the local engine, or None when no engine answers."""
    try:
        import docker

        client = docker.from_env(timeout=timeout)
        client.ping()
        return client
    except Exception:
        return None


_CGROUP_DRIVERS: dict[str | None, str | None] = {}
"""Each engine's cgroup driver (by the client's address): ``docker info`` is a slow call."""


def _cpu_parent(client: Any) -> str | None:
    """Where each container's control group goes, for the CPU scheduler's sake.  By default
    the engine puts every container under one ``/docker`` group that weighs, against the
    rest of the machine, as much as a single process: with other work running, a busy
    container then halves what an honest neighbour gets (measured: a hog of 24 threads and
    three busy processes elsewhere turned 2-8 of 45 honest 250 ms moves into timeouts at
    1 s).  Directly under the root, each container weighs like one process, whatever it
    runs.  Only with the ``cgroupfs`` driver (the ``systemd`` driver needs a slice)."""
    url = getattr(getattr(client, "api", None), "base_url", None)
    if url not in _CGROUP_DRIVERS:  # asked once per engine, not at every match
        try:
            _CGROUP_DRIVERS[url] = client.info().get("CgroupDriver")
        except Exception:
            return None
    return "/" if _CGROUP_DRIVERS[url] == "cgroupfs" else None


ENGINE_CALLS = ThreadPoolExecutor(max_workers=64, thread_name_prefix="docker-call")
"""Where every other blocking engine call runs (build, create, start, inspect, logs,
remove): a pool of the arena's own, never the loop's default one.  Where each call runs,
and why none can starve another:

- ``container.wait`` lasts a bot's whole life, so each gets a thread of its own
  (``in_own_thread``).  In the loop's default pool (6 workers on a 2-core machine) one
  wait per seat, times the matches in parallel and the next segment's bots, used every
  worker; the next ``container.start`` then queued for ever, a seat stayed "Created" and
  ``arena ladder run --jobs 3`` hung at its first match.
- Every other call is short, or bounded by the client's timeout when the engine stalls
  (30 s); 64 workers hold jobs x seats x 2 (a segment's bots and the next one's) starts
  of 8 parallel matches all stalled at once, and the default pool stays free for the
  rest of the arena.  The engine's event stream would save the wait threads, but one
  blocked thread per live container is cheap, and a stream that breaks loses exits.

At interpreter exit the pool's threads are joined: a start still in flight at Ctrl-C ends
(at worst at the client's timeout) and removes what it made (see ``DockerSandbox.start``)."""


async def engine_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in ``ENGINE_CALLS``."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(ENGINE_CALLS, functools.partial(fn, *args, **kwargs))


def _remove_labelled(client: Any, labels: dict[str, str], settle_s: float = 0.0) -> None:
    """Remove the containers carrying all of ``labels`` (one seat's start in one match),
    in an engine thread, until a listing finds none left — and none for ``settle_s``
    seconds more.

    A loaded engine is slow, not absent: a forced removal can outlast the client's
    timeout, and a create whose reply timed out can still finish a moment later (seen in
    the parallel suite: four containers left behind by one cut-off start).  So a removal
    that fails is tried again, and after a failed create the labels are looked at again
    until the engine has had time to finish what it was asked.  The tries end
    ``REMOVE_RETRY_S`` after that: an engine that does not answer at all costs one more
    client timeout, not a dozen (each listing call waits the client's full timeout)."""
    import time

    wanted = [f"{k}={v}" for k, v in labels.items()]
    deadline = time.monotonic() + max(settle_s, 0.0)
    give_up = deadline + REMOVE_RETRY_S
    for attempt in itertools.count():
        try:
            left = client.api.containers(all=True, filters={"label": wanted})
            failed = False
            for c in left:
                try:
                    client.api.remove_container(c["Id"], force=True)
                except Exception as exc:  # gone meanwhile is done; anything else: again
                    failed = failed or getattr(exc, "status_code", None) != 404
        except Exception:
            left, failed = [], True
        if not left and not failed and time.monotonic() >= deadline:
            return
        if time.monotonic() >= give_up:
            return  # `arena sandbox gc` removes what an absent engine kept
        time.sleep(min(1.0 + attempt, 5.0))


REMOVE_RETRY_S = 30.0
"""How long :func:`_remove_labelled` tries again past its settling time."""


CREATE_SETTLE_S = 30.0
"""After a create that failed (its reply lost or timed out), how long the seat's labels are
watched for a container the engine finishes making all the same."""


def _reply_lost(exc: BaseException) -> bool:
    """Whether a failed engine call may still take effect: its reply timed out or its
    connection broke (the engine may be working on it), not an answer that refused it."""
    import requests

    return isinstance(exc, requests.exceptions.Timeout | requests.exceptions.ConnectionError)


class _Handover:
    """A container made in an engine thread for a task that may give up meanwhile (its
    start cut off by the startup allowance, Ctrl-C): handed over, or — when the task was
    cancelled — removed by whichever side comes last, so nothing is left behind."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.abandoned = False
        self.container: Any = None

    def deliver(self, container: Any) -> bool:
        """From the engine thread: False when nobody wants it any more."""
        with self.lock:
            if not self.abandoned:
                self.container = container
            return not self.abandoned

    def abandon(self) -> Any:
        """From the cancelled task: the container already handed over, if any."""
        with self.lock:
            self.abandoned = True
            return self.container


async def in_own_thread(fn: Callable[[], Any]) -> Any:
    """Run a blocking engine call that may last the whole match (``container.wait``) in a
    thread of its own (see ``ENGINE_CALLS``)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            future.set_result(value) if ok else future.set_exception(value)

    def run() -> None:
        try:
            ok, value = True, fn()
        except BaseException as exc:  # handed to the waiting task
            ok, value = False, exc
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(settle, ok, value)

    threading.Thread(target=run, name="docker-wait", daemon=True).start()
    return await future


class DockerHandle(BotHandle):
    def __init__(self, container: Any, keep_output: bool = False) -> None:
        self.container = container
        self.keep_output = keep_output

    async def wait(self) -> tuple[str, bool]:
        result = await in_own_thread(self.container.wait)
        code = result.get("StatusCode", -1)
        try:
            await engine_call(self.container.reload)
            state = self.container.attrs.get("State", {})
        except Exception:
            state = {}
        if state.get("OOMKilled"):
            return f"killed by the memory limit (OOMKilled), exit code {code}", True
        tail = await engine_call(self.stderr_tail)
        return f"container exited with code {code}" + (f": {tail}" if tail else ""), code != 0

    def stderr_tail(self) -> str:
        try:
            data = self.container.logs(stdout=False, stderr=True, tail=80)  # a traceback
        except Exception:
            return ""
        return last_words(data)

    def _read_output(self) -> None:
        """The engine's capped log of the container (stdout and stderr), before removal:
        the bot killed first (reading the log of a bot still printing took seconds)."""
        with contextlib.suppress(Exception):  # it may have ended already
            self.container.kill()
        data = self.container.logs(stdout=True, stderr=True)
        with contextlib.suppress(Exception):
            self.container.reload()  # LogPath is known once the container started
        path = self.container.attrs.get("LogPath") or ""
        rotated = bool(path) and Path(path + ".1").exists()  # local engine, as root
        self.output = from_engine(data, rotated, LOG_CAP)

    async def stop(self) -> None:
        if self.keep_output and self.output is None:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self._read_output)
        with contextlib.suppress(Exception):
            await engine_call(self.container.remove, force=True)


class DockerSandbox(Sandbox):
    name = "docker"
    exit_grace_s = 5.0
    late_start_s = 0.0  # a cancelled start removes what it makes (see start)

    def __init__(
        self, client: Any = None, limits: ContainerLimits | None = None, base: str = DEFAULT_BASE
    ) -> None:
        self.client = client or docker_client()
        if self.client is None:
            raise SandboxUnavailable(
                "--sandbox docker: no Docker engine answers (is dockerd running? "
                "--sandbox process works without one)"
            )
        self.limits = limits or ContainerLimits()
        self.limits_dict = self.limits.to_dict()
        self.builder = ImageBuilder(self.client, base)
        self.images: dict[BotSpec, str] = {}
        self.seccomp = json.dumps(json.loads(SECCOMP.read_text(encoding="utf-8")))
        self.cgroup_parent = _cpu_parent(self.client)

    async def prepare(self, bots: list[BotSpec]) -> None:
        for bot in bots:
            if bot.remote or bot in self.images:
                continue
            image = await engine_call(self.builder.ensure, bot)
            self.images[bot] = image.tag

    def options(self, creds: Credentials, socket_dir: str, labels: dict[str, str]) -> dict:
        lim = self.limits
        import docker.types

        return {
            "detach": True,
            "network_mode": "none",
            "ipc_mode": "none",
            "read_only": True,
            "tmpfs": {"/tmp": f"rw,nosuid,nodev,noexec,size={lim.tmpfs_mb}m,mode=1777"},
            "user": "65534:65534",
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges:true", f"seccomp={self.seccomp}"],
            "mem_limit": f"{lim.memory_mb}m",
            "memswap_limit": f"{lim.memory_mb}m",
            # CPU: a quota of ``cpus`` and the weight of one process of the machine (see
            # _cpu_parent), so a busy neighbour takes at most its own share
            "nano_cpus": int(lim.cpus * 1e9),
            "cpu_shares": 1024,
            **({"cgroup_parent": self.cgroup_parent} if self.cgroup_parent else {}),
            "pids_limit": lim.pids,
            "ulimits": [
                docker.types.Ulimit(name="nofile", soft=lim.nofile, hard=lim.nofile),
                docker.types.Ulimit(name="core", soft=0, hard=0),
            ],
            # a capped log: a bot that dies can say why (its last words), and its author
            # can read what it printed (arena match --logs); two files, so the latest
            # half-cap at least survives a rotation
            "log_config": docker.types.LogConfig(
                type="json-file", config={"max-size": f"{LOG_CAP >> 11}k", "max-file": "2"}
            ),
            "environment": {
                **creds.env(),
                "ARENA_ADDRESS": f"unix://{SOCKET_IN_CONTAINER}/referee.sock",
            },
            "volumes": {socket_dir: {"bind": SOCKET_IN_CONTAINER, "mode": "ro"}},
            "labels": labels,
            "hostname": f"seat{creds.seat}",
        }

    async def start(self, bot: BotSpec, creds: Credentials, workdir: str) -> BotHandle:
        """Create and start the bot's container.  Cancelled (the startup allowance ran out,
        Ctrl-C), it still leaves nothing: the engine thread removes what it makes once the
        engine answers (see ``_Handover``), and a create that failed — timed out, say —
        is followed by a removal of whatever the engine made under this seat's labels."""
        if bot not in self.images:
            await self.prepare([bot])
        socket_path = creds.address.removeprefix("unix://")
        labels = {
            f"{LABEL}.managed": "1",
            f"{LABEL}.match": creds.match_id,
            f"{LABEL}.seat": str(creds.seat),
            f"{LABEL}.bot": bot.name,
        }
        opts = self.options(creds, str(Path(socket_path).parent), labels)

        handover = _Handover()

        def create_and_start() -> Any:
            try:
                container = self.client.containers.create(self.images[bot], **opts)
            except BaseException as exc:  # the engine may have made it all the same
                if _reply_lost(exc):  # watched in the background: the error goes on now
                    ENGINE_CALLS.submit(_remove_labelled, self.client, labels, CREATE_SETTLE_S)
                else:
                    _remove_labelled(self.client, labels)
                raise
            try:
                container.start()
            except BaseException:
                _remove_labelled(self.client, labels)
                raise
            if not handover.deliver(container):  # its caller gave up meanwhile
                _remove_labelled(self.client, labels)
            return container

        async def started() -> Any:
            try:
                return await engine_call(create_and_start)
            except asyncio.CancelledError:
                made = handover.abandon()
                if made is not None:  # handed over just as its caller gave up
                    ENGINE_CALLS.submit(_remove_labelled, self.client, labels)
                raise

        return DockerHandle(await started(), self.keep_output)


def match_alive(folder: Path) -> bool:
    """A match folder whose referee still answers on its private socket (``referee/``).
    Never on a seat's socket: each accepts one connection, which must be the bot's (a
    folder without a private socket is from an older arena, whose seat sockets are probed)."""
    import socket

    private = folder / "referee" / "referee.sock"
    probes = [private] if private.parent.is_dir() else list(folder.glob("sock*/referee.sock"))
    for sock_path in probes:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(1)
            try:
                s.connect(str(sock_path))
                return True
            except OSError:
                continue
    return False


def remove_leftovers(client: Any) -> list[str]:
    """Remove the containers the arena labelled whose match is no longer running."""
    removed = []
    # the engine's one listing call (the SDK's list() inspects each container after it, and
    # fails when a match ending meanwhile removes one)
    for c in client.api.containers(all=True, filters={"label": f"{LABEL}.managed=1"}):
        mounts = [
            m.get("Source", "")
            for m in c.get("Mounts") or []
            if m.get("Destination") == SOCKET_IN_CONTAINER
        ]
        if mounts and match_alive(Path(mounts[0]).parent):
            continue
        with contextlib.suppress(Exception):
            client.api.remove_container(c["Id"], force=True)
            removed.append(((c.get("Names") or [c["Id"][:12]])[0]).lstrip("/"))
    return removed
