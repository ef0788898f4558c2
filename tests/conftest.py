"""Shared test set-up: hypothesis profiles, and ``db``: a fresh store on SQLite and on
PostgreSQL (the ladder's and the web arena's tests).

``HYPOTHESIS_PROFILE=thorough pytest tests/sdk/test_properties.py`` runs the property tests
with many more examples than the default (used when hunting rule bugs)."""

import os
import secrets

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
