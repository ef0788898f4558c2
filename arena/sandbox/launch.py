"""The process sandbox's launcher: give the seat its limits, then exec bubblewrap.

    python -I -S launch.py CONFIG_JSON -- COMMAND...

The arena starts every ``process`` bot through this small program (standard library only,
run as a file so that it needs nothing installed) rather than with a ``preexec_fn`` (Python
between fork and exec in a process with gRPC threads can deadlock or abort).  It:

1. as root, puts itself in the seat's own control groups (cgroup v1 ``memory``, ``pids``
   and ``cpu``, inside the arena's own groups; or one cgroup v2 group) capped at the
   seat's memory (all its processes together, no swap), processes and CPU (a quota of
   ``cpus`` and the weight of one process), so that the arena can kill every process the
   bot started;
2. compiles the arena's seccomp profile (``seccomp.json``, the docker backend's rules) to a
   BPF program with libseccomp, in a memfd that bubblewrap loads just before the bot;
3. as root, makes every folder the bot needs reachable by an unprivileged user: in a
   mount namespace of its own it covers ``/tmp`` with an empty tmpfs and bind-mounts each
   source there (opened before), because the bot's user may not search ``/root`` (a pyenv
   interpreter) or the match's private folder;
4. sets rlimits (address space, CPU seconds, file size, open files, no core; as root also
   processes, the uid being the seat's alone) and, as root, drops to a fresh unprivileged
   uid and gid of the seat's own (``UID_BASE`` + this process's pid, unique while the seat
   lives), no supplementary groups, no-new-privileges, and a parent-death signal;
5. execs ``bwrap``: new user, mount, PID, network, IPC, UTS and cgroup namespaces (no
   network at all; no further user namespaces), a minimal read-only root holding only
   what the interpreter needs (binds, symlinks, and empty read-only folders covering the
   part of a bind it does not need, e.g. a site-packages inside the standard library's
   folder, with the packages it imports bound back in), the SDK and the bot's own copy of
   its files at ``/bot``,
   the seat's socket folder read-only at ``/run/arena``, a minimal ``/dev``, no procfs
   (an empty ``/proc``) and no sysfs, a size-limited ``/tmp``, nodev and nosuid everywhere,
   every capability dropped, the seccomp filter, a new session, killed with its parent.

Not root, steps 1 and 3 are impossible and step 4 keeps the user's uid; bubblewrap still
confines the bot in unprivileged user namespaces, and the process limit is set inside them
(``prlimit``), where it counts only the sandbox's processes.  Without ``bwrap`` the arena
passes ``"bwrap": null`` and the bot runs with the rlimits only (the arena says so).

Any failure here is printed as one ``process sandbox: ...`` line on stderr (which the arena
shows as the seat's fault) and the bot is not started; bubblewrap's own errors (``bwrap:
...``) reach the seat's fault the same way.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import json
import os
import resource
import signal
import sys
from pathlib import Path

UID_BASE = 0x70000000
"""Seat uids are UID_BASE + the launcher's pid: a range no distribution allocates (above
systemd's container ranges, below 2^31), one uid per live seat."""
BOT_DIR = "/bot"
SOCKET_DIR = "/run/arena"
COVER_SIZE = 64 << 10  # an empty folder hiding part of a bind (what is bound back in it)
STAGE = "/tmp"  # covered by an empty tmpfs in the launcher's own mount namespace
CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_PREFIX = "bigtwo-arena-"
V1_CONTROLLERS = ("memory", "pids", "cpu")
CFS_PERIOD_US = 100_000

CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38

_libc = ctypes.CDLL(None, use_errno=True)


class LaunchError(Exception):
    """Confinement could not be set up; the bot must not start."""


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise LaunchError(f"{what}: {os.strerror(err)}")


