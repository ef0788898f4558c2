"""the worker out of the web process: its status and the pages' nudge, the stored standings
fit, and per-account entry-check budgets

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03 09:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "worker_status",
        sa.Column("ladder", sa.String(length=100), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("started", sa.DateTime(timezone=True), nullable=True),
        sa.Column("heartbeat", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.Column("nudge", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("ladder"),
    )
    op.create_table(
        "standings_fits",
        sa.Column("ladder_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("matches_done", sa.Integer(), nullable=False),
        sa.Column("rows", sa.Text(), nullable=False),
        sa.Column("fitted", sa.DateTime(timezone=True), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("serial", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["ladder_id"], ["ladders.id"]),
        sa.PrimaryKeyConstraint("ladder_id"),
    )
    op.create_table(
        "check_charges",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("user_id", "day"),
    )


def downgrade() -> None:
    op.drop_table("check_charges")
    op.drop_table("standings_fits")
    op.drop_table("worker_status")
