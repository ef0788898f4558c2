"""The ``process`` backend: each bot a child process confined by bubblewrap (``bwrap``),
started through :mod:`arena.sandbox.launch`, and killed with everything it started at the
end of its segment or match.

What a bot sees: a minimal read-only root holding what the interpreter needs and nothing
more (``/usr`` and ``/lib*``, the interpreter's binary, its standard library, a venv's
``pyvenv.cfg``, and only the package folders the bot imports — the SDK, gRPC, protobuf —
never the venv, checkout or site-packages around them; see :func:`runtime`), its own copy
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
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..bots import BotSpec, bot_files, is_sample_bot
from ..text import printable
from .base import BotHandle, Credentials, Sandbox, SandboxUnavailable
from .launch import BOT_DIR, CGROUP_PREFIX, SOCKET_DIR, cgroup_dirs
from .output import PipeCapture, last_words

LAUNCHER = Path(__file__).with_name("launch.py")
SECCOMP = Path(__file__).with_name("seccomp.json")
OOM_POLL_S = 0.2
# what the bot imports, and where the arena found it (the sandbox binds those folders)
RUNTIME_MODULES = ("bigtwo", "grpc", "google.protobuf")
# and what the bot's entry point imports on top (its own imports: grpc.aio, the wire code)
RUNTIME_ENTRY = ("bigtwo.run", "bigtwo.client")


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

# Run by the bot's interpreter, with the bot's flags and environment, on the host: imports
# what the bot imports and says where everything came from (standard library only).
_PROBE = r"""
import json, os, sys
before = set(sys.modules)
names = json.loads(sys.argv[1])
origins = {}
for name in names:
    try:
        origins[name] = getattr(__import__(name, fromlist=["_"]), "__file__", None)
    except Exception:
        origins[name] = None
new = set(sys.modules) - before
for name in names:
    parts = name.split(".")
    new.update(".".join(parts[: k + 1]) for k in range(len(parts)))
tops = {n.split(".")[0] for n in new}
new.update(n for n in list(sys.modules) if n.split(".")[0] in tops)  # and their parents'
modules = []
for name in sorted(new):
    m = sys.modules.get(name)
    if m is not None:
        modules.append([name, getattr(m, "__file__", None), hasattr(m, "__path__")])
finders = []  # the import hooks (an editable install's finder) that find them
for top in sorted(tops):
    for f in sys.meta_path:
        try:
            found = f.find_spec(top, None)
        except Exception:
            continue
        if found is not None:
            m = sys.modules.get(getattr(f, "__module__", None) or type(f).__module__)
            finders.append([m.__name__, getattr(m, "__file__", None)] if m else None)
            break
maps = set()
with open("/proc/self/maps") as f:
    for line in f:
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[5].startswith("/"):
            maps.add(fields[5].rstrip("\n"))
import site, sysconfig
sites = site.getsitepackages()  # the folders whose .pth files count (-I, -s: no user's)
base = {"base": sys.base_prefix, "installed_base": sys.base_prefix,
        "platbase": sys.base_exec_prefix, "installed_platbase": sys.base_exec_prefix}
