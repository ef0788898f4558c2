"""The gate a participant's bot upload passes before anything is written or run.

An upload is a single ``.py`` file (it becomes ``bot.py``), or a ``.zip`` / ``.tar.gz``
(``.tgz``) holding ``bot.py`` with an optional ``requirements.txt`` and data files, possibly
all inside one top-level folder (people zip their folder: ``mybot/bot.py``), which is
stripped.  Everything in it is hostile, so :func:`check_upload` works in memory, never
decompresses more than its caps plus one byte, and refuses with a one-line reason
(:class:`UploadRefused`) before anything touches the disk:

- size: over ``max_packed`` (before opening it); unpacked over ``max_unpacked`` or the
  arena's own per-bot cap (:data:`arena.bots.MAX_BOT_BYTES`), counted while reading in
  bounded steps (declared sizes only allow an earlier refusal, they are never trusted);
- bombs: a zip member, or the whole archive, unpacking to over ``max_ratio`` times its
  packed size (below :data:`RATIO_FLOOR` bytes the ratio is not judged);
- counts: over ``max_entries`` entries of any kind, over ``max_files`` files kept;
- names: empty, with a control or invisible character, a backslash, a drive letter, an
  absolute path, a ``..`` part, deeper than :data:`MAX_DEPTH`; after the wrapping folder
  is stripped every part must be an :data:`arena.bots.SAFE_PART` (ASCII letters, digits,
  ``._-``, not starting with ``.`` or ``-``, at most 100 characters) and the path at most
  :data:`arena.bots.MAX_PATH_CHARS`; two names equal up to case (they collide on some
  filesystems); a name that is both a file and a folder;
- kinds: symlinks, hard links, devices, fifos, sparse files, anything but a regular file
  or a folder; encrypted zip members; zip methods other than stored and deflate (zipfile
  cannot inflate bzip2 or lzma in bounded steps);
- content: no ``bot.py``, a ``bot.py`` empty or not UTF-8, a ``requirements.txt`` the image
  build would refuse (the build's own :func:`arena.sandbox.images.parse_requirements`);
- form: a name not ending in ``.py``/``.zip``/``.tar.gz``/``.tgz``, magic bytes that
  contradict it, a damaged or truncated archive.

Before ``zipfile`` or ``tarfile`` reads any metadata, :mod:`arena.web.archive_scan` walks
it and refuses what is oversized or malformed (the parsers' own cost is quadratic or
unbounded on some of it); and the server runs all of this in a short-lived child process
under CPU, memory and wall-clock limits (:mod:`arena.web.archive_check`), never in itself.

Silently dropped, after the checks above (they are what :func:`arena.bots.bot_files`
skips in a folder, so an upload's digest is the one the ladder computes for the folder
:func:`write_bot_folder` makes): hidden files and folders (a part starting with ``.``:
``.DS_Store``, ``.git/``, macOS's ``._x``), ``__pycache__/`` and a top-level ``__MACOSX/``.
Folder entries are ignored: folders come from the files' paths.  Archives inside the
upload are plain data files (never opened), counted like any other file.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import math
import os
import re
import shutil
import stat
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Protocol

from ..bots import MAX_BOT_BYTES, MAX_BOT_FILES, MAX_PATH_CHARS, SAFE_PART, bot_digest
from ..sandbox.images import ImageBuildError, parse_requirements
from .archive_scan import ArchiveDamaged, ArchiveRefused, scan_tar, scan_zip

RATIO_FLOOR = 1 << 20
"""A member (or archive) unpacking to at most this many bytes is never refused for its
ratio: small files of zeros compress very well and harm nobody; the size caps bound them."""
MAX_DEPTH = 8
"""Path parts a file may have below the bot's folder."""
TAR_OVERHEAD = 3 << 10
"""Bytes a tar may spend per entry beyond its content (header, padding, long-name block)."""
_CHUNK = 1 << 16
_DAMAGED = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    tarfile.TarError,
    EOFError,
    zlib.error,
    OSError,  # gzip.BadGzipFile among them
    ValueError,  # UnicodeDecodeError of a name flagged UTF-8, bad seeks
    NotImplementedError,
    struct.error,
    OverflowError,
    ArchiveDamaged,  # (a ValueError too: named for the reader)
)
"""What the standard library's archive readers raise on a damaged or hostile archive."""


