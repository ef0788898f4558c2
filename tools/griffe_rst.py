"""A griffe extension for the API reference: the SDK's docstrings are written for Python's
help() and editors, in reST's inline roles (:class:`Bot`, :func:`play_local`) and ``::``
literal blocks; the site renders Markdown, where those would show as stray punctuation.
The roles become code spans and ``text::`` an ordinary colon before the indented block."""

from __future__ import annotations

import ast
import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:class|func|data|meth|attr|mod|exc|obj|const):`~?([^`]+)`")
_LITERAL = re.compile(r"::\n")


class ReSTRoles(griffe.Extension):
    """Turns the reST roles of every docstring griffe loads into Markdown code spans."""

    def on_instance(
        self,
        *,
        node: ast.AST | griffe.ObjectNode,
        obj: griffe.Object,
        agent: griffe.Visitor | griffe.Inspector,
        **kwargs: Any,
    ) -> None:
        """Rewrite one object's docstring as it is loaded (before any page renders it)."""
        if obj.docstring is not None:
            text = _ROLE.sub(r"`\1`", obj.docstring.value)
            obj.docstring.value = _LITERAL.sub(":\n", text)