def _mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None = None):
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    _check(_libc.mount(enc(src), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


# --- control groups ------------------------------------------------------------------------


def cgroup_v2() -> bool:
    return (CGROUP_ROOT / "cgroup.controllers").is_file()


def _own_v1_path(controller: str) -> str:
    """This process's group in a v1 hierarchy ("/" at the top)."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            if controller in names.split(","):
                return path
    except (OSError, ValueError):
        pass
    return "/"


def cgroup_dirs(name: str) -> dict[str, Path]:
    """The seat's groups by controller ("v2" for the unified hierarchy), each named
    ``CGROUP_PREFIX + name``.  v1 groups sit in the arena's own group of each controller,
    so whatever limits the arena also bounds its bots; v2 groups in the root (a v2 group
    holding processes, like the arena's own, cannot have controlled children).  No common
    parent: each seat weighs in the CPU scheduler like one process of the machine, however
    many threads it runs, rather than all the arena's seats together weighing as one."""
    if cgroup_v2():
        return {"v2": CGROUP_ROOT / (CGROUP_PREFIX + name)}
    found = {}
    for c in V1_CONTROLLERS:
        base = CGROUP_ROOT / c
        if (base / "cgroup.procs").is_file():
            found[c] = base / _own_v1_path(c).lstrip("/") / (CGROUP_PREFIX + name)
    return found


def join_cgroups(cfg: dict) -> list[str]:
    """Create the seat's groups with their limits and move this process into them; returns
    the controllers joined."""
    mem = cfg["memory_mb"] << 20
    joined = []
    for controller, group in cgroup_dirs(cfg["cgroup"]).items():
        try:
            if controller == "v2":
                for c in ("memory", "pids", "cpu"):  # unavailable: isolation_note says so
                    with contextlib.suppress(OSError):
                        (CGROUP_ROOT / "cgroup.subtree_control").write_text(f"+{c}")
                group.mkdir()
                settings = {
                    "memory.max": str(mem),
                    "memory.swap.max": "0",
                    "memory.oom.group": "1",
                    "pids.max": str(cfg["pids"]),
                    "cpu.max": f"{int(cfg['cpus'] * CFS_PERIOD_US)} {CFS_PERIOD_US}",
                }
            else:
                group.mkdir()
                settings = {
                    "memory": {
                        "memory.limit_in_bytes": str(mem),
                        "memory.memsw.limit_in_bytes": str(mem),  # after the plain limit
                        "memory.swappiness": "0",
                    },
                    "pids": {"pids.max": str(cfg["pids"])},
                    "cpu": {
                        "cpu.shares": "1024",
                        "cpu.cfs_period_us": str(CFS_PERIOD_US),
                        "cpu.cfs_quota_us": str(int(cfg["cpus"] * CFS_PERIOD_US)),
                    },
                }[controller]
            for key, value in settings.items():
                if (group / key).exists():
                    (group / key).write_text(value)
            (group / "cgroup.procs").write_text(str(os.getpid()))
            joined.append(controller)
        except OSError as exc:
            raise LaunchError(f"control group {group}: {exc.strerror or exc}") from None
    return joined


# --- seccomp -------------------------------------------------------------------------------

SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_ACT_ERRNO = 0x00050000
SCMP_OPS = {"SCMP_CMP_EQ": 4, "SCMP_CMP_MASKED_EQ": 7}


def open_libseccomp() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp")
    if name is None:
        for candidate in ("libseccomp.so.2", "libseccomp.so"):
            try:
                return ctypes.CDLL(candidate, use_errno=True)
            except OSError:
                continue
        raise OSError("libseccomp is not installed (Debian: libseccomp2)")
    return ctypes.CDLL(name, use_errno=True)


def seccomp_bpf_fd(lib: ctypes.CDLL, profile: dict) -> int:
    """The docker profile's rules (seccomp.json) compiled to a BPF program for this
    architecture, in a memfd positioned at its start (what ``bwrap --seccomp FD`` reads)."""
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]

    class ArgCmp(ctypes.Structure):
        _fields_ = [
            ("arg", ctypes.c_uint),
            ("op", ctypes.c_int),
            ("datum_a", ctypes.c_uint64),
            ("datum_b", ctypes.c_uint64),
        ]

    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(ArgCmp),
    ]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        raise LaunchError("seccomp_init failed")
    try:
        for rule in profile["syscalls"]:
            action = SCMP_ACT_ERRNO | (rule.get("errnoRet", 1) & 0xFFFF)
            args = rule.get("args", [])
            cmps = (ArgCmp * max(1, len(args)))(
                *[
                    ArgCmp(a["index"], SCMP_OPS[a["op"]], a["value"], a.get("valueTwo", 0))
                    for a in args
                ]
            )
            for syscall in rule["names"]:
                nr = lib.seccomp_syscall_resolve_name(syscall.encode())
                if nr < 0:
                    continue  # not a syscall on this architecture
                if lib.seccomp_rule_add_array(ctx, action, nr, len(args), cmps) != 0:
                    raise LaunchError(f"seccomp rule for {syscall} refused")
        fd = os.memfd_create("arena-seccomp", 0)
        if lib.seccomp_export_bpf(ctx, fd) != 0:
            raise LaunchError("seccomp_export_bpf failed")
        os.lseek(fd, 0, os.SEEK_SET)
        return fd
    finally:
        lib.seccomp_release(ctx)


# --- the filesystem ------------------------------------------------------------------------


def stage(binds: list[list[str]]) -> list[list[str]]:
    """As root: make each bind source reachable by an unprivileged user.  Every source is
    opened (in a mount namespace of this process's own); then an empty tmpfs covers
    ``STAGE`` and each source is bind-mounted at ``STAGE/N``, reachable through
    world-searchable folders only.  Returns the binds with their staged sources."""
    _check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    opened = []  # opened in the new namespace (a bind's source must be in the caller's)
    try:
        for src, dest in binds:
            opened.append((os.open(src, os.O_PATH | os.O_CLOEXEC), dest))
    except OSError as exc:
        raise LaunchError(f"{exc.filename}: {exc.strerror}") from None
    _mount("tmpfs", STAGE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=711,size=64k")
    staged = []
    for n, (fd, dest) in enumerate(opened):
        target = f"{STAGE}/{n}"
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            os.mkdir(target)
        else:
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o600))
        _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
        os.close(fd)
        staged.append([target, dest])
    return staged


