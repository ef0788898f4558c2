"""A ladder whose every hand is scripted, written through the ladder's own write path
(``store.save_match`` with ``running.block_totals``, as a played match is), so that a test
knows each number its leaderboard must show without playing a card.

Importable from every test file as ``ladderkit`` (``tests/`` is on ``sys.path``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from arena.ladder.running import block_totals
from arena.ladder.store import Entry, Ladder, Match, MatchSeat, add_version, save_match

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
            version = add_version(session, n, "sample_bots/random", f"{hash(n) & (2**64 - 1):064x}")
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
            save_match(session, match, summary, block_totals(match, summary, rotations), [])
