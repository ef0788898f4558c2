"""A ladder whose every hand is scripted, written through the ladder's own write path
(``store.save_match`` with ``running.block_totals``, as a played match is), so that a test
knows each number its leaderboard must show without playing a card.

Importable from every test file as ``ladderkit`` (``tests/`` is on ``sys.path``)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from arena.ladder.running import block_totals
from arena.ladder.store import (
    Entry,
    Ladder,
    Match,
    MatchSeat,
    add_version,
    open_engine,
    save_match,
)
from arena.referee.results import MatchResult
from arena.web.contest import WebConfig, ensure_contest

Script = Callable[[int, int], Mapping[str, float]]
"""(match number, deal number) → each bot's points in every hand of that deal (the same in
each rotation: a bot scores the same whichever cards it holds)."""


def enter(engine: Engine, ladder: str, names: Sequence[str]) -> dict[str, int]:
    """Enter bots by name (each a version of its own); their version ids by name."""
    with Session(engine) as session, session.begin():
        row = session.scalar(select(Ladder).where(Ladder.name == ladder))
        assert row is not None, f"no ladder {ladder!r}"
        ids = {}
        for n in names:
            digest = hashlib.sha256(n.encode("utf-8", "surrogatepass")).hexdigest()
            version = add_version(session, n, "sample_bots/random", digest)
            session.add(Entry(ladder_id=row.id, version_id=version.id))
            ids[n] = version.id
    return ids


def play_script(
    engine: Engine,
    ladder: str,
    seats: Sequence[str],
    ids: Mapping[str, int],
    script: Script,
    matches: int,
    deals: int = 4,
    forfeit: tuple[int, int] | None = None,
) -> None:
    """``matches`` finished matches of ``seats`` (bot names in seat order), ``deals`` deals
    of 4 rotations each, every hand's points from ``script``.  ``forfeit``: (seat, first
    hand) — in every match that seat forfeited from that hand on (its fallback then scored
    what the script says)."""
    with Session(engine) as session, session.begin():
        row = session.scalar(select(Ladder).where(Ladder.name == ladder))
        assert row is not None
        rotations = row.settings["rotations"]
        for m in range(matches):
            vids = [ids[n] for n in seats]
            match = Match(
                ladder_id=row.id,
                key=f"script/{m}/{'/'.join(seats)}",
                seats=vids,
                deal_seeds=[f"script/{m}/{d}" for d in range(deals)],
            )
            session.add(match)
            session.flush()
            session.add_all(
                MatchSeat(match_id=match.id, seat=i, version_id=v) for i, v in enumerate(vids)
            )
            hands: list[dict[str, Any]] = []
            cumulative = [0.0] * len(seats)
            for h in range(deals * rotations):
                points = script(m, h // rotations)
                scores = [points[n] for n in seats]
                cumulative = [c + s for c, s in zip(cumulative, scores, strict=True)]
                hands.append(
                    {
                        "hand": h,
                        "winner": max(range(len(seats)), key=scores.__getitem__),
                        "scores": scores,
                        "cumulative": list(cumulative),
                    }
                )
            summary = {
                "match_id": f"ladder match {match.id}",
                "match_over": True,
                "hands": hands,
                "seats": [
                    {
                        "seat": s,
                        "bot": n,
                        "score": cumulative[s],
                        "place": 1 + sum(c > cumulative[s] for c in cumulative),
                        "forfeit": bool(forfeit and forfeit[0] == s),
                        "forfeit_hand": forfeit[1] if forfeit and forfeit[0] == s else None,
                        "strikes": 0,
                        "faults": [],
                    }
                    for s, n in enumerate(seats)
                ],
            }
            result = MatchResult.from_json(summary)  # the shape an older ladder stored
            save_match(session, match, result, block_totals(match, result, rotations), [])


# ----- the ladders the leaderboard's notes are tested on (arena.ladder.explain) ---------
LADDER = "contest"

# steady finishes ahead of bigwin in three deals of four, by one point a hand; bigwin wins
# the fourth by 40 (its +30 against steady's -10): more points a hand, fewer orders won
MARGINS = [
    {"winner": 6, "steady": -1, "bigwin": -2, "loser": -3},
    {"winner": 6, "steady": -1, "bigwin": -2, "loser": -3},
    {"winner": 6, "steady": -1, "bigwin": -2, "loser": -3},
    {"bigwin": 30, "steady": -10, "winner": -10, "loser": -10},
]


def contest(tmp_path: Path) -> tuple[str, Engine]:
    """A contest's ladder (as ``arena serve`` makes it) with no bots yet in ``tmp_path``."""
    db = str(tmp_path / "c.db")
    engine = open_engine(db)
    ensure_contest(engine, WebConfig(db=db, house_bots=False))
    return db, engine


def margins_ladder(tmp_path: Path, names: dict[str, str] | None = None, matches: int = 6) -> str:
    """The MARGINS script, bots renamed by ``names`` (role → name); its database path."""
    names = names or {}
    db, engine = contest(tmp_path)
    role = {r: names.get(r, r) for r in ("steady", "bigwin", "winner", "loser")}
    ids = enter(engine, LADDER, list(role.values()))
    seats = list(role.values())
    script = [{role[r]: p for r, p in deal.items()} for deal in MARGINS]
    play_script(engine, LADDER, seats, ids, lambda m, d: script[d % 4], matches)
    return db


AGREEING = ["first", "second", "third", "fourth"]
"""The bots of :func:`agreeing_ladder`, in their rank order (and their points order)."""


def agreeing_ladder(tmp_path: Path) -> str:
    """A ladder whose Elo order and points order agree (no order note is due); its
    database path."""
    db, engine = contest(tmp_path)
    ids = enter(engine, LADDER, AGREEING)
    deals = [
        {"first": 6, "second": -1, "third": -2, "fourth": -3},
        {"second": 6, "first": -1, "third": -2, "fourth": -3},
        {"first": 8, "third": -2, "second": -3, "fourth": -3},
    ]
    play_script(engine, LADDER, AGREEING, ids, lambda m, d: deals[d % 3], 4, deals=3)
    return db


HOSTILE = {
    "steady": "<b>st</b>\x1b[31m\x1b]0;owned\x07[blink]x[/blink]",
    "bigwin": "big\u202ewin<script>alert(1)</script>",
}
"""Names that would be markup on a page, terminal commands or a right-to-left override."""