class UploadRefused(ValueError):
    """An upload that is not accepted; the message is one line, for the participant."""


@dataclass(frozen=True)
class UploadLimits:
    """An organizer's caps on uploads (stored in the ladder's settings as a dict)."""

    max_packed: int = 5 * 2**20
    max_unpacked: int = 50 * 2**20
    max_files: int = 200
    max_entries: int = 1000
    """Entries of any kind (folders and dropped files too): bounds the work before reading."""
    max_ratio: float = 100.0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if f.name == "max_ratio":
                if not (number and math.isfinite(value) and value >= 1):
                    raise ValueError(f"upload limit max_ratio must be a number >= 1, not {value!r}")
                object.__setattr__(self, f.name, float(value))
            elif not (number and isinstance(value, int) and value > 0):
                raise ValueError(
                    f"upload limit {f.name} must be a positive whole number, not {value!r}"
                )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> UploadLimits:
        """Limits from settings; a missing key keeps its default, an unknown one is refused."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(
                f"unknown upload limit {', '.join(map(repr, unknown))} "
                f"(known: {', '.join(sorted(known))})"
            )
        return cls(**d)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class UploadedBot:
    files: dict[str, bytes]
    """Relative POSIX path -> content; always holds ``bot.py``."""
    kind: str
    """``py``, ``zip`` or ``tar.gz``."""
    digest: str
    """:func:`arena.bots.bot_digest` of the files: the same code uploaded again is the same
    version, and the folder written from it hashes the same in the ladder."""


@dataclass(frozen=True)
class _Member:
    """A regular file of the archive, listed but not read yet."""

    name: str
    parts: tuple[str, ...]
    declared: int
    packed: int | None
    """Its compressed size (zip), for the per-member ratio; None in a tar (one stream)."""
    read: Callable[[int], bytes]
    """Its bytes, at most the argument plus one."""


def _show(name: str, limit: int = 60) -> str:
    """A hostile name for a message: ASCII-escaped (no control characters), capped."""
    return ascii(name[:limit]) + ("..." if len(name) > limit else "")


def _size(n: float) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{int(n)} bytes"


class _Readable(Protocol):
    def read(self, n: int, /) -> bytes: ...


def _read_capped(f: _Readable, cap: int) -> bytes:
    """At most ``cap + 1`` bytes of ``f``, in bounded reads."""
    out = bytearray()
    while len(out) <= cap:
        chunk = f.read(min(_CHUNK, cap + 1 - len(out)))
        if not chunk:
            break
        out += chunk
    return bytes(out)


def check_upload(filename: str, data: bytes, limits: UploadLimits | None = None) -> UploadedBot:
    """The upload as the files of a bot folder, or :class:`UploadRefused` saying why."""
    limits = limits or UploadLimits()
    if len(data) > limits.max_packed:
        raise UploadRefused(
            f"the upload is {_size(len(data))}; the limit is {_size(limits.max_packed)}"
        )
    kind = _kind(filename, data)
    if kind == "py":
        files = {"bot.py": data}
    else:
        try:
            if kind == "zip":
                scan_zip(data, limits.max_entries)  # before zipfile reads its directory
                with zipfile.ZipFile(io.BytesIO(data)) as zf:
                    files = _read_files(_zip_members(zf, limits), limits, len(data))
            else:
                tar = _gunzip(data, limits)
                scan_tar(tar, limits.max_entries)  # before tarfile parses a header
                with tarfile.open(
                    fileobj=io.BytesIO(tar), mode="r:", encoding="utf-8", errors="surrogateescape"
                ) as tf:
                    files = _read_files(_tar_members(tf, limits), limits, len(data))
        except UploadRefused:
            raise
        except ArchiveRefused as exc:
            raise UploadRefused(str(exc)) from None
        except _DAMAGED as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise UploadRefused(
                f"the {kind} archive is damaged or unreadable ({_show(reason, 100)})"
            ) from None
    _check_content(files)
    return UploadedBot(files, kind, bot_digest(files))


def _kind(filename: str, data: bytes) -> str:
    """The kind the name's suffix says, confirmed by the content's first bytes."""
    lower = filename.lower()
    kind = next((k for suffix, k in _SUFFIXES if lower.endswith(suffix)), None)
    if kind is None:
        raise UploadRefused("upload a .py file, or a .zip or .tar.gz (.tgz) archive")
    looks = _looks_like(data)
    if kind != "py" and looks != kind:
        seems = f" (it looks like a {looks} archive)" if looks else ""
        raise UploadRefused(f"the file is named .{kind} but is not a {kind} archive{seems}")
    if kind == "py" and looks in ("zip", "tar.gz"):
        raise UploadRefused(f"the file is named .py but is a {looks} archive")
    return kind


def _looks_like(data: bytes) -> str | None:
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if data[:2] == b"\x1f\x8b":
        return "tar.gz"
    return "tar" if data[257:262] == b"ustar" else None


_SUFFIXES = ((".tar.gz", "tar.gz"), (".tgz", "tar.gz"), (".zip", "zip"), (".py", "py"))


def _parts(name: str) -> tuple[str, ...]:
    """A member's path parts (``.`` and empty parts dropped), refused when hostile."""
    shown = _show(name)
    if not name:
        raise UploadRefused("the archive holds an entry with an empty name")
    if not name.isprintable():
        raise UploadRefused(f"the name {shown} holds a control or invisible character")
    if "\\" in name:
        raise UploadRefused(f"the name {shown} holds a backslash")
    if name.startswith("/"):
        raise UploadRefused(f"the name {shown} is an absolute path")
    if re.match(r"[A-Za-z]:", name):
        raise UploadRefused(f"the name {shown} starts with a drive letter")
    parts = tuple(p for p in name.split("/") if p not in ("", "."))
    if ".." in parts:
        raise UploadRefused(f"the name {shown} climbs out of the folder ('..')")
    return parts


