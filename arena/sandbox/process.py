"""The ``process`` backend: each bot a child process confined by bubblewrap (``bwrap``),
started through :mod:`arena.sandbox.launch`, and killed with everything it started at the
end of its segment or match.

What a bot sees: a minimal read-only root holding what the interpreter needs and nothing
more (``/usr`` and ``/lib*``, the interpreter's binary, its standard library, a venv's
``pyvenv.cfg``, and only the package folders the bot imports — the SDK, gRPC, protobuf —
never the venv, checkout or site-packages around them; see
:mod:`.interpreter_root`), its own copy
of its files at ``/bot`` (the files its docker image gets), its seat's socket folder at
``/run/arena``, a minimal ``/dev``, no procfs or sysfs and a small ``/tmp``; no network, no
other process, no capability, the arena's seccomp filter.  As root, each seat also runs as
a fresh unprivileged uid of its own, in control groups that cap its memory (all its
processes together), processes and CPU share.  Not root, bubblewrap still confines it in
user namespaces, but memory is capped per process (RLIMIT_AS) and CPU is shared by the
scheduler's session groups.  :func:`isolation_note` says what is weaker on this machine.

What a bot cannot read (a neighbouring bot has decoded another seat's cards through
``MemFree``).  Whatever the machine counts for all its processes is a covert channel
between two seats alive at once (one moves it, the other reads it), and whatever names a
host path tells a bot where the arena, its database and its users live.  The class, and
how each is closed:

- procfs, none at all (``/proc`` is an empty read-only folder).  A fresh procfs in the
  sandbox's PID namespace still shows the machine's counters — memory (``meminfo``,
  ``vmstat``, ``zoneinfo``, ``buddyinfo``, ``slabinfo``, ``pagetypeinfo``, ``swaps``),
  CPU and load (``stat``, ``loadavg``, ``uptime``, ``schedstat``, ``interrupts``,
  ``softirqs``, ``cpuinfo``'s clock), pressure (``pressure/*``), disks
  (``diskstats``), the kernel's tables (``sys/fs/file-nr``, ``inode-nr``,
  ``sys/kernel/random/entropy_avail``, ...) — and, in each process's ``mountinfo`` and
  ``mounts``, the host path of every bind's source (the match's folder, the bot's copy,
  the interpreter's prefix, a checkout).  Filtering it file by file would leave whatever
  the next kernel adds; a bot needs none of it (``os.cpu_count`` and the SDK work
  without it: glibc falls back to ``sched_getaffinity``).  Its own ``/proc/self`` goes
  too: its memory is ``resource.getrusage``'s.
- sysfs is never mounted (``/sys/fs/cgroup``'s counters, ``/sys/devices/system/node``'s
  meminfo, ``/sys/kernel/mm``).
- system calls that report the machine: ``sysinfo`` (free memory, load, process count)
  is denied by the seccomp filter (``seccomp.json``, both backends), as are ``ustat``,
  ``sysfs``, ``syslog``, ``perf_event_open`` and the page-cache probes (``mincore``,
  ``cachestat``, ``readahead``...) already.  ``getrusage`` and ``times`` count only the
  caller and its children.
- what stays, bounded: time itself (a neighbour's CPU use slows a bot's clock-measured
  work: the seat's CPU share caps it, and no bot learns another's cards from its own
  timing without the other modulating it); ``statfs`` of the read-only binds (the host
  disk's free blocks, which no bot can write to: every writable place is a per-seat
  tmpfs); and the interpreter's and the SDK's own paths, which the bot sees as
  ``sys.executable`` and ``sys.path`` (bound at their real paths so that the interpreter
  finds itself), though no longer the folder of its own copy or of its socket."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from ..bots import BotSpec, bot_files, is_sample_bot
from ..text import printable
from .base import BotHandle, Credentials, Sandbox, SandboxUnavailable
from .cgroups import controllers, kill_cgroup, oom_kills
from .interpreter_root import runtime
from .launch import BOT_DIR, SOCKET_DIR, cgroup_dirs
from .output import PipeCapture, last_words

LAUNCHER = Path(__file__).with_name("launch.py")
SECCOMP = Path(__file__).with_name("seccomp.json")
OOM_POLL_S = 0.2


class ProcessHandle(BotHandle):
    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        start_dir: Path,
        cgroup: str,
        memory_mb: int,
        confined: bool,
        capture: PipeCapture,
        keep_output: bool = False,
    ) -> None:
        self.proc = proc
        self.start_dir = start_dir
        self.capture = capture  # the bot's stdout and stderr, read to their end
        self.keep_output = keep_output
        self.cgroup = cgroup
        self.memory_mb = memory_mb
        self.confined = confined
        self.groups = cgroup_dirs(cgroup) if confined and os.geteuid() == 0 else {}
        self.oom = 0

    def oom_kills(self) -> int:
        """How many processes the seat's memory limit killed (its control group's count)."""
        self.oom = max(self.oom, oom_kills(self.groups))
        return self.oom

    async def wait(self) -> tuple[str, bool]:
        watch = bool(self.groups)
        waiter = asyncio.ensure_future(self.proc.wait())
        while True:
            done, _ = await asyncio.wait({waiter}, timeout=OOM_POLL_S if watch else None)
            if done:
                break
            if self.oom_kills():  # the seat hit its memory limit: the whole seat goes
                self._kill_group()
                await asyncio.to_thread(kill_cgroup, self.cgroup, 5.0, False)
        code = waiter.result()
        await self.capture.drained(0.5)  # its last words, still in the pipe
        if self.oom_kills():
            return (
                f"killed by the seat's memory limit ({self.memory_mb} MiB for all its "
                f"processes together; {self.oom} killed by the kernel), exit code {code}"
            ), True
        if code < 0:
            return f"process killed by signal {signal.Signals(-code).name}", True
        if self.confined and 128 < code < 128 + signal.NSIG:  # bwrap reports 128 + signal
            with contextlib.suppress(ValueError):
                return f"process killed by signal {signal.Signals(code - 128).name}", True
        tail = self.stderr_tail()
        return f"process exited with code {code}" + (f": {tail}" if tail else ""), code != 0

    def stderr_tail(self) -> str:
        """The bot's last words — or the sandbox's, bubblewrap's included, verbatim —
        with where a traceback they end was raised in the bot's files."""
        return last_words(self.capture.stderr_bytes())

    def _kill_group(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    async def stop(self) -> None:
        self._kill_group()
        with contextlib.suppress(ProcessLookupError, TimeoutError):
            await asyncio.wait_for(self.proc.wait(), 5)
        await asyncio.to_thread(kill_cgroup, self.cgroup)
        log = await self.capture.close()
        if self.keep_output and self.output is None:
            self.output = log
        await asyncio.to_thread(shutil.rmtree, self.start_dir, True)


# --- what this machine can do --------------------------------------------------------------


def bwrap_path() -> str | None:
    return shutil.which("bwrap") or next(
        (p for p in ("/usr/bin/bwrap", "/usr/local/bin/bwrap") if os.access(p, os.X_OK)), None
    )


@functools.lru_cache(maxsize=1)  # a probe process; the machine does not change while we run
def confinement_problem() -> str | None:
    """Why bubblewrap cannot confine bots here (then only the arena's own sample bots run,
    with rlimits only), or None."""
    if sys.platform != "linux":
        return "not Linux: bubblewrap needs Linux namespaces"
    bwrap = bwrap_path()
    if bwrap is None:
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    try:
        proc = subprocess.run(
            [sys.executable, "-I", "-S", str(LAUNCHER), "--probe", bwrap],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap could not be tried: {exc}"
    if proc.returncode != 0:
        said = (proc.stdout.strip() or proc.stderr.strip() or "failed").splitlines()[-1]
        return f"bubblewrap cannot make a sandbox here ({said})"
    return None


def _autogroup() -> bool:
    try:
        return Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        return False


def _libseccomp() -> bool:
    import ctypes.util

    return ctypes.util.find_library("seccomp") is not None


def isolation_note() -> str | None:
    """What the process sandbox cannot guarantee on this machine, in one line, or None."""
    problem = confinement_problem()
    if problem:
        return (
            f"process sandbox: {problem}: NO confinement — only the arena's own sample "
            "bots run (rlimits only), any other bot is refused (use --sandbox docker)"
        )
    weaker = []
    if not _libseccomp():
        weaker.append("no seccomp filter (libseccomp missing: io_uring and AF_VSOCK stay open)")
    if os.geteuid() != 0:
        cpu = (
            "CPU shared per seat by the scheduler's session groups"
            if _autogroup()
            else "no CPU share per seat (a busy neighbour can slow the others)"
        )
        weaker.append(
            "not root: bots confined by bubblewrap as your uid (in user namespaces), but "
            f"memory is capped per process (RLIMIT_AS), not per seat; {cpu}"
        )
    else:
        missing = {"memory", "pids", "cpu"} - controllers()
        if missing:
            weaker.append(
                f"no {', '.join(sorted(missing))} control group: "
                + "; ".join(
                    {
                        "memory": "memory capped per process only (RLIMIT_AS)",
                        "pids": "processes capped by RLIMIT_NPROC only",
                        "cpu": "CPU shared per seat by the scheduler's session groups, no quota"
                        if _autogroup()
                        else "no CPU share per seat",
                    }[m]
                    for m in sorted(missing)
                )
            )
    return ("process sandbox: " + "; ".join(weaker)) if weaker else None


def _copy_bot(bot: BotSpec, folder: Path) -> None:
    """The bot's files (those its docker image gets), world-readable, in a fresh folder."""
    folder.mkdir(mode=0o755)
    for name, data in bot_files(bot).items():
        target = folder / name
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o644)


class ProcessSandbox(Sandbox):
    """Each bot a child process confined by bubblewrap (see the module's doc)."""

    name = "process"

    def __init__(
        self,
        memory_mb: int = 1024,
        cpu_s: int = 600,
        fsize_mb: int = 16,
        nofile: int = 64,
        pids: int = 64,
        tmp_mb: int = 16,
        cpus: float = 1.0,
    ) -> None:
        self.memory_mb = memory_mb
        self.limits = {
            "memory_mb": memory_mb,
            "cpu_s": cpu_s,
            "fsize_mb": fsize_mb,
            "nofile": nofile,
            "pids": pids,
            "tmp_mb": tmp_mb,
            "cpus": cpus,
        }
        self.problem = confinement_problem()
        usable = controllers() if not self.problem else set()
        self.limits_dict = {
            **self.limits,
            "confinement": "none (rlimits only)" if self.problem else "bubblewrap",
            "memory_per": "seat" if "memory" in usable else "process",
            "cpu_share": "seat"
            if "cpu" in usable
            else ("session" if not self.problem and _autogroup() else "none"),
        }

    async def prepare(self, bots: list[BotSpec]) -> None:
        """Refuse, before anything starts, to run a stranger's bot with no confinement."""
        for bot in bots:
            self._check_confined(bot)
        if bots and not self.problem:  # what the interpreter needs; its faults, before a start
            await asyncio.to_thread(runtime, sys.executable)

    def _check_confined(self, bot: BotSpec) -> None:
        """Without bubblewrap only the arena's own sample bots (code shipped with the arena,
        so the default ladder still runs on a fresh machine) may run: any other bot would
        read the machine's files, use the network and see every process."""
        if not self.problem or bot.path is None:
            return
        if is_sample_bot(bot):
            return
        raise SandboxUnavailable(
            f"--sandbox process cannot confine bot '{printable(bot.name, 60)}': "
            f"{self.problem}. Install bubblewrap, use --sandbox docker, or --sandbox inproc "
            "for bots you trust"
        )

    async def start(self, bot: BotSpec, creds: Credentials, workdir: str) -> BotHandle:
        self._check_confined(bot)
        # a fresh folder per start: the same seat may start several times in one match
        start_dir = Path(tempfile.mkdtemp(prefix=f"seat{creds.seat}-", dir=workdir))
        bot_dir = start_dir / "bot"
        await asyncio.to_thread(_copy_bot, bot, bot_dir)
        cgroup = f"{creds.match_id}-{start_dir.name}"
        socket_path = creds.address.removeprefix("unix://")
        run = await asyncio.to_thread(runtime, sys.executable)
        bwrap = None if self.problem else bwrap_path()
        prlimit = shutil.which("prlimit") or (
            "/usr/bin/prlimit" if os.path.exists("/usr/bin/prlimit") else None
        )
        config = {
            **self.limits,
            "bwrap": bwrap,
            "cgroup": cgroup,
            "seccomp": str(SECCOMP),
            "binds": [[p, p] for p in run["binds"]]
            + [[str(bot_dir), BOT_DIR], [str(Path(socket_path).parent), SOCKET_DIR]],
            "symlinks": run["symlinks"],
            "covers": run["covers"],
            "prlimit": prlimit if prlimit and prlimit.startswith("/usr/") else None,
            "bot_host_dir": str(bot_dir),
            "host_address": creds.address,
        }
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": "/tmp",
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            # each thread's malloc arena reserves 64 MiB of address space: 24 threads would
            # spend the RLIMIT_AS on reservations alone
            "MALLOC_ARENA_MAX": "2",
            **creds.env(),
            "ARENA_ADDRESS": f"unix://{SOCKET_DIR}/{Path(socket_path).name}",
        }
        if run["python_path"]:
            env["PYTHONPATH"] = os.pathsep.join(run["python_path"])
        assert bot.path is not None, "a remote seat is never started"
        entry = f"{BOT_DIR}/{bot.path.name}" + (f":{bot.cls}" if bot.cls else "")
        command = [sys.executable, *run["flags"], "-u", "-B", "-m", "bigtwo.run", entry]
        # stdout and stderr: pipes read to their end by a thread (see arena.sandbox.output)
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        err_r, err_w = os.pipe2(os.O_CLOEXEC)
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-I",
                "-S",
                str(LAUNCHER),
                json.dumps(config),
                "--",
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out_w,
                stderr=err_w,
                cwd=start_dir,
                env=env,
                start_new_session=True,
            )
        except BaseException:
            for fd in (out_r, err_r):
                os.close(fd)
            raise
        finally:
            for fd in (out_w, err_w):
                os.close(fd)
        capture = PipeCapture(out_r, err_r)
        return ProcessHandle(
            proc,
            start_dir,
            cgroup,
            self.memory_mb,
            bwrap is not None,
            capture,
            self.keep_output,
        )
