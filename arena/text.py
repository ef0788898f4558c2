"""Text that someone else wrote, made safe to show to the operator.

A bot controls words that the arena shows: the last lines of its stderr (in the sandbox's
exit report), the message of an exception in its ``act()``, the name in its Hello, its own
file and folder names (its public name); a user controls a record file given to ``arena
replay``, a ladder's name, a rules file's path.  Shown raw on a terminal, such text can set
the window title (``ESC ] 0;… BEL``), clear the screen (``ESC [ 2J``), plant a hyperlink
(OSC 8), drive the terminal with C1 controls (``\\x9b`` is CSI), reorder what the operator
reads (bidi overrides such as U+202E), or overwrite a line (backspace, carriage return);
lone surrogates cannot even be encoded.  :func:`printable` is the one place that makes such
text harmless: the arena applies it where a bot's text comes in (the referee's fault
details and Hello names) and again wherever text is shown (defence in depth: names read
back from a database, file names, records).

It does not touch markup: rich reads ``[blink]`` or ``[link=…]`` as styles, so the CLI
prints such text as :class:`rich.text.Text` (or through ``rich.markup.escape``), never as
a markup string.
"""

from __future__ import annotations

import unicodedata

__all__ = ["ELLIPSIS", "printable"]

ELLIPSIS = "…"
"""Ends a text that :func:`printable` cut short."""

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}

# characters of category Cf that stay as they are: the zero-width joiner builds emoji
_KEEP = frozenset("\u200d")

# control (C0, DEL, C1), format (bidi embeddings, overrides and isolates, marks, zero-width
# and invisible characters, tags), lone surrogates, line and paragraph separators
_UNSAFE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _escape(ch: str) -> str:
    named = _NAMED.get(ch)
    if named is not None:
        return named
    cp = ord(ch)
    if cp <= 0xFF:
        return f"\\x{cp:02x}"
    if cp <= 0xFFFF:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def printable(text: object, limit: int = 300) -> str:
    """``text`` on one line, every character that could steer a terminal or hide what the
    operator reads made visible as a Python-style escape (``\\x1b``, ``\\x9b``,
    ``\\u202e``, ``\\n``), at most ``limit`` characters (cut with ``…``).

    Made visible rather than dropped, so the operator still sees that the text held them
    (``ESC[2J`` reads as ``\\x1b[2J``).  Any object is shown through ``str()``; bytes are
    decoded as UTF-8 with replacement.  The cost is bounded by ``limit``, however long the
    text."""
    if limit < 1:
        return ""
    if isinstance(text, bytes | bytearray):
        text = bytes(text[: limit * 4]).decode("utf-8", "replace")
    elif not isinstance(text, str):
        text = str(text)
    pieces: list[str] = []
    length = 0
    for ch in text[: limit + 1]:  # every character shows as at least one
        if ch.isprintable() or ch in _KEEP or unicodedata.category(ch) not in _UNSAFE:
            piece = ch  # also kept: other spaces, private use, unassigned
        else:
            piece = _escape(ch)
        if length + len(piece) > limit:  # cut; never in the middle of an escape
            while pieces and length + len(ELLIPSIS) > limit:
                length -= len(pieces.pop())
            return "".join(pieces) + ELLIPSIS
        pieces.append(piece)
        length += len(piece)
    return "".join(pieces)
