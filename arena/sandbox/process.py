"""The ``process`` backend: each bot a child process in its own session, confined by
:mod:`arena.sandbox.launch` (namespaces, a pids control group, a read-only view of the
machine with a private tmpfs ``/tmp``, no capabilities, seccomp, rlimits) and killed with
everything it started at match end.  Weaker than Docker: the bot runs as the arena's user
and can read the machine's files."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path

import bigtwo

from ..bots import BotSpec
from .base import BotHandle, Credentials, Sandbox

STDERR_CAP = 64 * 1024


class ProcessHandle(BotHandle):
    def __init__(self, proc: asyncio.subprocess.Process, stderr_path: Path, cgroup: str) -> None:
        self.proc = proc
        self.stderr_path = stderr_path
        self.cgroup = cgroup

    async def wait(self) -> tuple[str, bool]:
        code = await self.proc.wait()
        if code < 0:
            return f"process killed by signal {signal.Signals(-code).name}", True
        tail = self.stderr_tail()
        return f"process exited with code {code}" + (f": {tail}" if tail else ""), code != 0

    def stderr_tail(self) -> str:
        try:
            data = self.stderr_path.read_bytes()[-4000:]
        except OSError:
            return ""
        lines = [
            ln
            for ln in data.decode("utf-8", "replace").splitlines()
            if ln.strip() and not ln.startswith("process sandbox:")
        ]
        return lines[-1][:300] if lines else ""

    async def stop(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, TimeoutError):
            await asyncio.wait_for(self.proc.wait(), 5)
        await asyncio.to_thread(kill_cgroup, self.cgroup)


def _cgroup_dirs(name: str) -> list[Path]:
    return [
        base / "bigtwo-arena" / name
        for base in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))
        if (base / "bigtwo-arena" / name).is_dir()
    ]


def kill_cgroup(name: str, timeout: float = 5.0) -> None:
    """Kill every process left in the bot's control group (whatever it did to escape its
    process group), then remove the group."""
    deadline = time.monotonic() + timeout
    for group in _cgroup_dirs(name):
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
        with contextlib.suppress(OSError):
            group.rmdir()


def isolation_note() -> str | None:
    """Why this machine's process sandbox is weaker than it could be, or None."""
    if sys.platform != "linux":
        return "process sandbox: not Linux: resource limits only (no namespaces)"
    if os.geteuid() != 0:
        return (
            "process sandbox: not root: resource limits only; bots share the network, "
            "/tmp and the process table (run as root, or use --sandbox docker)"
        )
    return None


class ProcessSandbox(Sandbox):
    """Each bot a child process in its own session, confined by ``arena.sandbox.launch``:
    namespaces (mount, PID, network, IPC, UTS), a pids control group, no capabilities,
    rlimits.  Weaker than docker: the bot runs as the arena's user and sees the machine's
    files (read-only for most of them only through ordinary permissions)."""

    name = "process"

    def __init__(
        self,
        memory_mb: int = 1024,
        cpu_s: int = 600,
        fsize_mb: int = 16,
        nofile: int = 64,
        pids: int = 64,
        tmp_mb: int = 16,
    ) -> None:
        self.limits = {
            "memory_mb": memory_mb,
            "cpu_s": cpu_s,
            "fsize_mb": fsize_mb,
            "nofile": nofile,
            "pids": pids,
            "tmp_mb": tmp_mb,
        }
        self.note = isolation_note()
        self.limits_dict = {**self.limits, "memory": "address space (RLIMIT_AS)"}

    async def start(self, bot: BotSpec, creds: Credentials, workdir: str) -> BotHandle:
        seat_dir = Path(workdir) / f"seat{creds.seat}"
        seat_dir.mkdir(mode=0o700, exist_ok=True)
        socket_path = creds.address.removeprefix("unix://")
        cgroup = f"{creds.match_id}-seat{creds.seat}"
        config = {
            **self.limits,
            "cgroup": cgroup,
            "sock_dir": str(Path(socket_path).parent),
            "seccomp": str(Path(__file__).with_name("seccomp.json")),
            # inside the namespaces the bot's folder is mounted read-only at /run/bot
            "bot_dir": str(bot.folder),
            "bot_spec": bot.runner_spec,
            "bot_entry": bot.runner_spec.removeprefix(str(bot.folder) + "/"),
            # the SDK the bot imports, wherever it is installed from (even a checkout in
            # /tmp, which the sandbox covers with its own tmpfs)
            "keep": [str(Path(bigtwo.__file__).resolve().parent)],
        }
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(seat_dir),
            "TMPDIR": str(seat_dir),
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
            **creds.env(),
        }
        stderr_path = seat_dir / "stderr.log"
        with open(stderr_path, "wb") as err:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "arena.sandbox.launch",
                json.dumps(config),
                "--",
                sys.executable,
                "-m",
                "bigtwo.run",
                bot.runner_spec,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=err,
                cwd=seat_dir,
                env=env,
                start_new_session=True,
            )
        return ProcessHandle(proc, stderr_path, cgroup)
