"""each finished match's digest (the ratings' evidence in compact form) and the last fit's
solution (a refit's warm start)

Old ladders' finished matches get their digests lazily, on the first fit that reads them
(``arena.ladder.digests``), not here: a digest is computed by the arena's own rating code,
which a migration must not import (it changes; a migration is frozen), and a PostgreSQL
ladder of 100,000 matches would otherwise hold every server's start for minutes.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03 12:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "match_digests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("ladder_id", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["ladder_id"], ["ladders.id"]),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("match_id"),
    )
    op.create_index("ix_match_digests_ladder_id_id", "match_digests", ["ladder_id", "id"])
    op.create_table(
        "rating_states",
        sa.Column("ladder_id", sa.Integer(), nullable=False),
        sa.Column("digests", sa.Integer(), nullable=False),
        sa.Column("last_digest", sa.Integer(), nullable=False),
        sa.Column("theta", sa.Text(), nullable=False),
        sa.Column("skill", sa.Text(), nullable=False),
        sa.Column("fitted", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["ladder_id"], ["ladders.id"]),
        sa.PrimaryKeyConstraint("ladder_id"),
    )


def downgrade() -> None:
    op.drop_table("rating_states")
    op.drop_index("ix_match_digests_ladder_id_id", table_name="match_digests")
    op.drop_table("match_digests")
