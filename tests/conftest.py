"""Shared test set-up: hypothesis profiles, a temporary root of its own for every test
(``own_tmp``), and ``db``: a fresh store on SQLite and on PostgreSQL (the ladder's and the
web arena's tests).

``HYPOTHESIS_PROFILE=thorough pytest tests/sdk/test_properties.py`` runs the property tests
with many more examples than the default (used when hunting rule bugs)."""

import os
import secrets
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from sqlalchemy import create_engine, text

from arena.ladder.store import database_url

settings.register_profile(
    "default", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

BASE_TMP = tempfile.gettempdir()
"""The machine's (or CI's) temporary folder as the session found it; each test's own root
is made inside it."""


@pytest.fixture(autouse=True)
def own_tmp(tmp_path_factory, monkeypatch):
    """Every test gets a temporary root of its own (``TMPDIR`` and ``tempfile.tempdir``,
    inherited by every process it starts): its matches' private folders and sockets go
    there, so a check for what a match left behind (``arena-*`` folders) looks only at this
    test's own and passes while other arenas run on the machine.  Short (``BASE/t-XXXXXXXX``):
    a Unix socket's path is limited to 108 bytes.  Removed after the test."""
    tmp_path_factory.getbasetemp()  # pytest's own folders stay where they were
    root = tempfile.mkdtemp(prefix="t-", dir=BASE_TMP)
    os.chmod(root, 0o755)  # a seat's uid (process sandbox, as root) must search it
    monkeypatch.setenv("TMPDIR", root)
    monkeypatch.setattr(tempfile, "tempdir", root)
    yield Path(root)
    shutil.rmtree(root, ignore_errors=True)


PG = os.environ.get("ARENA_TEST_POSTGRES_URL")  # e.g. postgresql://arena:arena@127.0.0.1/x
REQUIRE_PG = os.environ.get("ARENA_REQUIRE_POSTGRES") == "1"


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path):
    """A fresh database: a SQLite file, or a new database on the PostgreSQL server (skipped
    without one, a failure under ARENA_REQUIRE_POSTGRES=1)."""
    yield from _fresh_database(request.param, tmp_path)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def module_db(request, tmp_path_factory):
    """``db`` made once per test module (and store): for a fixture that builds a ladder
    that several tests only read, so it is played once, not once per test."""
    yield from _fresh_database(request.param, tmp_path_factory.mktemp("db"))


def _fresh_database(store, folder):
    """Yields the URL (or file) of a new, empty database on ``store``; drops it after."""
    if store == "sqlite":
        yield str(folder / "l.db")
        return
    if not PG:
        if REQUIRE_PG:
            pytest.fail("ARENA_REQUIRE_POSTGRES=1 but ARENA_TEST_POSTGRES_URL is not set")
        pytest.skip("no PostgreSQL server (set ARENA_TEST_POSTGRES_URL)")
    name = f"arena_t_{secrets.token_hex(4)}"
    admin = create_engine(database_url(PG), isolation_level="AUTOCOMMIT")
    with admin.connect() as con:
        con.execute(text(f"CREATE DATABASE {name}"))
    yield PG.rsplit("/", 1)[0] + "/" + name
    with admin.connect() as con:
        con.execute(text(f"DROP DATABASE {name} WITH (FORCE)"))
    admin.dispose()
