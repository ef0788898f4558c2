"""The games people played on the Play page, in the database (``HumanGame``): written when a
table opens and when its match ends, listed on the Play page, replayed from their record.

They live beside the ladder's tables but are not ladder matches: nothing the ratings read
ever mentions them.  A game's record is kept in its public form
(:func:`arena.public_record.public_events`): the bots at a table may be other people's, and
their faults' details (their exceptions, their stderr) are their owners' — the person saw
their own seat's faults as they happened.
"""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from bigtwo import RuleSet
from bigtwo.record import compress

from ..public_record import public_events
from ..referee.results import MatchResult
from .models import HumanGame, now
from .replay_data import stored_events
from .rules_text import nearest_preset
from .tables import Table


def started(engine: Engine, table: Table) -> None:
    setup = table.setup
    with Session(engine) as session, session.begin():
        session.add(
            HumanGame(
                id=table.id,
                user_id=table.owner,
                seat=setup.seat,
                names=json.dumps([b.name for b in setup.bots()]),
                rules=json.dumps(setup.rules.to_dict()),
                status="playing",
                result="",
            )
        )


def ended(engine: Engine, table: Table, summary: MatchResult | None, record: bytes) -> None:
    result: dict[str, Any] = {}
    if summary is not None and not summary.aborted:
        seats = summary.seats
        result = {
            "scores": [s.score for s in seats],
            "places": [s.place for s in seats],
            "forfeited": [s.forfeit for s in seats],
        }
    with Session(engine) as session, session.begin():
        game = session.get(HumanGame, table.id)
        if game is None:
            return
        game.status = (
            "over" if result else "interrupted" if table.status == "interrupted" else "failed"
        )
        game.result = json.dumps(result)
        game.record = _public(record) if record else None
        game.finished = now()


def _public(record: bytes) -> bytes:
    """A game's record (``bigtwo.record.compress``'d) in its public form."""
    return compress(public_events(e for e in stored_events(record) if e is not None))


def interrupt_unfinished(engine: Engine) -> None:
    """At start: games left ``playing`` by a server that stopped can never end."""
    with Session(engine) as session, session.begin():
        session.execute(
            update(HumanGame).where(HumanGame.status == "playing").values(status="interrupted")
        )


def recent(engine: Engine, user_id: int | None, limit: int = 20) -> list[dict[str, Any]]:
    """A person's latest games (``arena play``'s local player: the games with no owner)."""
    query = select(HumanGame).order_by(HumanGame.created.desc()).limit(limit)
    query = query.where(
        HumanGame.user_id.is_(None) if user_id is None else HumanGame.user_id == user_id
    )
    with Session(engine) as session:
        return [row(g) for g in session.scalars(query)]


def row(game: HumanGame) -> dict[str, Any]:
    result = json.loads(game.result) if game.result else {}
    names = json.loads(game.names)
    created = game.created if game.created.tzinfo else game.created.replace(tzinfo=UTC)
    return {
        "id": game.id,
        "created": created.strftime("%Y-%m-%d %H:%M UTC"),
        "rules": rules_label(json.loads(game.rules)),
        "names": names,
        "seat": game.seat,
        "status": game.status,
        "score": (result.get("scores") or [None] * len(names))[game.seat],
        "place": (result.get("places") or [None] * len(names))[game.seat],
        "url": f"/play/{game.id}",
        "replay_url": f"/play/{game.id}/replay" if game.record else None,
    }


def rules_label(rules: dict[str, Any]) -> str:
    """``hk``, ``pusoy (3 players)``, ``like family``: what a list of games shows."""
    try:
        parsed = RuleSet.from_dict(rules)
    except (TypeError, ValueError):
        return "custom"
    name = nearest_preset(parsed)
    same = {"players": parsed.players, "match_end": parsed.match_end}
    same["match_end_value"] = parsed.match_end_value  # a game's length is not its rules
    exact = parsed == RuleSet.preset(name).replace(**same)
    shown = name if exact else f"like {name}"
    return shown if parsed.players == 4 else f"{shown} ({parsed.players} players)"


def load(engine: Engine, game_id: str) -> tuple[dict[str, Any], int | None, list[Any]] | None:
    """A stored game: its row, its owner and its record's events (None for a line that is
    not JSON: the replay names it)."""
    with Session(engine) as session:
        game = session.get(HumanGame, game_id)
        if game is None:
            return None
        events = stored_events(game.record) if game.record else []
        return row(game), game.user_id, events
