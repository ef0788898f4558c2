"""What a user may name as a bot on the command line, resolved to a file to run.

A BOT is a sample bot's name (``random``, ``greedy``, ``heuristic``), a folder holding
``bot.py``, ``path/to/file.py[:Class]``, or ``remote[:NAME]`` for a seat whose bot someone
starts by hand and connects over TCP (``arena match --listen``).  Only existence is
checked here: the bot's code is untrusted and runs in its sandbox, never in the arena's
process (except ``inproc``)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from bigtwo.loader import split_spec

SAMPLE_BOTS = Path(__file__).resolve().parents[1] / "sample_bots"


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
        return self.path.parent


def sample_names() -> list[str]:
    if not SAMPLE_BOTS.is_dir():
        return []
    return sorted(p.name for p in SAMPLE_BOTS.iterdir() if (p / "bot.py").is_file())


def resolve(text: str) -> BotSpec:
    if text == "remote" or text.startswith("remote:"):
        name = text.partition(":")[2] or "remote"
        if not name.replace("-", "").replace("_", "").isalnum() or len(name) > 40:
            raise BotSpecError(f"bot {text!r}: a remote seat's name is letters, digits, - and _")
        return BotSpec(name, None, None, remote=True)
    target, cls = split_spec(text)
    if "/" not in target and not target.endswith(".py") and (SAMPLE_BOTS / target).is_dir():
        path = SAMPLE_BOTS / target / "bot.py"
        return BotSpec(target, path, cls)
    p = Path(target).expanduser()
    if p.is_dir():
        if not (p / "bot.py").is_file():
            raise BotSpecError(f"bot {text!r}: folder {p} has no bot.py")
        return BotSpec(p.resolve().name, (p / "bot.py").resolve(), cls)
    if p.is_file():
        if p.suffix != ".py":
            raise BotSpecError(f"bot {text!r}: {p} is not a .py file")
        name = p.stem if p.stem != "bot" else p.resolve().parent.name
        return BotSpec(name + (f":{cls}" if cls else ""), p.resolve(), cls)
    samples = ", ".join(sample_names()) or "none found"
    raise BotSpecError(
        f"bot {text!r}: no such sample bot, folder or file (sample bots: {samples}; "
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


MAX_BOT_BYTES = 20 << 20
"""A folder bot may hold at most this much (its image and its identity are made of it)."""


def bot_files(spec: BotSpec) -> dict[str, bytes]:
    """The files that make the bot: its whole folder for a folder bot (bot.py, helpers,
    requirements.txt; no dotfiles, caches or links), the file alone for a file bot.  What
    goes into its image and what its version is named by, so the two always agree."""
    if spec.path is None:
        raise BotSpecError(f"bot {spec.name!r} has no files")
    files: dict[str, bytes] = {}
    if spec.path.name != "bot.py":
        files[spec.path.name] = spec.path.read_bytes()
        return files
    root = spec.path.parent
    total = 0
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if (
            p.is_symlink()
            or not p.is_file()
            or any(part.startswith(".") or part == "__pycache__" for part in rel.parts)
        ):
            continue
        data = p.read_bytes()
        total += len(data)
        if total > MAX_BOT_BYTES:
            raise BotSpecError(f"bot {spec.name!r}: folder {root} holds over 20 MiB")
        files[str(rel)] = data
    return files


def bot_digest(files: dict[str, bytes]) -> str:
    """A content hash of :func:`bot_files`: a bot version's identity."""
    h = hashlib.sha256()
    for name, data in sorted(files.items()):
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()
