"""Fixtures shared by the arena's tests."""

import os
import secrets

import pytest
from sqlalchemy import create_engine, text

from arena.ladder.store import database_url

PG = os.environ.get("ARENA_TEST_POSTGRES_URL")  # e.g. postgresql://arena:arena@127.0.0.1/x
REQUIRE_PG = os.environ.get("ARENA_REQUIRE_POSTGRES") == "1"


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path):
    """A fresh database: a SQLite file, or a new database on the PostgreSQL server (skipped
    without one, a failure under ARENA_REQUIRE_POSTGRES=1)."""
    if request.param == "sqlite":
        yield str(tmp_path / "l.db")
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
