"""Alembic environment: the connection comes from the arena (store.upgrade)."""

from alembic import context

import arena.web.models  # noqa: F401  (the web arena's tables share the metadata)
from arena.ladder.store import Base
from arena.web import worker_state  # noqa: F401  (the worker's status, stored fits, budgets)

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through arena.ladder.store.upgrade()")
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
