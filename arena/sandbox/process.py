"""The ``process`` backend: each bot is a child process in its own session (so the whole
process group can be killed), with a scrubbed environment, a private working folder and
resource limits.  Weaker isolation than Docker: same user, same filesystem view."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

from ..bots import BotSpec
from .base import BotHandle, Credentials, Sandbox

STDERR_CAP = 64 * 1024


class ProcessHandle(BotHandle):
    def __init__(self, proc: asyncio.subprocess.Process, stderr_path: Path) -> None:
        self.proc = proc
        self.stderr_path = stderr_path

    async def wait(self) -> tuple[str, bool]:
        code = await self.proc.wait()
        if code < 0:
            return f"process killed by signal {signal.Signals(-code).name}", True
        tail = self.stderr_tail()
        return f"process exited with code {code}" + (f": {tail}" if tail else ""), code != 0

    def stderr_tail(self) -> str:
        try:
            data = self.stderr_path.read_bytes()[-2000:]
        except OSError:
            return ""
        lines = [ln for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
        return lines[-1][:300] if lines else ""

    async def stop(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            await asyncio.wait_for(self.proc.wait(), 5)


class ProcessSandbox(Sandbox):
    name = "process"

    def __init__(
        self, memory_mb: int = 1024, cpu_s: int = 600, fsize_mb: int = 16, nofile: int = 64
    ) -> None:
        self.limits = (memory_mb, cpu_s, fsize_mb, nofile)

    async def start(self, bot: BotSpec, creds: Credentials, workdir: str) -> BotHandle:
        home = Path(workdir) / f"seat{creds.seat}"
        home.mkdir(mode=0o700, exist_ok=True)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "TMPDIR": str(home),
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
            **creds.env(),
        }
        stderr_path = home / "stderr.log"
        with open(stderr_path, "wb") as err:
            limits = [str(x) for x in self.limits]
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "arena.sandbox.launch",
                *limits,
                "--",
                sys.executable,
                "-m",
                "bigtwo.run",
                bot.runner_spec,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=err,
                cwd=home,
                env=env,
                start_new_session=True,
            )
        return ProcessHandle(proc, stderr_path)
