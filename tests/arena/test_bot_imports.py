"""A bot's third-party imports are named before it runs: the process sandbox has only the
standard library and the SDK and installs no requirements.txt, and docker installs only
what requirements.txt lists — each found by the bot's author last, as an import error."""

from pathlib import Path

from arena.bot_imports import process_sandbox_note, third_party_imports
from arena.bots import resolve

from testkit import arena

BOT = """\
import json
import os.path
from collections import Counter

import sqlalchemy.orm
from sqlalchemy import select
from bigtwo import Bot
from . import nothing
import helpers.deep

from helper import X


class UsesSQL(Bot):
    def act(self, observation):
        assert select and sqlalchemy.orm and json and Counter
        return observation.legal_moves[0]
"""


def write_bot(folder: Path, requirements: str | None = None) -> Path:
    folder.mkdir()
    (folder / "bot.py").write_text(BOT.replace("from . import nothing\n", ""))
    (folder / "helper.py").write_text("X = 1\n")
    (folder / "helpers").mkdir()
    (folder / "helpers" / "deep.py").write_text("")
    if requirements is not None:
        (folder / "requirements.txt").write_text(requirements)
    return folder


def test_third_party_imports_leave_out_stdlib_sdk_and_own_modules():
    files = {
        "bot.py": BOT.encode(),
        "helper.py": b"import numpy.linalg as la\n",
        "helpers/deep.py": b"",
        "broken.py": b"def (:\n",  # skipped: loading it gives the better error
        "deep.py": b"import pandas\nx = " + b"-" * 300_000 + b"1\n",  # too deep: skipped
        "nested.py": b"x = " + b"(" * 200_000 + b")" * 200_000 + b"\n",
        "data.txt": b"import pandas",
    }
    assert third_party_imports(files) == {"sqlalchemy", "numpy"}


def test_a_missing_requirement_is_named_and_a_listed_one_needs_docker(tmp_path):
    bare = resolve(str(write_bot(tmp_path / "bare")))
    note = process_sandbox_note(bare)
    assert note and note.startswith("bot bare imports sqlalchemy: the process sandbox")
    assert note.endswith("use --sandbox docker, and list sqlalchemy in the bot's requirements.txt")
    listed = resolve(str(write_bot(tmp_path / "listed", "SQLAlchemy>=2\n")))
    note = process_sandbox_note(listed)
    assert note and note.endswith("use --sandbox docker")
    plain = tmp_path / "plain.py"
    plain.write_text("import random\nfrom bigtwo import Bot\n\nclass P(Bot):\n    pass\n")
    assert process_sandbox_note(resolve(str(plain))) is None
    assert process_sandbox_note(resolve("greedy")) is None


def test_arena_match_warns_before_the_import_error_under_process(tmp_path):
    """This machine has sqlalchemy, the sandbox does not lend it: warned, then refused."""
    bot = write_bot(tmp_path / "sqlbot")
    proc = arena(
        "match", "--sandbox", "process", "--hands", "1", "--json", str(bot),
        "random", "greedy", "heuristic",
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0].startswith("starting 4 bots in the process sandbox")
    assert lines[1].startswith("warning: bot sqlbot imports sqlalchemy: the process sandbox")
    assert "ModuleNotFoundError: No module named 'sqlalchemy'" in proc.stderr
