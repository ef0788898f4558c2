"""The ``process`` backend: each bot a child process confined by bubblewrap (``bwrap``),
started through :mod:`arena.sandbox.launch`, and killed with everything it started at the
end of its segment or match.

What a bot sees: a minimal read-only root holding the interpreter (``/usr``, the
interpreter's prefixes and site-packages), the SDK's package folder, its own copy of its
files at ``/bot`` (the files its docker image gets), its seat's socket folder at
``/run/arena``, a minimal ``/dev``, its own ``/proc`` and a small ``/tmp``; no network, no
other process, no capability, the arena's seccomp filter.  As root, each seat also runs as
a fresh unprivileged uid of its own, in control groups that cap its memory (all its
processes together), processes and CPU share.  Not root, bubblewrap still confines it in
user namespaces, but memory is capped per process (RLIMIT_AS) and CPU is shared by the
scheduler's session groups.  :func:`isolation_note` says what is weaker on this machine."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bigtwo

from ..bots import SAMPLE_BOTS, BotSpec, bot_files
from ..text import printable
from .base import BotHandle, Credentials, Sandbox, SandboxUnavailable
from .launch import BOT_DIR, CGROUP_PREFIX, SOCKET_DIR, cgroup_dirs

LAUNCHER = Path(__file__).with_name("launch.py")
SECCOMP = Path(__file__).with_name("seccomp.json")
OOM_POLL_S = 0.2
# what the bot imports, and where the arena found it (the sandbox binds those folders)
RUNTIME_MODULES = ("bigtwo", "grpc", "google.protobuf")


class ProcessHandle(BotHandle):
    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        start_dir: Path,
        cgroup: str,
        memory_mb: int,
        confined: bool,
    ) -> None:
        self.proc = proc
        self.start_dir = start_dir
        self.stderr_path = start_dir / "stderr.log"
        self.cgroup = cgroup
        self.memory_mb = memory_mb
        self.confined = confined
        self.groups = cgroup_dirs(cgroup) if confined and os.geteuid() == 0 else {}
        self.oom = 0

    def oom_kills(self) -> int:
        """How many processes the seat's memory limit killed (its control group's count)."""
        for controller, group in self.groups.items():
            name = {"memory": "memory.oom_control", "v2": "memory.events"}.get(controller)
            if name is None:
                continue
            try:
                for line in (group / name).read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        self.oom = max(self.oom, int(value))
            except (OSError, ValueError):
                pass
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
        """The bot's last words — or the sandbox's, bubblewrap's included, verbatim."""
        try:
            with open(self.stderr_path, "rb") as f:
                f.seek(max(0, os.fstat(f.fileno()).st_size - 4000))
                data = f.read()
        except OSError:
            return ""
        lines = [ln for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
        return lines[-1][:300] if lines else ""

    def _kill_group(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    async def stop(self) -> None:
        self._kill_group()
        with contextlib.suppress(ProcessLookupError, TimeoutError):
            await asyncio.wait_for(self.proc.wait(), 5)
        await asyncio.to_thread(kill_cgroup, self.cgroup)
        await asyncio.to_thread(shutil.rmtree, self.start_dir, True)


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


# --- what this machine can do --------------------------------------------------------------


def bwrap_path() -> str | None:
    return shutil.which("bwrap") or next(
        (p for p in ("/usr/bin/bwrap", "/usr/local/bin/bwrap") if os.access(p, os.X_OK)), None
    )


@functools.lru_cache(maxsize=1)
@functools.cache  # a probe process; what this machine can do does not change while we run
def confinement_problem() -> str | None:
    """Why bubblewrap cannot confine bots here (then bots run with rlimits only), or None."""
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


def _controllers() -> set[str]:
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
            f"process sandbox: {problem}: NO confinement, rlimits only — bots can read "
            "your files, use the network and see your processes (use --sandbox docker)"
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
        missing = {"memory", "pids", "cpu"} - _controllers()
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


# --- the interpreter's files ---------------------------------------------------------------


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _module_root(name: str) -> tuple[str, str, str] | None:
    """(the sys.path folder the arena imported ``name`` from, its top package folder, the
    module's file), or None when the arena does not have it."""
    try:
        module = __import__(name, fromlist=["_"])
    except ImportError:
        return None
    file = getattr(module, "__file__", None)
    if not file:
        return None
    top = Path(file).parent
    for _ in range(name.count(".")):
        top = top.parent
    return str(top.parent), str(top), file


@functools.lru_cache(maxsize=4)
def runtime(executable: str) -> dict:
    """What the bot's interpreter needs inside the sandbox: read-only binds (each at its own
    path), the host's root symlinks (/lib → usr/lib ...), the interpreter's flags, and the
    folders to put on its path when the isolated interpreter (``-I``) would not find the
    SDK where the arena found it (an SDK on PYTHONPATH, or in the user's site)."""
    binds: list[str] = ["/usr"]
    symlinks = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/" + name)
        if p.is_symlink():
            symlinks.append([os.readlink(p), str(p)])
        elif p.is_dir():
            binds.append(str(p))
    files = [f for f in ("/etc/ld.so.cache",) if os.path.isfile(f)]
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    sites = [p for p in site.getsitepackages() if os.path.isdir(p)]
    isolated = subprocess.run(
        [
            executable,
            "-I",
            "-c",
            "import importlib.util as u, json, sys\n"
            f"names = {list(RUNTIME_MODULES)!r}\n"
            "def origin(n):\n"
            "    try:\n"
            "        return u.find_spec(n).origin\n"
            "    except Exception:\n"
            "        return None\n"
            "print(json.dumps([origin(n) for n in names]))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    try:
        origins = json.loads(isolated.stdout)
    except ValueError:
        origins = [None] * len(RUNTIME_MODULES)
    python_path: list[str] = []
    packages: list[str] = [str(Path(bigtwo.__file__).parent)]
    for name, origin in zip(RUNTIME_MODULES, origins, strict=True):
        found = _module_root(name)
        if found is None:
            continue
        entry, top, file = found
        packages.append(top)
        if origin is None or os.path.realpath(origin) != os.path.realpath(file):
            python_path.append(entry)  # the isolated interpreter would not find this one
    for extra in (*sorted(prefixes), *sites, *packages):
        if os.path.isdir(extra):
            binds.append(extra)
    kept: list[str] = []
    for path in sorted(set(binds), key=len):  # parents first; a child inside a parent goes
        if not _under(path, kept):
            kept.append(path)
    flags = ["-I"] if not python_path else ["-s", "-P"]  # PYTHONPATH must count then
    return {
        "binds": kept + files,
        "symlinks": symlinks,
        "flags": flags,
        "python_path": list(dict.fromkeys(python_path)),
    }


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
        self.note = isolation_note()
        controllers = _controllers() if not self.problem else set()
        self.limits_dict = {
            **self.limits,
            "confinement": "none (rlimits only)" if self.problem else "bubblewrap",
            "memory_per": "seat" if "memory" in controllers else "process",
            "cpu_share": "seat"
            if "cpu" in controllers
            else ("session" if not self.problem and _autogroup() else "none"),
        }

    async def prepare(self, bots: list[BotSpec]) -> None:
        """Refuse, before anything starts, to run a stranger's bot with no confinement."""
        for bot in bots:
            self._check_confined(bot)

    def _check_confined(self, bot: BotSpec) -> None:
        """Without bubblewrap only the arena's own sample bots (code shipped with the arena,
        so the default ladder still runs on a fresh machine) may run: any other bot would
        read the machine's files, use the network and see every process."""
        if not self.problem or bot.path is None:
            return
        if bot.path.resolve().is_relative_to(SAMPLE_BOTS):
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
        entry = f"{BOT_DIR}/{bot.path.name}" + (f":{bot.cls}" if bot.cls else "")
        command = [sys.executable, *run["flags"], "-u", "-B", "-m", "bigtwo.run", entry]
        with open(start_dir / "stderr.log", "wb") as err:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-I",
                "-S",
                str(LAUNCHER),
                json.dumps(config),
                "--",
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=err,
                cwd=start_dir,
                env=env,
                start_new_session=True,
            )
        return ProcessHandle(proc, start_dir, cgroup, self.limits["memory_mb"], bwrap is not None)
