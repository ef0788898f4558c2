"""`--help` as people read it: value names instead of Python types, and paragraphs that
wrap to the terminal instead of breaking where the source's lines break.

Typer labels every option with its Python annotation (``<bool>`` after a flag that takes
no value, ``<list[str]>``, ``<int range>``), and keeps a docstring's line breaks, so at
any width other than the source's a sentence stops mid-line.  Click's own convention is
better and is what we show: a flag has no label, a value is named by what it is
(``N``, ``MS``, ``TEXT``), a repeatable one ends in ``...``.  This walks the command
tree once, before it runs, and touches only what is shown.
"""

from __future__ import annotations

import re
from typing import Any

# what a value is called, by the option's name where the name says more than its type
_BY_NAME = {
    "db": "FILE|URL",
    "record": "FILE",
    "logs": "DIR",
    "out": "FILE",
    "listen": "HOST:PORT",
    "tls_dir": "DIR",
    "tls_name": "NAME",
    "rules": "PRESET|FILE",
    "set_": "OPTION=VALUE",
    "seed": "TEXT",
    "sandbox": "NAME",
    "executor": "NAME",
}


def _label(param: Any) -> str:
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return ""  # a switch: nothing follows it
    name = param.name or ""
    desc = getattr(param, "type_descriptor", None)  # typer's: the Python annotation
    annotation = getattr(desc, "annotation", None)
    if getattr(desc, "is_list", False):
        (annotation,) = getattr(annotation, "__args__", (str,))
    if name in _BY_NAME:
        label = _BY_NAME[name]
    elif name.endswith("_ms"):
        label = "MS"
    elif param.param_type_name == "argument":
        label = name.upper()
        if param.nargs != 1 and label.endswith("S"):
            label = label[:-1]  # BOTS... reads BOT...
    elif getattr(desc, "is_path", False):
        label = "PATH"
    elif annotation is int or annotation == int | None:
        label = "N"
    elif annotation is float or annotation == float | None:
        label = "X"
    else:
        label = "TEXT"
    if param.nargs != 1 or getattr(param, "multiple", False):
        label += "..."
    return label


def _reflow(text: str) -> str:
    """Join each paragraph's lines into one; a line that begins an example (``Example:``,
    ``arena ...``) starts a paragraph of its own, and a paragraph marked ``\\b`` keeps its
    lines: it is laid out by hand, a table or a list."""
    out = []
    for para in re.split(r"\n\s*\n", text.strip()):
        if para.lstrip().startswith("\b"):
            out.append(para)
            continue
        lines: list[str] = []
        for line in para.splitlines():
            line = line.strip()
            example = bool(lines) and lines[-1].startswith("Example")
            if (
                lines
                and not line.startswith(("Example", "arena "))
                and not (
                    example and line[:1].isupper()  # the example ends where a sentence starts
                )
            ):
                lines[-1] += " " + line
            else:
                lines.append(line)
        out.extend(lines)
    return "\n\n".join(out)


def _no_type_column(ctx: Any) -> None:
    return None


def _label_help_option(command: Any) -> None:
    """Click makes --help at each call; label the one it makes (a switch: no label)."""
    make = command.get_help_option

    def get_help_option(ctx: Any) -> Any:
        option = make(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = get_help_option


def tidy(command: Any) -> Any:
    """Label every parameter and reflow every help text of ``command`` and its
    subcommands, in place; returns ``command``."""
    if command.help:
        command.help = _reflow(command.help)
    _label_help_option(command)
    for param in command.params:
        if param.metavar is None:
            param.metavar = _label(param)
        if param.param_type_name == "argument":  # its name says it all: no type column
            param.metavar = param.metavar.removesuffix("...")
            param.display_type_rich = _no_type_column
    if hasattr(command, "commands"):  # a group
        for sub in command.commands.values():
            tidy(sub)
    return command
