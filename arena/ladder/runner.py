"""The ladder's runner, in three parts: :mod:`.planning` (which matches, from which deals),
:mod:`.running` (playing them here or on Ray, saving each) and :mod:`.leaderboard` (the
ratings' rows and history; the maths is :mod:`.ratings`').  This module re-exports their
public names for the callers that import them from here (the CLI, tests).
"""

from __future__ import annotations

from .leaderboard import (
    FORFEITED,
    counts,
    forfeited_hands,
    leaderboard,
    rated_blocks,
    rated_totals,
    snapshot,
)
from .planning import MAX_ALL_GROUPS, deal_key, deal_seed, groups_for, plan
from .ratings import elo_history, openskill_ordinals
from .running import (
    BATCH,
    BotCannotStart,
    Executor,
    Played,
    batches,
    block_totals,
    executor_for,
    play_batch,
    play_job,
    run_pending,
)

__all__ = [
    "BATCH",
    "FORFEITED",
    "MAX_ALL_GROUPS",
    "BotCannotStart",
    "Executor",
    "Played",
    "batches",
    "block_totals",
    "counts",
    "deal_key",
    "deal_seed",
    "elo_history",
    "executor_for",
    "forfeited_hands",
    "groups_for",
    "leaderboard",
    "openskill_ordinals",
    "plan",
    "play_batch",
    "play_job",
    "rated_blocks",
    "rated_totals",
    "run_pending",
    "snapshot",
]
