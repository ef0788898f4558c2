"""JSON text from someone else, parsed with bounds: a record line, a rules file, a page's
request.  ``json.loads`` recurses once per level of nesting, so a line of 100,000 ``[``
raises ``RecursionError`` — not the ``ValueError`` its callers catch — and a structure just
under the interpreter's limit still breaks the first recursive walk of it later.  Every
parser of hostile JSON goes through :func:`loads_bounded`, which refuses nesting deeper than
any format of the arena uses (and, optionally, text longer than the caller allows) with a
:class:`JSONTextError`, a ``ValueError`` naming what is wrong.  Pure standard library.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

MAX_DEPTH = 64
"""Levels of nesting allowed: a record's deepest event (a deal: an object holding a list of
lists of cards) has 3; rules, requests and results fewer than 10."""

_SIGNIFICANT = re.compile(r'["\\\[\]{}]')


class JSONTextError(ValueError):
    """JSON text refused: not JSON, nested too deep, or too long (the message says which)."""


def nesting_depth(text: str, stop_above: int | None = None) -> int:
    """How deeply ``text``'s arrays and objects nest (brackets inside strings do not
    count); stops counting once past ``stop_above``.  Linear in the text."""
    depth = deepest = 0
    in_string = False
    skip_to = 0  # a backslash in a string takes the one character after it
    for m in _SIGNIFICANT.finditer(text):
        at = m.start()
        if at < skip_to:
            continue
        ch = m.group()
        if in_string:
            if ch == "\\":
                skip_to = at + 2
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_above is not None and deepest > stop_above:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def loads_bounded(
    text: str | bytes, max_depth: int = MAX_DEPTH, max_chars: int | None = None
) -> Any:
    """``json.loads(text)``, refusing nesting deeper than ``max_depth`` (a value that deep is
    never handed on, and the parser's own recursion ends in a refusal too) and text longer
    than ``max_chars`` (None: any length; checked before the parser sees it).  Raises
    :class:`JSONTextError` (a ``ValueError``) for every failure: never ``RecursionError``."""
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONTextError(f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    if max_chars is not None and len(text) > max_chars:
        raise JSONTextError(f"longer than {max_chars} characters")
    try:  # the C parser stops at the interpreter's recursion limit with RecursionError
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JSONTextError(f"not JSON: {exc}") from None
    except RecursionError:
        raise JSONTextError(f"nested deeper than {max_depth} levels") from None
    # the bracket count bounds the depth: most texts need no scan
    if text.count("[") + text.count("{") > max_depth and _valid_depth(text) > max_depth:
        raise JSONTextError(f"nested deeper than {max_depth} levels")
    return value


_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _valid_depth(text: str) -> int:
    """:func:`nesting_depth` of text known to be valid JSON (so every string ends: the
    string pattern runs in linear time), at the regular-expression engine's speed."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(1 if c in "[{" else -1 for c in brackets), default=0)
