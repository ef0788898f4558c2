"""each match's round: ladders are planned round by round

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03 12:30:00

The matches an older planner made get their round back: it keyed a match
``sha256(json([group, r]))[:32]`` (the group: its entrants sorted, repeated in rotation to
fill the table), so the round ``r`` is found by trying rounds until the key matches.  A
ladder then goes on with its next round, as ``--rounds`` (a total) counts them.  Self-
contained on purpose: a migration must not change when the arena's code does.
"""

import hashlib
import json
from collections import defaultdict

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def _group(seats: list[int]) -> list[int]:
    """The group the old planner seated (``planning.groups_for``'s form)."""
    ids = sorted(set(seats))
    return [ids[i % len(ids)] for i in range(len(seats))]


def _old_key(group: list[int], r: int) -> str:
    return hashlib.sha256(json.dumps([group, r]).encode()).hexdigest()[:32]


def upgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("round", sa.Integer(), nullable=True))
        batch_op.create_index("ix_matches_ladder_id_round", ["ladder_id", "round"], unique=False)
    bind = op.get_bind()
    rows = bind.execute(sa.text("SELECT id, ladder_id, key, seats FROM matches")).all()
    wanted: dict[tuple[int, str], dict[str, int]] = defaultdict(dict)  # (ladder, group) → key → id
    per_ladder: dict[int, int] = defaultdict(int)
    for mid, ladder_id, key, seats in rows:
        seats = json.loads(seats) if isinstance(seats, str) else seats
        if not seats:
            continue
        wanted[(ladder_id, json.dumps(_group([int(v) for v in seats])))][key] = mid
        per_ladder[ladder_id] += 1
    found = []
    for (ladder_id, group_text), keys in wanted.items():
        group = json.loads(group_text)
        left = dict(keys)
        # a group's rounds run from 0 up: at most as many as the ladder has matches
        for r in range(per_ladder[ladder_id] + 1):
            mid = left.pop(_old_key(group, r), None)
            if mid is not None:
                found.append({"r": r, "id": mid})
                if not left:
                    break
    if found:
        bind.execute(sa.text("UPDATE matches SET round = :r WHERE id = :id"), found)


def downgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_index("ix_matches_ladder_id_round")
        batch_op.drop_column("round")
