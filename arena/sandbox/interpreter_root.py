"""The root a process-sandboxed bot's interpreter sees: only what it needs to run the SDK.

The shared libraries (``/usr``, ``/lib*``), the interpreter and its standard library, a
venv's ``pyvenv.cfg``, and of the packages the bot imports (the SDK, gRPC, protobuf) only
their own folders, with the import hooks and ``.pth`` files that find them — never the venv,
checkout or site-packages around them (:func:`runtime`).  Found by asking the bots'
interpreter itself what it imports from where (a probe run with the bot's flags), so that
an editable install, a venv or an SDK on ``PYTHONPATH`` each get exactly their own files.

Apart from :mod:`.process` (which starts and watches the bots) because it is a question
about this machine's Python, answered once per interpreter, not about any one bot."""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
from pathlib import Path

from .base import SandboxUnavailable

# what the bot imports, and where the arena found it (the sandbox binds those folders)
RUNTIME_MODULES = ("bigtwo", "grpc", "google.protobuf")
# and what the bot's entry point imports on top (its own imports: grpc.aio, the wire code)
RUNTIME_ENTRY = ("bigtwo.run", "bigtwo.client")

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
