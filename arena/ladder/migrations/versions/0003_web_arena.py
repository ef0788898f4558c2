"""the web arena: accounts, sessions, API tokens, bot owners, uploads; paused entries;
match seats as rows

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 23:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("entries", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("paused", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "match_seats",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"]),
        sa.ForeignKeyConstraint(["version_id"], ["bot_versions.id"]),
        sa.PrimaryKeyConstraint("match_id", "seat"),
    )
    op.create_index("ix_match_seats_version_id", "match_seats", ["version_id"])
    matches = sa.table("matches", sa.column("id", sa.Integer), sa.column("seats", sa.JSON))
    seats = sa.table(
        "match_seats",
        sa.column("match_id", sa.Integer),
        sa.column("seat", sa.Integer),
        sa.column("version_id", sa.Integer),
    )
    conn = op.get_bind()
    rows = [
        {"match_id": mid, "seat": i, "version_id": v}
        for mid, group in conn.execute(sa.select(matches.c.id, matches.c.seats))
        for i, v in enumerate(group or [])
    ]
    if rows:
        op.bulk_insert(seats, rows)
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("password_hash", sa.Text(), nullable=False),
        sa.Column("must_change_password", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("disabled", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "web_sessions",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("csrf", sa.String(length=64), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("token_hash"),
    )
    op.create_index("ix_web_sessions_user_id", "web_sessions", ["user_id"])
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(length=60), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_index("ix_api_tokens_user_id", "api_tokens", ["user_id"])
    op.create_table(
        "bot_owners",
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"]),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("bot_id"),
    )
    op.create_index("ix_bot_owners_user_id", "bot_owners", ["user_id"])
    op.create_table(
        "uploads",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("bot_name", sa.String(length=100), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=True),
        sa.Column("filename", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("files", sa.LargeBinary(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("log", sa.Text(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("checked", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.ForeignKeyConstraint(["version_id"], ["bot_versions.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_uploads_user_id", "uploads", ["user_id"])
    op.create_index("ix_uploads_bot_name", "uploads", ["bot_name"])
    # the web pages over a big ladder (bench/web.py): finished matches counted and paged
    # from an index, a match's deal blocks and a bot's faults looked up, not scanned
    op.create_index("ix_matches_ladder_id_status_id", "matches", ["ladder_id", "status", "id"])
    op.create_index("ix_deals_match_id", "deals", ["match_id"])
    op.create_index("ix_faults_version_id", "faults", ["version_id"])


def downgrade() -> None:
    for index, table in (
        ("ix_faults_version_id", "faults"),
        ("ix_deals_match_id", "deals"),
        ("ix_matches_ladder_id_status_id", "matches"),
    ):
        op.drop_index(index, table_name=table)
    for table in ("uploads", "bot_owners", "api_tokens", "web_sessions", "users", "match_seats"):
        op.drop_table(table)
    with op.batch_alter_table("entries", schema=None) as batch_op:
        batch_op.drop_column("paused")
