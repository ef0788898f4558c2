"""Turning command-line words into a RuleSet: a preset name or a JSON file, plus
``--set option=value`` overrides.  Every mistake becomes a one-line RulesError naming the
option, value or file at fault."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from bigtwo import PRESETS, RulesError, RuleSet


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
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
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
