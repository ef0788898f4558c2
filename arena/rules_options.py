"""Turning command-line words into a RuleSet: a preset name or a JSON file, plus
``--set option=value`` overrides.  Every mistake becomes a one-line RulesError naming the
option, value or file at fault."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bigtwo import PRESETS, RulesError, RuleSet
from bigtwo.jsontext import loads_bounded

MAX_RULES_CHARS = 64 * 1024
"""A rules file is a few hundred bytes; one past this is refused unread."""


def load_rules(rules: str, overrides: Sequence[str] = ()) -> RuleSet:
    """``rules`` is a preset name (hk, family, pusoy) or the path of a JSON file holding
    option values (with an optional ``preset`` entry as the base)."""
    if rules in PRESETS:
        base = RuleSet.preset(rules)
    else:
        path = Path(rules)
        if not path.is_file():
            raise RulesError(
                f"--rules {rules!r} is neither a preset ({', '.join(PRESETS)}) nor a JSON file"
            )
        try:
            if path.stat().st_size > 4 * MAX_RULES_CHARS:
                raise ValueError(f"larger than {4 * MAX_RULES_CHARS} bytes")
            data = loads_bounded(path.read_text(encoding="utf-8"), max_chars=MAX_RULES_CHARS)
        except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONTextError too
            raise RulesError(f"{path}: cannot read rules: {exc}") from None
        try:
            base = RuleSet.from_dict(data)
        except RulesError as exc:
            raise RulesError(f"{path}: {exc}") from None
    changes = {}
    for item in overrides:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise RulesError(f"--set {item!r}: expected OPTION=VALUE, e.g. --set bombs=anywhere")
        changes[name.strip().replace("-", "_")] = _value(value.strip())
    return base.replace(**changes) if changes else base


def _value(text: str) -> str | int:
    return int(text) if text.isdigit() else text
