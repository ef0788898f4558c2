"""Shared test set-up: hypothesis profiles, a temporary root of its own for every test
(``own_tmp``), and ``db``: a fresh store on SQLite and on PostgreSQL (the ladder's and the
web arena's tests).

``HYPOTHESIS_PROFILE=thorough pytest tests/sdk/test_properties.py`` runs the property tests
with many more examples than the default (used when hunting rule bugs)."""

import os
import secrets
import shutil
import signal
import tempfile
import warnings
from pathlib import Path

import httpx
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

# httpx gives up on an answer after 5 s by default.  The suite runs on 4 workers on two
# cores, beside whatever else the machine runs: a page behind a password hash or a refit can
# take longer there without anything being wrong.  Tests check what a server answers; the
# time an answer may take is asserted only in the serial pass (``-m serial``).  Every
# ``httpx`` call and client without its own ``timeout=`` shares this default object.
assert isinstance(httpx._config.DEFAULT_TIMEOUT_CONFIG, httpx.Timeout)  # httpx moved it?
for _part in ("connect", "read", "write", "pool"):
    setattr(httpx._config.DEFAULT_TIMEOUT_CONFIG, _part, 60.0)

BASE_TMP = tempfile.gettempdir()
"""The machine's (or CI's) temporary folder as the session found it; each test's own root
is made inside it."""


@pytest.fixture(autouse=True)
def default_signals():
    """Every test runs with Ctrl-C and SIGTERM at their defaults.  A signal ignored in
    this process is ignored by every process it starts — and the arena's commands, by the
    Unix convention, leave an inherited "ignore" alone (a background job is not stopped by
    the terminal's Ctrl-C) — so a suite started in the background (``pytest &`` from a
    script: the shell ignores SIGINT for it) failed every "Ctrl-C stops it" test.  A test
    that leaves one ignored has it put back, with a warning naming it."""
    sigs = (signal.SIGINT, signal.SIGTERM)

    def restore() -> list[str]:
        changed = []
        for sig in sigs:
            if signal.getsignal(sig) is signal.SIG_IGN:
                default = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
                signal.signal(sig, default)
                changed.append(signal.Signals(sig).name)
        return changed

    restore()
    yield
    if left := restore():
        warnings.warn(f"the test left {', '.join(left)} ignored: put back", stacklevel=1)


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