def bwrap_args(cfg: dict, binds: list[list[str]], seccomp_fd: int | None) -> list[str]:
    args = [
        cfg["bwrap"],
        "--unshare-all",  # user, mount, PID, network, IPC, UTS, cgroup namespaces
        "--unshare-user",
        "--disable-userns",  # and no more user namespaces inside
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--hostname",
        "bot",
        "--size",
        str(cfg["tmp_mb"] << 20),
        "--tmpfs",
        "/tmp",
    ]
    covers = cfg.get("covers", [])
    ops = [(link, ["--symlink", target, link]) for target, link in cfg["symlinks"]]
    ops += [(dest, ["--ro-bind", src, dest]) for src, dest in binds]
    ops += [(dest, ["--size", str(COVER_SIZE), "--tmpfs", dest]) for dest in covers]
    # parents first: a folder covered, then what is bound back into it
    for _, op in sorted(ops, key=lambda item: Path(item[0]).parts):
        args += op
    for dest in covers:
        args += ["--remount-ro", dest]
    # no procfs at all (an empty, read-only /proc): see "What a bot cannot read" in
    # arena.sandbox.process — a fresh procfs still shows the machine's memory, CPU and load
    # counters and, in every process's mountinfo, the host path of every bind
    args += ["--dev", "/dev", "--remount-ro", "/dev", "--dir", "/proc", "--remount-ro", "/"]
    args += ["--chdir", "/tmp"]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    return [*args, "--"]


# --- limits and identity -------------------------------------------------------------------


def set_limits(cfg: dict, nproc: bool) -> None:
    mem = cfg["memory_mb"] << 20
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_CPU, (cfg["cpu_s"], cfg["cpu_s"] + 1))
    fsize = cfg["fsize_mb"] << 20
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_NOFILE, (cfg["nofile"], cfg["nofile"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if nproc:
        resource.setrlimit(resource.RLIMIT_NPROC, (cfg["pids"], cfg["pids"]))


def drop_to(uid: int) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise LaunchError("could not drop to the seat's uid")


def seat_uid() -> int:
    return UID_BASE + os.getpid()


def _final_steps() -> None:
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    # after the uid change (which clears it): die with the arena even if it is SIGKILLed
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")


def confine(cfg: dict, cmd: list[str]) -> tuple[list[str], list[int]]:
    """Everything before exec: returns the full command line and the fds it needs."""
    root = os.geteuid() == 0
    seccomp_fd = None
    if cfg.get("seccomp"):
        try:
            lib = open_libseccomp()
        except OSError:
            lib = None  # isolation_note says so
        if lib is not None:
            profile = json.loads(Path(cfg["seccomp"]).read_text(encoding="utf-8"))
            seccomp_fd = seccomp_bpf_fd(lib, profile)
    binds = cfg["binds"]
    if root:
        join_cgroups(cfg)
        binds = stage(binds)
    elif cfg.get("prlimit"):  # inside the user namespace, it counts the sandbox alone
        cmd = [cfg["prlimit"], f"--nproc={cfg['pids']}", "--", *cmd]
    args = bwrap_args(cfg, binds, seccomp_fd) + cmd
    return args, [] if seccomp_fd is None else [seccomp_fd]


def main() -> None:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: python -I -S launch.py CONFIG_JSON -- COMMAND...")
    cfg = json.loads(sys.argv[1])
    cmd = sys.argv[3:]
    env = dict(os.environ)
    try:
        if not cfg.get("bwrap"):  # no confinement available: limits only
            set_limits(cfg, nproc=False)
            host = cfg["bot_host_dir"]
            cmd = [host + a[len(BOT_DIR) :] if a.startswith(BOT_DIR + "/") else a for a in cmd]
            env["ARENA_ADDRESS"] = cfg["host_address"]
            os.chdir(host)
            os.execve(cmd[0], cmd, env)
        args, fds = confine(cfg, cmd)
        for fd in fds:
            os.set_inheritable(fd, True)
        set_limits(cfg, nproc=os.geteuid() == 0)
        if os.geteuid() == 0:
            drop_to(seat_uid())
        _final_steps()
        os.execve(args[0], args, env)
    except (LaunchError, OSError, ValueError, KeyError) as exc:
        print(f"process sandbox: cannot confine the bot: {exc}", file=sys.stderr, flush=True)
        os._exit(70)


def probe(bwrap: str) -> str | None:
    """Whether bwrap can confine here, as the bots' user: None, or bwrap's own words."""
    import subprocess

    links = [["usr/" + n, "/" + n] for n in ("bin", "lib", "lib64") if os.path.islink("/" + n)]
    args = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent"]
    args += ["--ro-bind", "/usr", "/usr"]
    for target, link in links:
        args += ["--symlink", target, link]
    args += ["--dev", "/dev", "--dir", "/proc", "--", "/usr/bin/true"]  # as bwrap_args

    def become() -> None:
        if os.geteuid() == 0:
            drop_to(seat_uid())

    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=20, preexec_fn=become)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if proc.returncode == 0:
        return None
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    return lines[-1] if lines else f"bwrap exited with code {proc.returncode}"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--probe":
        problem = probe(sys.argv[2])
        print(problem or "ok")
        sys.exit(0 if problem is None else 1)
    main()
