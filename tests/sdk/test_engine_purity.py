"""The rules engine imports nothing outside the standard library (issue 2)."""

import ast
import subprocess
import sys
from pathlib import Path

ENGINE = [
    "cards",
    "combos",
    "rules",
    "scoring",
    "legality",
    "game",
    "observation",
    "record",
    "jsontext",
    "judge",
    "answers",
]
SDK = Path(__file__).resolve().parents[2] / "sdk" / "bigtwo"


def test_importing_the_engine_loads_only_the_standard_library():
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        + "".join(f"import bigtwo.{m}\n" for m in ENGINE)
        + "import bigtwo\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "print('\\n'.join(sorted(new - set(sys.stdlib_module_names) - {'bigtwo'})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ""


def test_engine_sources_import_only_stdlib_or_the_engine():
    for name in ENGINE:
        tree = ast.parse((SDK / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative import: must stay within the engine
                    assert (node.module or "").split(".")[0] in ENGINE, (name, node.module)
                    continue
                roots = [(node.module or "").split(".")[0]]
            else:
                continue
            for root in roots:
                assert root in sys.stdlib_module_names, f"{name}.py imports {root}"
