"""The process sandbox's launcher: confine, then exec the bot.

    python -m arena.sandbox.launch CONFIG_JSON -- COMMAND...

The arena starts every ``process`` bot through this small program rather than with a
``preexec_fn`` (running Python between fork and exec in a process with gRPC threads can
deadlock or abort the child).  Run as root on Linux, it:

1. joins a pids control group of its own (cgroup v1 or v2) capped at ``pids`` processes,
   so a fork bomb stops there, and so the arena can kill every process the bot started;
2. unshares mount, PID, network, IPC and UTS namespaces and forks: the child is PID 1 of
   the new PID namespace, so when it dies the kernel kills everything the bot left behind;
3. in the child: a fresh ``/proc`` (the bot sees only its own processes), a size-limited
   tmpfs on ``/tmp`` and on ``/run`` (no other match's folders, no host sockets such as the
   Docker engine's), the seat's socket folder bind-mounted read-only at ``/run/arena``,
   every other mount read-only, and a new network namespace with no interface up (no
   network at all);
4. drops every capability (bounding set too), sets no-new-privileges, and loads the same
   seccomp rules as the docker backend (``seccomp.json``, through libseccomp: io_uring and
   AF_VSOCK denied among others), so the bot cannot undo any of this;
5. sets resource limits (address space, CPU seconds, file size, open files, no core) and
   execs the bot.

Where any step is impossible (not root, no namespaces), it says so on stderr — which the
arena records — and goes on with what it could do.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
from pathlib import Path

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 24, 38
SOCKET_DIR = "/run/arena"

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None = None):
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    _check(_libc.mount(enc(src), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def warn(text: str) -> None:
    print(f"process sandbox: {text}", file=sys.stderr, flush=True)


def join_pids_cgroup(name: str, pids: int) -> None:
    for base in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")):
        if not (base / "cgroup.procs").exists():
            continue
        group = base / "bigtwo-arena" / name
        try:
            group.mkdir(parents=True, exist_ok=True)
            (group / "pids.max").write_text(str(pids))
            (group / "cgroup.procs").write_text(str(os.getpid()))
            return
        except OSError as exc:
            warn(f"no pids control group ({exc}); a fork bomb is limited by nothing but time")
            return
    warn("no pids controller found; a fork bomb is limited by nothing but time")


def drop_capabilities() -> None:
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for cap in range(last + 1):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [
            ("effective", ctypes.c_uint32),
            ("permitted", ctypes.c_uint32),
            ("inheritable", ctypes.c_uint32),
        ]

    header = Header(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (Data * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


BOT_DIR = "/run/bot"


def _bind_back(fds: dict[str, int]) -> None:
    """Mount each kept folder (opened before /tmp was covered) read-only at its own path."""
    for path, fd in fds.items():
        os.makedirs(path, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND)
        _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
        os.close(fd)


def confine_child(sock_dir: str, bot_dir: str, tmp_mb: int, keep: list[str]) -> None:
    """In the new namespaces, as PID 1: build the bot's view of the filesystem.

    ``keep``: folders under /tmp or /run the bot's interpreter needs (an SDK installed from
    a checkout there), mounted back read-only at their own paths."""
    sock_fd = os.open(sock_dir, os.O_PATH | os.O_DIRECTORY)
    bot_fd = os.open(bot_dir, os.O_PATH | os.O_DIRECTORY)
    covered = ("/tmp/", "/run/")
    keep_fds = {
        p: os.open(p, os.O_PATH | os.O_DIRECTORY)
        for p in keep
        if p.startswith(covered) and os.path.isdir(p)
    }
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={tmp_mb}m,mode=1777")
    _mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=1m,mode=755")
    os.mkdir(SOCKET_DIR, 0o755)
    _mount(f"/proc/self/fd/{sock_fd}", SOCKET_DIR, None, MS_BIND)
    _mount(None, SOCKET_DIR, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.close(sock_fd)
    os.mkdir(BOT_DIR, 0o755)  # the bot's own folder, read-only (it may live under /tmp)
    _mount(f"/proc/self/fd/{bot_fd}", BOT_DIR, None, MS_BIND)
    os.close(bot_fd)
    _bind_back(keep_fds)
    refused = remount_read_only(keep={"/tmp", SOCKET_DIR, *keep_fds})
    if refused:
        warn(f"could not make read-only: {', '.join(refused[:5])}")


def remount_read_only(keep: set[str]) -> list[str]:
    """Make every mount point of this (private) namespace read-only, but ``keep``;
    returns the ones that refused."""
    refused = []
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if len(fields) > 4:
            points.append(fields[4].encode().decode("unicode_escape"))
    for point in points:
        if point in keep:
            continue
        try:
            _mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID)
        except OSError:
            refused.append(point)
    return refused


SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_ACT_ERRNO = 0x00050000
SCMP_OPS = {"SCMP_CMP_EQ": 4, "SCMP_CMP_MASKED_EQ": 7}


def open_libseccomp() -> ctypes.CDLL:
    """libseccomp, loaded before confinement (finding it runs ldconfig)."""
    import ctypes.util

    name = ctypes.util.find_library("seccomp")
    if name is None:
        raise OSError("libseccomp is not installed (Debian: libseccomp2)")
    return ctypes.CDLL(name, use_errno=True)


def load_seccomp(lib: ctypes.CDLL, profile: dict) -> None:
    """The docker profile's rules (seccomp.json), applied through libseccomp."""
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
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        raise OSError("seccomp_init failed")
    for rule in profile["syscalls"]:
        action = SCMP_ACT_ERRNO | (rule.get("errnoRet", 1) & 0xFFFF)
        args = rule.get("args", [])
        cmps = (ArgCmp * max(1, len(args)))(
            *[ArgCmp(a["index"], SCMP_OPS[a["op"]], a["value"], a.get("valueTwo", 0)) for a in args]
        )
        for syscall in rule["names"]:
            nr = lib.seccomp_syscall_resolve_name(syscall.encode())
            if nr < 0:
                continue  # not a syscall on this architecture
            if lib.seccomp_rule_add_array(ctx, action, nr, len(args), cmps) != 0:
                raise OSError(f"seccomp rule for {syscall} refused")
    if lib.seccomp_load(ctx) != 0:
        raise OSError("seccomp_load failed")


