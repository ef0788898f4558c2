"""retired entries and kept match records

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01 20:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("entries", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("retired", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "match_records",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("encoding", sa.String(length=16), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"]),
        sa.PrimaryKeyConstraint("match_id"),
    )


def downgrade() -> None:
    op.drop_table("match_records")
    with op.batch_alter_table("entries", schema=None) as batch_op:
        batch_op.drop_column("retired")
