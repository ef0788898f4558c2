"""What a user may name as a bot on the command line, resolved to a file to run.

A BOT is a sample bot's name (``random``, ``greedy``, ``heuristic``), a folder holding
``bot.py``, ``path/to/file.py[:Class]``, or ``remote[:NAME]`` for a seat whose bot someone
starts by hand and connects over TCP (``arena match --listen``).  Only existence is
checked here: the bot's code is untrusted and runs in its sandbox, never in the arena's
process (except ``inproc``)."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from bigtwo import samples
from bigtwo.loader import split_spec

SAFE_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")
"""A bot's name, and each part of a file's path in its folder: these reach image tags,
build contexts and other seats' screens, so anything that could be read as syntax there
(newlines, quotes, spaces, slashes, a leading dot or dash) is refused, not escaped."""
CLASS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")
"""A ``:Class`` suffix: an ASCII Python identifier (``str.isidentifier`` also takes any
Unicode letter, and the suffix ends up in the image's entrypoint)."""
SEAT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._:@#+-]{0,119}")
"""A bot's public name as it reaches an image or a seat: a safe name, possibly with the
``:Class``, ``@vN`` (ladder version) or ``#N`` (second seat) the arena adds, or one an
organizer gave (``arena bot build --name``)."""
MAX_BOT_FILES = 1000
MAX_PATH_CHARS = 255


class BotSpecError(ValueError):
    """A BOT argument that names nothing runnable; the message names it."""


@dataclass(frozen=True)
class BotSpec:
    name: str
    """Short public name, shown to every seat and in results."""
    path: Path | None
    """The bot's Python file (None for a remote seat)."""
    cls: str | None = None
    remote: bool = False
    """The arena starts nothing: the bot is run by hand and connects over TCP."""

    @property
    def runner_spec(self) -> str:
        """What ``python -m bigtwo.run`` takes."""
        return f"{self.path}:{self.cls}" if self.cls else str(self.path)

    @property
    def folder(self) -> Path:
        assert self.path is not None, "a remote seat has no folder"
        return self.path.parent


def _check_name(text: str, what: str, value: str, pattern: re.Pattern[str] = SAFE_PART) -> None:
    """Refuse a name outside the safe alphabet, in one line (the repr shows a newline as
    ``\\n`` rather than breaking the message)."""
    if not pattern.fullmatch(value):
        raise BotSpecError(
            f"bot {text!r}: {what} {value!r} is not allowed "
            "(letters, digits, '.', '_' and '-', not starting with '.' or '-', at most 100)"
            if pattern is SAFE_PART
            else f"bot {text!r}: {what} {value!r} is not an ASCII Python identifier"
        )


def check_spec(spec: BotSpec, text: str | None = None) -> None:
    """The parts of a bot that reach its image (file name, ``:Class``) are safe names.
    :func:`resolve` only makes specs that pass; an image build checks again because a spec
    may also be made elsewhere (a renamed seat, a ladder's stored spec)."""
    text = spec.name if text is None else text
    if not SEAT_NAME.fullmatch(spec.name):
        raise BotSpecError(
            f"bot {text!r}: name {spec.name!r} is not allowed (letters, digits and ._:@#+-, "
            "starting with a letter, digit or '_', at most 120)"
        )
    if spec.path is not None:
        _check_name(text, "file name", spec.path.name)
    if spec.cls is not None:
        _check_name(text, "class name", spec.cls, CLASS_NAME)


def is_sample_bot(spec: BotSpec) -> bool:
    """Whether ``spec`` is one of the sample bots shipped with the SDK (its code is ours:
    the entry check skips it, and the process sandbox runs it even unconfined)."""
    return spec.path is not None and samples.is_sample(spec.path)


def sample_names() -> list[str]:
    """The names that :func:`resolve` takes for a sample bot (:mod:`bigtwo.samples`)."""
    return samples.names()


def resolve(text: str) -> BotSpec:
    if text == "remote" or text.startswith("remote:"):
        name = text.partition(":")[2] or "remote"
        if not name.replace("-", "").replace("_", "").isalnum() or len(name) > 40:
            raise BotSpecError(f"bot {text!r}: a remote seat's name is letters, digits, - and _")
        return BotSpec(name, None, None, remote=True)
    spec = _resolve_local(text)
    check_spec(spec, text)
    return spec


def _resolve_local(text: str) -> BotSpec:
    """A sample bot, a folder or a file; its names checked against the safe alphabet."""
    target, cls = split_spec(text)
    if cls is not None:
        _check_name(text, "class name", cls, CLASS_NAME)
    sample = samples.path(target) if SAFE_PART.fullmatch(target) else None
    if sample is not None:
        return BotSpec(target, sample, cls)
    p = Path(target).expanduser()
    if p.is_dir():
        if (p / "bot.py").is_symlink():
            raise BotSpecError(f"bot {text!r}: {str(p / 'bot.py')!r} is a link, not a file")
        if not (p / "bot.py").is_file():
            raise BotSpecError(f"bot {text!r}: folder {str(p)!r} has no bot.py")
        name = p.resolve().name
        _check_name(text, "folder name", name)
        return BotSpec(name, (p / "bot.py").resolve(), cls)
    if p.is_file():
        if p.suffix != ".py":
            raise BotSpecError(f"bot {text!r}: {str(p)!r} is not a .py file")
        name = p.stem if p.stem != "bot" else p.resolve().parent.name
        _check_name(text, "name", name)
        return BotSpec(name + (f":{cls}" if cls else ""), p.resolve(), cls)
    known = ", ".join(sample_names()) or "none found"
    raise BotSpecError(
        f"bot {text!r}: no such sample bot, folder or file (sample bots: {known}; "
        "or give a folder with bot.py, path/to/file.py[:Class], or remote[:NAME])"
    )


def unique_names(specs: list[BotSpec]) -> list[str]:
    """Seat names: the bots' names, numbered where the same bot sits twice."""
    counts: dict[str, int] = {}
    for s in specs:
        counts[s.name] = counts.get(s.name, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for s in specs:
        if counts[s.name] > 1:
            seen[s.name] = seen.get(s.name, 0) + 1
            out.append(f"{s.name}#{seen[s.name]}")
        else:
            out.append(s.name)
    return out


MAX_BOT_BYTES = 50 << 20
"""A folder bot may hold at most this much (its image and its identity are made of it; the
web arena's default unpacked cap for uploads, 50 MiB, is this)."""


def bot_files(spec: BotSpec) -> dict[str, bytes]:
    """The files that make the bot: its whole folder for a folder bot (bot.py, helpers,
    requirements.txt; no dotfiles, caches or links), the file alone for a file bot.  What
    goes into its image and what its version is named by, so the two always agree.

    Every path part must be a safe name (:data:`SAFE_PART`), and the count, path length and
    total size are bounded: a file name is contestant input that reaches the image's build
    context, so one that is not plain is refused rather than copied."""
    if spec.path is None:
        raise BotSpecError(f"bot {spec.name!r} has no files")
    check_spec(spec)
    if spec.path.name != "bot.py":
        return {spec.path.name: _read_capped(spec, spec.path, 0)}
    root = spec.path.parent
    files: dict[str, bytes] = {}
    total = 0
    for rel in _folder_paths(spec, root):
        data = _read_capped(spec, root / rel, total)
        total += len(data)
        files[rel] = data
    return files


def _folder_paths(spec: BotSpec, root: Path) -> list[str]:
    """The folder's regular files, relative and sorted; dot-folders and caches are not
    entered, links not followed, and every other name is checked."""
    found: list[str] = []
    for here, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not _skipped(d))
        for name in sorted(names):
            if _skipped(name):
                continue
            p = Path(here) / name
            if p.is_symlink() or not p.is_file():
                continue
            rel = p.relative_to(root)
            for part in rel.parts:
                _check_name(spec.name, "file name", part)
            if len(str(rel)) > MAX_PATH_CHARS:
                raise BotSpecError(f"bot {spec.name!r}: path {str(rel)!r} is too long")
            found.append(str(rel))
            if len(found) > MAX_BOT_FILES:
                raise BotSpecError(f"bot {spec.name!r}: folder holds over {MAX_BOT_FILES} files")
    return sorted(found)


def _skipped(name: str) -> bool:
    """Not part of a bot: hidden files and folders (.git, .venv) and bytecode caches."""
    return name.startswith(".") or name == "__pycache__"


def _read_capped(spec: BotSpec, path: Path, total: int) -> bytes:
    """A file's bytes, refused before reading when the bot would exceed its size cap."""
    with path.open("rb") as f:
        data = f.read(MAX_BOT_BYTES - total + 1)
    if total + len(data) > MAX_BOT_BYTES:
        raise BotSpecError(f"bot {spec.name!r}: its files hold over 20 MiB")
    return data


def bot_digest(files: dict[str, bytes]) -> str:
    """A content hash of :func:`bot_files`: a bot version's identity."""
    h = hashlib.sha256()
    for name, data in sorted(files.items()):
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


_IN_SANDBOX = re.compile(r"/bot/([A-Za-z0-9_.\-][A-Za-z0-9_.\-/]*)")


def as_authored(spec: BotSpec, text: str) -> str:
    """``text`` (a fault's detail, a traceback) with the paths a sandbox gives the bot's
    files (``/bot/…``: its folder's files, a file bot's as ``/bot/bot.py`` in docker and
    under its own name in the process sandbox) replaced by the files the author wrote."""
    path = spec.path
    if path is None:
        return text
    folder = path.parent

    def mapped(m: re.Match[str]) -> str:
        rel = m.group(1)
        if rel == "bot.py" or rel == path.name:
            return str(path)
        return str(folder / rel)

    return _IN_SANDBOX.sub(mapped, text)
