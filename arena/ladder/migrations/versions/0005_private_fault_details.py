"""fault details kept apart: ``faults.seat``; stored records and results made public

A fault's detail (the bot's exception, source line, stderr) is its owner's.  It stays in
the ``faults`` table alone; the match records, match results and Play-game records kept
before this revision held it too and are rewritten in their public form
(``arena.public_record``), so that no reader of them can show it.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03 09:30:00
"""

import gzip
import json

import sqlalchemy as sa
from alembic import op

from arena.public_record import public_events, public_summary

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

BATCH = 500


PRIVATE = (b'"type":"fault"', b'"log":')
"""What a record holding something private has in it (the referee writes compact JSON)."""

CHANGED = ('{"type":"fault"', '{"type":"match"', '{"type":"match_end"')
"""The lines that may change (``match`` and ``match_end``, ``fault``); others are kept as
they are, unparsed."""


def _public_record(data: bytes) -> bytes:
    """A stored record (gzip JSON Lines) in its public form; a record with no fault and no
    log path is returned as it is (most are), a line that is not JSON kept as it is."""
    raw = gzip.decompress(data)
    if not any(marker in raw for marker in PRIVATE):
        return data
    out = []
    for line in raw.decode("utf-8", "replace").splitlines():
        if not line.strip():
            continue
        if not line.startswith(CHANGED):
            out.append(line + "\n")
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            out.append(line + "\n")
            continue
        (event,) = public_events([event])
        out.append(json.dumps(event, separators=(",", ":")) + "\n")
    return gzip.compress("".join(out).encode(), compresslevel=9, mtime=0)


def _rewrite(table: str, key: str, column: str, change) -> None:  # type: ignore[no-untyped-def]
    conn = op.get_bind()
    t = sa.table(table, sa.column(key), sa.column(column))
    last = None
    while True:
        query = sa.select(t.c[key], t.c[column]).order_by(t.c[key]).limit(BATCH)
        if last is not None:
            query = query.where(t.c[key] > last)
        rows = conn.execute(query).all()
        if not rows:
            return
        for ident, value in rows:
            if value is not None:
                new = change(value)
                if new != value:
                    conn.execute(sa.update(t).where(t.c[key] == ident).values({column: new}))
        last = rows[-1][0]


def upgrade() -> None:
    with op.batch_alter_table("faults", schema=None) as batch_op:
        batch_op.add_column(sa.Column("seat", sa.Integer(), nullable=True))
    _rewrite("match_records", "match_id", "data", _public_record)
    _rewrite("human_games", "id", "record", _public_record)
    conn = op.get_bind()
    m = sa.table("matches", sa.column("id"), sa.column("result", sa.JSON()))
    last = 0
    while True:
        rows = conn.execute(
            sa.select(m.c.id, m.c.result).where(m.c.id > last).order_by(m.c.id).limit(BATCH)
        ).all()
        if not rows:
            break
        for ident, result in rows:
            if isinstance(result, dict):
                new = public_summary(result)
                if new != result:
                    conn.execute(sa.update(m).where(m.c.id == ident).values(result=new))
        last = rows[-1][0]


def downgrade() -> None:
    with op.batch_alter_table("faults", schema=None) as batch_op:
        batch_op.drop_column("seat")