stdlib = [os.path.dirname(os.__file__)]  # the base prefix's, not a venv's
stdlib += [sysconfig.get_path(k, vars=base) for k in ("stdlib", "platstdlib")]
stdlib += [p for p in sys.path if os.path.basename(p) == "lib-dynload"]
print(json.dumps({
    "origins": origins, "modules": modules, "finders": [f for f in finders if f],
    "maps": sorted(maps), "sites": sites, "stdlib": stdlib, "path": sys.path,
    "venv": sys.prefix != sys.base_prefix,
}))
"""
_SITE_DIRS = ("site-packages", "dist-packages")


def _under(path: str, roots) -> bool:
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


class _Root:
    """The sandbox's root as bubblewrap builds it: read-only binds (each at its own real
    path), empty read-only folders covering part of a bind (a site-packages inside the
    standard library's folder) and symlinks (each link on the way to a path)."""

    def __init__(self) -> None:
        self.ops: dict[str, str] = {}  # path -> "bind" | "cover" | "symlink"
        self.symlinks: dict[str, str] = {}  # link -> its target

    def _deepest(self, path: str, strict: bool) -> str | None:
        around = [
            p
            for p, kind in self.ops.items()
            if kind != "symlink" and (p != path or not strict) and _under(path, [p])
        ]
        return max(around, key=len, default=None)

    def visible(self, path: str) -> bool:
        """Whether the real ``path`` is in the sandbox already (in a bind, not covered)."""
        deepest = self._deepest(path, strict=False)
        return deepest is not None and self.ops[deepest] == "bind"

    def reach(self, path: str) -> str:
        """Make ``path`` resolve in the sandbox as on the host: every symlink on the way
        (parent folders' and its own, hop by hop) becomes a symlink there.  Returns the
        real path."""
        todo = [p for p in os.path.abspath(path).split("/") if p]
        real = "/"
        hops = 0
        while todo:
            part = todo.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                real = os.path.dirname(real)
                continue
            here = os.path.join(real, part)
            if not os.path.islink(here):
                real = here
                continue
            hops += 1
            if hops > 40:
                raise OSError(f"too many symlinks: {path}")
            target = os.readlink(here)
            if not self.visible(here):
                self.ops[here] = "symlink"
                self.symlinks[here] = target
            todo = [p for p in target.split("/") if p] + todo
            if target.startswith("/"):
                real = "/"
        return real

    def bind(self, path: str) -> None:
        real = self.reach(path)
        if os.path.exists(real) and not self.visible(real):
            self.ops[real] = "bind"

    def cover(self, path: str) -> None:
        real = self.reach(path)
        if os.path.isdir(real) and self.visible(real):
            self.ops[real] = "cover"

    def result(self) -> tuple[list[str], list[list[str]], list[str]]:
        """(binds, [target, link] symlinks, covers), parents first; what another op
        already shows (a symlink or bind inside a bind) goes."""
        binds, links, covers = [], [], []
        for path in sorted(self.ops, key=lambda p: Path(p).parts):
            kind = self.ops[path]
            inside = self._deepest(path, strict=True)
            shown = inside is not None and self.ops[inside] == "bind"
            if kind == "cover" and shown:
                covers.append(path)
            elif shown or kind == "cover":  # shown already, or nothing to cover
                continue
            elif kind == "bind":
                binds.append(path)
            else:
                links.append([self.symlinks[path], path])
        return binds, links, covers


def _probe(executable: str, flags: list[str], python_path: list[str]) -> dict:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/nonexistent"}
    if python_path:
        env["PYTHONPATH"] = os.pathsep.join(python_path)
    names = [*RUNTIME_MODULES, *RUNTIME_ENTRY]
    proc = subprocess.run(
        [executable, *flags, "-c", _PROBE, json.dumps(names)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    try:
        return json.loads(proc.stdout.splitlines()[-1])
    except (ValueError, IndexError):
        said = (proc.stderr.strip() or "no answer").splitlines()[-1][:300]
        raise SandboxUnavailable(f"the bots' interpreter {executable} failed: {said}") from None


@functools.lru_cache(maxsize=4)
def runtime(executable: str) -> dict:
    """What the bot's interpreter needs inside the sandbox, and nothing more: the shared
    libraries (``/usr``, ``/lib*``), the interpreter (each symlink on the way to its
    binary, e.g. a venv's ``bin/python``, and the binary), the base prefix's
    ``lib/pythonX.Y`` (standard library and lib-dynload), ``pyvenv.cfg`` for a venv, and of
    the packages the bot imports (RUNTIME_MODULES and what they import) only their own
    folders or files, with the import hooks and ``.pth`` files that find them (an editable
    install's) — never a folder merely holding them (a venv's root, a checkout).  A
    site-packages inside a bound folder is covered by an empty read-only folder first.

    Returns the binds (each at its own path), covers, symlinks, the interpreter's flags,
    and the folders to put on its path when the isolated interpreter (``-I``) would not
    find the SDK where the arena found it (an SDK on PYTHONPATH, or in the user's site)."""
    root = _Root()
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/" + name)
        if p.is_symlink():
            root.symlinks[str(p)] = os.readlink(p)
            root.ops[str(p)] = "symlink"
    root.bind("/usr")
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        if Path("/" + name).is_dir():
            root.bind("/" + name)
    if os.path.isfile("/etc/ld.so.cache"):
        root.bind("/etc/ld.so.cache")
    flags = ["-I"]
    python_path: list[str] = []
    found = _probe(executable, flags, python_path)
    for name in RUNTIME_MODULES:
        ours = _module_root(name)
        if ours is None:
            continue
        entry, _, file = ours
        origin = found["origins"].get(name)
        if origin is None or os.path.realpath(origin) != os.path.realpath(file):
            python_path.append(entry)  # the isolated interpreter would not find this one
    if python_path:
        python_path = list(dict.fromkeys(python_path))
        flags = ["-s", "-P"]  # PYTHONPATH must count then
        found = _probe(executable, flags, python_path)

    root.bind(executable)
    for folder in found["stdlib"]:
        if folder and os.path.isdir(folder):
            root.bind(folder)
    if found["venv"]:  # the interpreter looks next to itself, then one folder up
        for folder in (Path(executable).parent, Path(executable).parent.parent):
            if (folder / "pyvenv.cfg").is_file():
                root.bind(str(folder / "pyvenv.cfg"))
    sites = [*found["sites"], *(p for p in found["path"] if Path(p).name in _SITE_DIRS)]
    for folder in sites:
        if os.path.isdir(folder) and Path(folder).name in _SITE_DIRS:
            root.cover(folder)  # a site-packages inside the standard library's folder
    # the import hooks that find the bot's imports (an editable install's finder)
    hooks = [
        (name, file)
        for name, file in found["finders"]
        if file and not root.visible(os.path.realpath(file))
    ]

    by_name = {name: (file, package) for name, file, package in found["modules"]}
    wanted: list[str] = []
    for name, (file, _package) in by_name.items():
        if not file:
            continue
        parts = name.split(".")
        for k in range(1, len(parts) + 1):  # the outermost module with a file: a
            top, is_package = by_name.get(".".join(parts[:k]), (None, False))
            if top:  # package's folder (inside a namespace package), or a lone module
                wanted.append(os.path.dirname(top) if is_package else top)
                break
        wanted.append(file)  # in case its package lies elsewhere
    wanted += [file for _, file in hooks]
    bound = []
    for path in sorted(set(wanted), key=len):
        while not os.path.exists(path) and os.path.dirname(path) != path:
            path = os.path.dirname(path)  # a module inside a zip file: the zip file
        if path != "/" and not root.visible(os.path.realpath(path)):
            root.bind(path)
            bound.append(os.path.realpath(path))
    for folder in dict.fromkeys(found["sites"]):  # the .pth files that reach them
        for pth in sorted(Path(folder).glob("*.pth")) if os.path.isdir(folder) else []:
            if _pth_needed(pth, bound, [name for name, _ in hooks]):
                root.bind(str(pth))
    for file in found["maps"]:  # shared libraries outside /usr (a shared libpython)
        if os.path.isfile(file) and not root.visible(os.path.realpath(file)):
            root.bind(file)
    binds, symlinks, covers = root.result()
    return {
        "binds": binds,
        "covers": covers,
        "symlinks": symlinks,
        "flags": flags,
        "python_path": python_path,
    }


def _pth_needed(pth: Path, bound: list[str], hooks: list[str]) -> bool:
    """A ``.pth`` file counts when a folder it adds holds something bound, or a line it
    runs names an import hook that finds what the bot imports."""
    try:
        lines = pth.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return False
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("import ", "import\t")):
            words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", line))
            if any(h in words or any(w.startswith(h + ".") for w in words) for h in hooks):
                return True
            continue
        folder = os.path.realpath(os.path.join(pth.parent, line))
        if any(_under(b, [folder]) for b in bound):
            return True
    return False


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
