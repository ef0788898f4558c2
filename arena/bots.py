"""What a user may name as a bot on the command line, resolved to a file to run.

A BOT is a sample bot's name (``random``, ``greedy``, ``heuristic``), a folder holding
``bot.py``, ``path/to/file.py[:Class]``, or ``remote[:NAME]`` for a seat whose bot someone
starts by hand and connects over TCP (``arena match --listen``).  Only existence is
checked here: the bot's code is untrusted and runs in its sandbox, never in the arena's
process (except ``inproc``)."""

from __future__ import annotations

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
