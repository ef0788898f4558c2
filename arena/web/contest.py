"""The contest a web arena serves: one ladder of the store, its settings, and the data each
page shows, read through the ladder's own functions (``arena.ladder.leaderboard``,
``arena.ladder.queries``) so that a number on a page and in ``arena ladder show`` can never
differ.

The leaderboard is fitted on every finished match, which takes seconds on a big ladder, so
it is computed once per state of the ladder (finished matches, entries) and kept: pages read
the kept one, the player refreshes it after each batch it saves.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from bigtwo import RuleSet

from ..ladder.leaderboard import leaderboard
from ..ladder.store import Bot, BotVersion, Entry, Ladder, Match, MatchSeat
from .uploads import UploadLimits

DEFAULT_LADDER = "contest"
DEFAULT_SETTINGS: dict[str, Any] = {
    "deals": 4,
    "rotations": 4,
    "sandbox": "auto",
    "time_control": {},
}
PUBLIC_SETTINGS = ("deals", "rotations", "sandbox", "time_control")
"""What pages may show of a ladder's settings: never ``deal_key`` (the secret the deals are
keyed with) nor the join code."""


@dataclass
class WebConfig:
    """How ``arena serve`` was started."""

    db: str
    ladder: str = DEFAULT_LADDER
    data: Path | None = None
    """Where uploaded bots are unpacked to be played (default: beside a SQLite file)."""
    play: bool = False
    jobs: int = 1
    sandbox: str = "auto"
    executor: str = "local"
    ray_address: str | None = None
    secure_cookies: bool = False
    house_bots: bool = True
    """Enter the sample bots when the contest is created."""
    login_limits: tuple[int, int] = (10, 100)
    """Sign-in (and sign-up) attempts per 5 minutes: per account, per address."""
    upload_limits: tuple[int, int] = (20, 200)
    """Uploads per hour: per account, per address."""
    local_play: bool = False
    """``arena play``: one person on the loopback address, no accounts; the Play page only."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Settings for tests and ``arena play``: ``human_move_ms`` (a person's move time),
    ``play_rules`` (the Play form's default rules)."""

    def data_dir(self) -> Path:
        if self.data is not None:
            return self.data
        if "://" in self.db:
            raise ValueError("give --data DIR: where uploaded bots are unpacked to be played")
        return Path(self.db).expanduser().resolve().with_name(Path(self.db).name + ".bots")


def ensure_contest(engine: Engine, config: WebConfig) -> None:
    """The contest's ladder, created on first start with the hk preset (the organizer may
    change the rules until the first match is played), a random join code and the house
    bots."""
    created = False
    with Session(engine) as session, session.begin():
        ladder = session.scalar(select(Ladder).where(Ladder.name == config.ladder))
        if ladder is None:
            settings = {
                **DEFAULT_SETTINGS,
                "sandbox": config.sandbox,
                "join_code": secrets.token_urlsafe(6),
                "upload_limits": UploadLimits().to_dict(),
            }
            session.add(
                Ladder(name=config.ladder, rules=RuleSet.preset("hk").to_dict(), settings=settings)
            )
            created = True
        elif "join_code" not in ladder.settings:  # a ladder made by `arena ladder`
            ladder.settings = {
                **ladder.settings,
                "join_code": secrets.token_urlsafe(6),
                "upload_limits": UploadLimits().to_dict(),
            }
    if created and config.house_bots:
        enter_house_bots(engine, config.ladder)


HOUSE_BOTS = ("random", "greedy", "heuristic")


def enter_house_bots(engine: Engine, name: str) -> None:
    """The sample bots, entered when the contest is created: reference opponents from weak
    to strong, and a first upload has matches to play at once."""
    from ..bots import bot_digest, bot_files, resolve, sample_names
    from ..ladder.queries import enter_bots

    specs = [resolve(b) for b in HOUSE_BOTS if b in sample_names()]
    enter_bots(engine, name, [(s.name, s.runner_spec, bot_digest(bot_files(s))) for s in specs])


def ladder_row(session: Session, name: str) -> Ladder:
    ladder = session.scalar(select(Ladder).where(Ladder.name == name))
    if ladder is None:
        raise LookupError(f"no ladder named {name!r}")
    return ladder


def contest_settings(engine: Engine, name: str) -> dict[str, Any]:
    with Session(engine) as session:
        return dict(ladder_row(session, name).settings)


def contest_rules(engine: Engine, name: str) -> RuleSet:
    with Session(engine) as session:
        return RuleSet.from_dict(ladder_row(session, name).rules)


def played_any(engine: Engine, name: str) -> bool:
    with Session(engine) as session:
        ladder = ladder_row(session, name)
        return (
            session.scalar(
                select(Match.id)
                .where(Match.ladder_id == ladder.id, Match.status == "done")
                .limit(1)
            )
            is not None
        )


def update_settings(engine: Engine, name: str, **changes: Any) -> None:
    with Session(engine) as session, session.begin():
        ladder = ladder_row(session, name)
        ladder.settings = {**ladder.settings, **changes}


def set_rules(engine: Engine, name: str, rules: RuleSet) -> None:
    """The contest's rules; refused once a match has been played (its ratings would mix
    two games)."""
    with Session(engine) as session, session.begin():
        ladder = ladder_row(session, name)
        started = session.scalar(
            select(Match.id).where(Match.ladder_id == ladder.id, Match.status != "pending").limit(1)
        )
        if started is not None:
            raise ValueError("the rules cannot change once a match has been played")
        # matches planned for the old rules are planned again for the new
        planned = select(Match.id).where(Match.ladder_id == ladder.id)
        session.execute(delete(MatchSeat).where(MatchSeat.match_id.in_(planned)))
        session.execute(delete(Match).where(Match.ladder_id == ladder.id))
        ladder.rules = rules.to_dict()


# ----- the leaderboard, kept per state ------------------------------------------------------
def ladder_state(engine: Engine, name: str) -> tuple[Any, ...]:
    """What the leaderboard depends on: the finished matches and the entries (retired or
    paused changes which rows show).  Two cheap aggregate queries."""
    with Session(engine) as session:
        ladder = ladder_row(session, name)
        done = session.execute(
            select(func.count(), func.max(Match.id)).where(
                Match.ladder_id == ladder.id, Match.status == "done"
            )
        ).one()
        entries = tuple(
            tuple(row)
            for row in session.execute(
                select(Entry.version_id, Entry.retired, Entry.paused)
                .where(Entry.ladder_id == ladder.id)
                .order_by(Entry.version_id)
            )
        )
        return (ladder.id, *done, entries)


@dataclass
class Standings:
    state: tuple[Any, ...]
    rows: list[dict[str, Any]]
    done: int


class StandingsCache:
    """The leaderboard of each state of the ladder, computed once (under a lock, so that
    ten page views of a new state fit it once; while one refits, the others show the last
    standings)."""

    def __init__(self) -> None:
        self._kept: Standings | None = None
        self._history: tuple[tuple[Any, ...], Any] | None = None
        self._lock = threading.Lock()

    def history(self, engine: Engine, name: str, ladder_id: int, source: Any) -> Any:
        """The rating history (``source``: ``arena.ladder.queries.rating_history``) of the
        ladder's current state, from its stored snapshots, fitted from the matches while
        there are fewer than two."""
        state = ladder_state(engine, name)
        kept = self._history
        if kept is not None and kept[0] == state:
            return kept[1]
        if not self._lock.acquire(blocking=kept is None):
            assert kept is not None
            return kept[1]  # being recomputed: the last one rather than a wait (see get)
        try:
            found = source(engine, ladder_id, "auto", 12)
            self._history = (state, found)
            return found
        finally:
            self._lock.release()

    def get(self, engine: Engine, name: str) -> Standings:
        state = ladder_state(engine, name)
        kept = self._kept
        if kept is not None and kept.state == state:
            return kept
        # a page never waits for a refit while there are standings to show: the player
        # refits after each batch it saves (seconds on a ladder of 100,000 matches), and
        # meanwhile the pages show the last standings; only the very first fit is waited for
        if not self._lock.acquire(blocking=kept is None):
            assert kept is not None
            return kept
        try:
            kept = self._kept
            if kept is not None and kept.state == state:
                return kept
            with Session(engine) as session:
                _, rows = leaderboard(session, name)
            kept = self._kept = Standings(state, rows, int(state[1] or 0))
            return kept
        finally:
            self._lock.release()


# ----- bots and their owners ----------------------------------------------------------------
def bot_versions(session: Session, ladder_id: int, bot_name: str) -> list[dict[str, Any]]:
    bot = session.scalar(select(Bot).where(Bot.name == bot_name))
    if bot is None:
        return []
    entries = {
        e.version_id: e for e in session.scalars(select(Entry).where(Entry.ladder_id == ladder_id))
    }
    out = []
    for v in sorted(bot.versions, key=lambda v: v.number):
        e = entries.get(v.id)
        out.append(
            {
                "version": v.number,
                "label": v.label,
                "created": v.created.isoformat() if v.created else None,
                "entered": e is not None,
                "retired": bool(e and e.retired),
                "paused": bool(e and e.paused),
            }
        )
    return out


def version_labels(session: Session) -> dict[int, str]:
    """Every version's label (``BotVersion.label``'s), in one query: the names are read in
    the same join, never a query per version."""
    return {
        vid: name if number == 1 else f"{name}@v{number}"
        for vid, number, name in session.execute(
            select(BotVersion.id, BotVersion.number, Bot.name).join(
                Bot, BotVersion.bot_id == Bot.id
            )
        )
    }


def head_to_head(
    session: Session, ladder_id: int, ids: list[int], labels: dict[int, str], limit: int = 500
) -> list[dict[str, Any]]:
    """A bot's results against each opponent, from the duplicate deal blocks of its newest
    ``limit`` matches: deals met, deals where it scored more, and its mean lead in points
    per deal (each block's totals over the rotations, as the ratings read them)."""
    from ..ladder.store import DealResult

    recent = (
        select(Match.id)
        .join(MatchSeat, MatchSeat.match_id == Match.id)
        .where(Match.ladder_id == ladder_id, Match.status == "done", MatchSeat.version_id.in_(ids))
        .order_by(Match.id.desc())
        .limit(limit)
    )
    mine = {str(i) for i in ids}
    tally: dict[str, list[float]] = {}
    for (totals,) in session.execute(
        select(DealResult.totals).where(DealResult.match_id.in_(recent.scalar_subquery()))
    ):
        own = [v for k, v in totals.items() if k in mine]
        if not own:
            continue
        for key, points in totals.items():
            if key in mine:
                continue
            label = labels.get(int(key), key)
            t = tally.setdefault(label, [0, 0, 0.0])
            t[0] += 1
            t[1] += own[0] > points
            t[2] += own[0] - points
    return sorted(
        (
            {
                "opponent": label,
                "deals": int(n),
                "ahead": int(ahead),
                "mean_lead": round(lead / n, 2),
            }
            for label, (n, ahead, lead) in tally.items()
        ),
        key=lambda r: (-r["deals"], r["opponent"]),
    )
