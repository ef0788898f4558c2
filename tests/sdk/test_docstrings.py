"""Every public name of the SDK carries a docstring.

The API reference of the documentation site (docs/api.md, mkdocstrings) is generated from
these docstrings, and a bot author reads them in their editor: a public name without one
is a hole in both. The check reads the sources (no import), so it needs none of the
optional extras and sees what the reference sees — a dataclass's generated ``__doc__``
does not count as written.

A public name is: every module of ``bigtwo`` (the generated ``v1`` stubs and the sample
bots excepted — those are example bots to copy, not API; their files say what they do), every
class and function defined at a module's top level whose name has no leading underscore,
every such method or property of those classes, and every module-level constant the
package exports in an ``__all__`` (documented by a string right after its assignment).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SDK = Path(__file__).resolve().parents[2] / "sdk" / "bigtwo"


def _modules() -> list[Path]:
    return sorted(
        p
        for p in SDK.rglob("*.py")
        if not {"v1", "sample_bots"} & set(p.relative_to(SDK).parts)
        and not any(part.startswith("_") and part != "__init__.py" for part in p.parts[-1:])
    )


def _dotted(path: Path) -> str:
    parts = ["bigtwo", *path.relative_to(SDK).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _exported() -> set[str]:
    """Names listed in an ``__all__`` of the package (the re-exports of its ``__init__``s)."""
    names: set[str] = set()
    for path in _modules():
        body = ast.parse(path.read_text(encoding="utf-8")).body
        dicts = {  # `__all__ = sorted(_WHERE)`: bigtwo.env's lazy table of names
            t.id: node.value
            for node in body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        for node in body:
            if not (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            ):
                continue
            value = node.value
            if isinstance(value, ast.Call) and value.args and isinstance(value.args[0], ast.Name):
                table = dicts.get(value.args[0].id)
                elements = [k for k in table.keys if k is not None] if table else []
            elif isinstance(value, ast.List | ast.Tuple):
                elements = list(value.elts)
            else:
                elements = []
            names |= {
                e.value
                for e in elements
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            }
    return names


def _is_setter(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    # `@name.setter` / `@name.deleter`: the property's getter carries the docstring
    return any(
        isinstance(d, ast.Attribute) and d.attr in {"setter", "deleter"}
        for d in node.decorator_list
    )


def _undocumented() -> Iterator[str]:
    exported = _exported()
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = _dotted(path)
        if not ast.get_docstring(tree):
            yield module
        body = tree.body
        for i, node in enumerate(body):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if node.name.startswith("_"):
                    continue
                if not ast.get_docstring(node):
                    yield f"{module}.{node.name}"
                if isinstance(node, ast.ClassDef):
                    for member in node.body:
                        if (
                            isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef)
                            and not member.name.startswith("_")
                            and not _is_setter(member)
                            and not ast.get_docstring(member)
                        ):
                            yield f"{module}.{node.name}.{member.name}"
                continue
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                if not (isinstance(target, ast.Name) and target.id in exported):
                    continue
                if path.name == "__init__.py":
                    continue  # an __init__'s own names are its re-exports, documented at home
                following = body[i + 1] if i + 1 < len(body) else None
                documented = (
                    isinstance(following, ast.Expr)
                    and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)
                )
                if not documented:
                    yield f"{module}.{target.id}"


def test_the_check_sees_the_whole_sdk() -> None:
    modules = {_dotted(p) for p in _modules()}
    assert {"bigtwo", "bigtwo.game", "bigtwo.env", "bigtwo.env.gym"} <= modules
    assert not any(m.startswith("bigtwo.v1") for m in modules)
    assert {"PASS", "Game", "play_local", "PolicyBot"} <= _exported()


def test_every_public_name_of_bigtwo_has_a_docstring() -> None:
    missing = list(_undocumented())
    assert not missing, f"{len(missing)} public names of bigtwo have no docstring:\n" + "\n".join(
        missing
    )
