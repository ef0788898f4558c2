"""Which packages a bot imports that neither Python nor the SDK provides — so that a bot's
missing requirement is named before it runs, not found by its author last.

The process sandbox offers a bot the standard library and the SDK (with gRPC and protobuf)
and nothing else of this machine, and it installs no ``requirements.txt``; the docker
sandbox has the same plus what the bot's ``requirements.txt`` installs.  A bot that imports
numpy therefore fails to import under ``process`` whatever the machine has, and under
docker unless its requirements list numpy.  Reading the bot's imports (statically: nothing
is run) lets the commands say which, and what to do, before the bot's import error.
"""

from __future__ import annotations

import ast
import sys

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from .bots import BotSpec, BotSpecError, bot_files
from .sandbox.images import ImageBuildError, parse_requirements

PROVIDED = {"bigtwo", "google", "grpc", "__future__"}  # the SDK and what it brings


def third_party_imports(files: dict[str, bytes]) -> set[str]:
    """Top-level names of modules the bot's Python files import (``import a.b`` and
    ``from a import b``; relative imports are its own), less the standard library, the
    SDK and the bot's own modules.  A file that does not parse (a syntax error, or
    nesting too deep for the parser, as a hostile file may hold) is skipped: loading it
    gives the author the better error."""
    own = {path.split("/")[0].removesuffix(".py") for path in files}
    found: set[str] = set()
    for path, data in files.items():
        if not path.endswith(".py"):
            continue
        try:
            tree = ast.parse(data, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):  # too deep to parse
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names} - PROVIDED - own


def process_sandbox_note(spec: BotSpec) -> str | None:
    """A warning for a bot about to run in the process sandbox, or None: the packages it
    imports that the process sandbox lacks (it will fail to import there: use docker), and
    of those, the ones its requirements.txt does not list (docker would lack them too).
    Module and distribution names are compared loosely (``sklearn`` is installed as
    ``scikit-learn``: such a bot is asked to list it)."""
    if spec.remote or spec.path is None:
        return None
    try:
        files = bot_files(spec)
        wanted = parse_requirements(files.get("requirements.txt", b""), spec.name)
    except (BotSpecError, ImageBuildError):  # refused elsewhere, with the reason
        return None
    imports = third_party_imports(files)
    if not imports:
        return None
    listed = {canonicalize_name(Requirement(r).name) for r in wanted}  # parsed and checked already
    unlisted = sorted(m for m in imports if canonicalize_name(m) not in listed)
    note = (
        f"bot {spec.name} imports {', '.join(sorted(imports))}: the process sandbox offers "
        "only the standard library and the SDK and installs no requirements.txt, so it "
        "will not import there; use --sandbox docker"
    )
    if unlisted:
        note += f", and list {', '.join(unlisted)} in the bot's requirements.txt"
    return note
