"""A match runs whatever the temporary folder's depth: its sockets' folder falls back to a
short one when ``TMPDIR`` is too deep for a Unix socket path (a CI job's or a test
runner's per-test folder made every match fail with "socket path too long")."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from arena.referee import match_folder
from arena.referee.match_folder import SOCKET_PATH_MAX, match_folders, new_match_folder

from testkit import arena


def deep_folder(root: Path) -> Path:
    """A writable folder whose path alone leaves no room for a match's sockets."""
    deep = root
    while len(os.fsencode(deep)) < SOCKET_PATH_MAX - 10:
        deep = deep / "a-rather-long-folder-name"
    deep.mkdir(parents=True)
    deep.chmod(0o755)
    return deep


def test_a_short_temporary_folder_holds_the_match_folder(own_tmp):
    folder = new_match_folder()
    try:
        assert folder.parent == own_tmp and folder.name.startswith("arena-")
        assert folder.stat().st_mode & 0o777 == 0o700
        assert folder in match_folders()
    finally:
        folder.rmdir()


def test_a_deep_temporary_folder_falls_back_to_a_short_one(own_tmp, monkeypatch):
    deep = deep_folder(own_tmp)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    folder = new_match_folder()
    try:
        assert folder.parent != deep and str(folder.parent) in match_folder.FALLBACKS
        assert len(os.fsencode(folder / "sock999.99" / "referee.sock")) <= SOCKET_PATH_MAX
        assert folder in match_folders()  # `arena gc` finds it where it is
    finally:
        folder.rmdir()


def test_no_short_folder_is_a_clear_error(own_tmp, monkeypatch):
    deep = deep_folder(own_tmp)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    monkeypatch.setattr(match_folder, "FALLBACKS", (str(deep),))
    with pytest.raises(OSError, match="set TMPDIR to a shorter folder"):
        new_match_folder()


def test_a_match_plays_with_a_deep_tmpdir(own_tmp):
    deep = deep_folder(own_tmp)
    proc = arena(
        "match", "--sandbox", "process", "--hands", "1", "random", "greedy", "random", "greedy",
        env={**os.environ, "TMPDIR": str(deep)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "socket path too long" not in proc.stderr