def _zip_members(zf: zipfile.ZipFile, limits: UploadLimits) -> list[_Member]:
    infos = zf.infolist()
    if len(infos) > limits.max_entries:
        raise UploadRefused(f"the archive holds over {limits.max_entries} entries")
    members = []
    for info in infos:
        parts = _parts(info.orig_filename)  # filename is cut at a NUL; the original is not
        shown = _show(info.orig_filename)
        kind = stat.S_IFMT(info.external_attr >> 16)
        if kind == stat.S_IFLNK:
            raise UploadRefused(f"{shown} is a symlink")
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise UploadRefused(f"{shown} is a special file (device, fifo or socket)")
        if info.flag_bits & 0x41:
            raise UploadRefused(f"{shown} is encrypted")
        if info.is_dir() or kind == stat.S_IFDIR:
            continue
        if not parts:
            raise UploadRefused(f"the name {shown} names no file")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise UploadRefused(
                f"{shown} uses compression method {info.compress_type}; "
                "only stored and deflate (every zip tool's default) are accepted"
            )

        def read(cap: int, info: zipfile.ZipInfo = info) -> bytes:
            with zf.open(info) as f:
                return _read_capped(f, cap)

        members.append(_Member(info.orig_filename, parts, info.file_size, info.compress_size, read))
    return members


