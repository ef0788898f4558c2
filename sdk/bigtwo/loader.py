"""Finding a bot class from what a user types: ``module:Class``, ``path/bot.py[:Class]`` or
a folder holding ``bot.py``.  Pure standard library, shared by the runner and the arena."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import traceback
from pathlib import Path
from types import ModuleType

from .bot import Bot


class BotLoadError(Exception):
    """The bot could not be found or loaded; the message names what is wrong."""


def describe_error(exc: BaseException, folder: str | os.PathLike[str] | None) -> str:
    """One line an author can act on: the exception and where in *their* code it happened —
    ``IndexError: list index out of range at bot.py:5 in act: return moves[9]`` — the last
    frames (up to three, outermost first) whose file lies in ``folder`` (the bot's), or
    the file and line of a syntax error.  The SDK's own frames are left out: they are never
    what the author has to fix."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SyntaxError) and exc.filename:
        code = (exc.text or "").strip()
        where = f"{exc.filename}:{exc.lineno}"
        return f"{type(exc).__name__}: {exc.msg} at {where}" + (f": {code}" if code else "")
    if folder is None:
        return text
    root = os.path.realpath(folder)
    mine = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if os.path.realpath(f.filename).startswith(root + os.sep)
    ]
    if not mine:
        return text
    steps = [f"{f.filename}:{f.lineno} in {f.name}" for f in mine[-3:]]
    code = (mine[-1].line or "").strip()
    return f"{text} at " + " → ".join(steps) + (f": {code}" if code else "")


def split_spec(spec: str) -> tuple[str, str | None]:
    """``"path/x.py:Cls"`` → ``("path/x.py", "Cls")``; a lone path or module → ``(it, None)``."""
    target, sep, cls = spec.rpartition(":")
    if sep and target and cls.isidentifier() and not cls.startswith("\\"):
        return target, cls
    return spec, None


def _load_file(path: Path) -> ModuleType:
    name = f"_bigtwo_bot_{abs(hash(str(path.resolve())))}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise BotLoadError(f"{path}: cannot be loaded as Python")
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, str(path.parent))  # so a bot may import its own helper modules
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        said = describe_error(exc, path.parent)
        raise BotLoadError(f"{path}: importing it failed: {said}") from exc
    return module


def load_module(target: str) -> ModuleType:
    """Import a bot's code from a folder (its ``bot.py``), a ``.py`` file or a module name;
    a failure is a :class:`BotLoadError` naming the file and the cause, never a bare
    traceback, since authors read it in ``arena`` output."""
    path = Path(target)
    if path.is_dir():
        path = path / "bot.py"
        if not path.is_file():
            raise BotLoadError(f"{target}: folder has no bot.py")
        return _load_file(path)
    if target.endswith(".py") or path.is_file():
        if not path.is_file():
            raise BotLoadError(f"{target}: no such file")
        return _load_file(path)
    try:
        return importlib.import_module(target)
    except Exception as exc:
        raise BotLoadError(f"{target}: cannot import module: {type(exc).__name__}: {exc}") from exc


def find_bot_class(module: ModuleType, cls_name: str | None, where: str) -> type[Bot]:
    """The bot class of a loaded module: the one named, or the only :class:`Bot` subclass
    defined there; an ambiguous or missing one is an error that says how to fix it."""
    if cls_name is not None:
        cls = getattr(module, cls_name, None)
        if cls is None:
            raise BotLoadError(
                f"{where}: no Bot subclass named {cls_name!r} (nothing by that name)"
            )
        if not (inspect.isclass(cls) and issubclass(cls, Bot)):
            raise BotLoadError(
                f"{where}: {cls_name!r} is not a Bot subclass (write `class {cls_name}(Bot):`,"
                " with `from bigtwo import Bot`)"
            )
        return cls
    found = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, Bot)
        and obj is not Bot
        and obj.__module__ == module.__name__
    ]
    if len(found) != 1:
        names = ", ".join(c.__name__ for c in found) or "none"
        raise BotLoadError(
            f"{where}: expected exactly one Bot subclass, found {names}"
            + (
                "; name one as FILE:Class"
                if found
                else " (write `class MyBot(Bot):`, with `from bigtwo import Bot`)"
            )
        )
    return found[0]


def load_bot_class(spec: str) -> type[Bot]:
    """The bot class a ``path[:Class]`` spec names: what ``python -m bigtwo.run`` and
    ``play_local`` accept for a bot."""
    target, cls_name = split_spec(spec)
    return find_bot_class(load_module(target), cls_name, spec)