def set_limits(cfg: dict) -> None:
    mem = cfg["memory_mb"] << 20
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_CPU, (cfg["cpu_s"], cfg["cpu_s"] + 1))
    fsize = cfg["fsize_mb"] << 20
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_NOFILE, (cfg["nofile"], cfg["nofile"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def main() -> None:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: python -m arena.sandbox.launch CONFIG_JSON -- COMMAND...")
    cfg = json.loads(sys.argv[1])
    cmd = sys.argv[3:]
    env = dict(os.environ)
    isolated = False
    seccomp: tuple[ctypes.CDLL, dict] | None = None
    if os.geteuid() == 0 and sys.platform == "linux":
        # before unshare: finding libseccomp runs ldconfig, and the first process forked
        # after unsharing the PID namespace would become (and, exiting, kill) its init
        try:
            seccomp = (
                open_libseccomp(),
                json.loads(Path(cfg["seccomp"]).read_text()),
            )
        except (OSError, ValueError) as exc:
            warn(f"no seccomp filter ({exc}): io_uring and AF_VSOCK stay open")
            seccomp = None
        join_pids_cgroup(cfg["cgroup"], cfg["pids"])
        try:
            flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
            _check(_libc.unshare(flags), "unshare")
            isolated = True
        except OSError as exc:
            warn(
                f"no namespaces ({exc}): the bot shares the network, /tmp and the process "
                "table with the machine"
            )
    else:
        warn(
            "not root: no namespaces or control groups; the bot shares the network, /tmp "
            "and the process table with the machine"
        )
    if not isolated:
        set_limits(cfg)
        os.execvpe(cmd[0], cmd, env)
    child = os.fork()
    if child == 0:  # PID 1 of the new PID namespace
        try:
            confine_child(cfg["sock_dir"], cfg["bot_dir"], cfg["tmp_mb"], cfg.get("keep", []))
            cmd = [BOT_DIR + "/" + cfg["bot_entry"] if a == cfg["bot_spec"] else a for a in cmd]
            env["ARENA_ADDRESS"] = f"unix://{SOCKET_DIR}/referee.sock"
            env["HOME"] = env["TMPDIR"] = "/tmp"
            drop_capabilities()
            if seccomp is not None:
                try:
                    load_seccomp(*seccomp)
                except OSError as exc:
                    warn(f"no seccomp filter ({exc}): io_uring and AF_VSOCK stay open")
            set_limits(cfg)
            os.chdir("/tmp")
            os.execvpe(cmd[0], cmd, env)
        except Exception as exc:  # never fall through into the parent's code
            print(f"process sandbox: confinement failed: {exc}", file=sys.stderr, flush=True)
            os._exit(70)
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):  # die the same way, so the arena sees the signal
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