def _gunzip(data: bytes, limits: UploadLimits) -> bytes:
    """The tar inside a gzip stream, bounded by the size cap (plus the tar's own overhead)
    and by the ratio cap, whichever is lower."""
    by_size = min(limits.max_unpacked, MAX_BOT_BYTES) + TAR_OVERHEAD * (limits.max_entries + 8)
    by_ratio = max(RATIO_FLOOR, int(limits.max_ratio * len(data)))
    with gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb") as f:
        tar = _read_capped(f, min(by_size, by_ratio))
    if len(tar) > by_ratio and by_ratio < by_size:
        raise UploadRefused(f"the archive's compression ratio is over {limits.max_ratio:g}")
    if len(tar) > by_size:
        raise UploadRefused(f"the archive unpacks to over {_size(by_size)}")
    return tar


def _tar_members(tf: tarfile.TarFile, limits: UploadLimits) -> list[_Member]:
    members = []
    for count, m in enumerate(tf, start=1):
        if count > limits.max_entries:
            raise UploadRefused(f"the archive holds over {limits.max_entries} entries")
        parts = _parts(m.name)
        shown = _show(m.name)
        if m.issym():
            raise UploadRefused(f"{shown} is a symlink")
        if m.islnk():
            raise UploadRefused(f"{shown} is a hard link")
        if m.issparse():
            raise UploadRefused(f"{shown} is a sparse file")
        if m.isdir():
            continue
        if not m.isreg():
            raise UploadRefused(f"{shown} is a special file (device, fifo or other)")
        if not parts:
            raise UploadRefused(f"the name {shown} names no file")

        def read(cap: int, m: tarfile.TarInfo = m) -> bytes:
            f = tf.extractfile(m)
            assert f is not None  # a regular member
            out = _read_capped(f, cap)
            if len(out) <= cap and len(out) != m.size:
                raise UploadRefused(f"the tar.gz archive is truncated in {_show(m.name)}")
            return out

        members.append(_Member(m.name, parts, m.size, None, read))
    return members


def _dropped(parts: tuple[str, ...]) -> bool:
    """Not part of a bot (see the module's docstring); never written."""
    return parts[0] == "__MACOSX" or any(p.startswith(".") or p == "__pycache__" for p in parts)


def _read_files(members: list[_Member], limits: UploadLimits, packed: int) -> dict[str, bytes]:
    """The kept files' contents, after their names are checked, within every cap."""
    kept = [m for m in members if not _dropped(m.parts)]
    wrapped = len({m.parts[0] for m in kept}) == 1 and all(len(m.parts) > 1 for m in kept)
    if wrapped and ("bot.py",) not in {m.parts for m in kept}:
        kept = [replace(m, parts=m.parts[1:]) for m in kept]  # the folder people zip
    max_files = min(limits.max_files, MAX_BOT_FILES)
    if len(kept) > max_files:
        raise UploadRefused(f"the archive holds over {max_files} files")
    paths = check_paths([m.parts for m in kept])
    if "bot.py" not in paths:
        raise UploadRefused("no bot.py at the top of the archive (or of its one top folder)")
    size_cap = min(limits.max_unpacked, MAX_BOT_BYTES)
    overall_cap = max(RATIO_FLOOR, limits.max_ratio * packed)
    files: dict[str, bytes] = {}
    total = 0
    for m, path in zip(kept, paths, strict=True):
        left = size_cap - total
        by_ratio = left if m.packed is None else max(RATIO_FLOOR, int(limits.max_ratio * m.packed))
        _judge(m, m.declared, left, by_ratio, size_cap, limits)  # before reading: a hint
        data = m.read(min(left, by_ratio))
        _judge(m, len(data), left, by_ratio, size_cap, limits)  # what was really read
        total += len(data)
        if total > overall_cap:
            raise UploadRefused(f"the archive's compression ratio is over {limits.max_ratio:g}")
        files[path] = data
    return files


