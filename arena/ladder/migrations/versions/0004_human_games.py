"""the Play page: games a person played against bots (kept for replay, never rated)

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02 02:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "human_games",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("names", sa.Text(), nullable=False),
        sa.Column("rules", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("result", sa.Text(), nullable=False),
        sa.Column("record", sa.LargeBinary(), nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_human_games_user_id", "human_games", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_human_games_user_id", table_name="human_games")
    op.drop_table("human_games")