def _judge(m: _Member, size: int, left: int, by_ratio: int, cap: int, lim: UploadLimits) -> None:
    """Refuse a member of ``size`` bytes over its ratio cap (the likelier story: a bomb) or
    over what the size cap leaves."""
    if m.packed is not None and size > by_ratio and by_ratio <= left:
        raise UploadRefused(f"{_show(m.name)} has a compression ratio over {lim.max_ratio:g}")
    if size > left:
        raise UploadRefused(f"the archive unpacks to over {_size(cap)}")


def check_paths(all_parts: list[tuple[str, ...]]) -> list[str]:
    """The paths joined, each part a safe name, no two equal up to case, none both a file
    and a folder."""
    paths = []
    seen: dict[str, str] = {}
    folders: set[str] = set()
    for parts in all_parts:
        path = "/".join(parts)
        for part in parts:
            if not SAFE_PART.fullmatch(part):
                raise UploadRefused(
                    f"the name {_show(path)} is not allowed: each part is letters, digits, "
                    "'.', '_' and '-', not starting with '.' or '-', at most 100 characters"
                )
        if len(parts) > MAX_DEPTH or len(path) > MAX_PATH_CHARS:
            raise UploadRefused(f"the path {_show(path)} is too deep or too long")
        key = path.lower()
        if key in seen:
            same = (
                "is there twice"
                if seen[key] == path
                else f"differs only in case from {_show(seen[key])}"
            )
            raise UploadRefused(f"the name {_show(path)} {same} (duplicate)")
        seen[key] = path
        folders.update("/".join(parts[:i]).lower() for i in range(1, len(parts)))
        paths.append(path)
    both = sorted(set(seen) & folders)
    if both:
        raise UploadRefused(f"{_show(seen[both[0]])} is both a file and a folder")
    return paths


def _check_content(files: dict[str, bytes]) -> None:
    """bot.py is UTF-8 text with something in it; requirements.txt is what the build takes."""
    bot = files["bot.py"]
    try:
        bot.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UploadRefused(f"bot.py is not UTF-8 text (byte {exc.start})") from None
    if not bot.strip():
        raise UploadRefused("bot.py is empty")
    if "requirements.txt" in files:
        try:
            parse_requirements(files["requirements.txt"], "upload")
        except ImageBuildError as exc:
            raise UploadRefused(str(exc).removeprefix("bot 'upload': ")) from None


def write_bot_folder(bot: UploadedBot, dest: Path) -> Path:
    """Write ``bot``'s files into the new folder ``dest`` (its parents are made; ``dest``
    itself must not exist: FileExistsError).  Folders 0o755, files 0o644; every part is
    opened relative to its parent's descriptor with ``O_NOFOLLOW``, and files with
    ``O_EXCL``, so nothing is written through a link.  On any failure ``dest`` is removed."""
    paths = check_paths([tuple(p.split("/")) for p in bot.files])
    if "bot.py" not in paths:
        raise UploadRefused("no bot.py")
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.mkdir(dest, 0o755)
    try:
        root = os.open(dest, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            os.fchmod(root, 0o755)
            for path in sorted(paths):
                _write_file(root, path.split("/"), bot.files[path])
        finally:
            os.close(root)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return dest


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _write_file(root: int, parts: list[str], data: bytes) -> None:
    opened: list[int] = []
    here = root
    try:
        for part in parts[:-1]:
            with contextlib.suppress(FileExistsError):  # made for an earlier file
                os.mkdir(part, 0o755, dir_fd=here)  # (opening it re-checks it is a folder)
            here = os.open(part, _DIR_FLAGS, dir_fd=here)
            opened.append(here)
            os.fchmod(here, 0o755)
        fd = os.open(parts[-1], _FILE_FLAGS, 0o644, dir_fd=here)
        with open(fd, "wb") as f:
            os.fchmod(fd, 0o644)
            f.write(data)
    finally:
        for fd in opened:
            os.close(fd)
