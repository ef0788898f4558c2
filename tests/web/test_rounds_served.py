"""A served contest at contest scale: ``arena serve --play``'s worker plans round by round,
so every one of 60 bots is seated in the first round and ranked once it is played."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from arena.bots import bot_digest, bot_files, resolve
from arena.ladder.queries import enter_bots
from arena.web.app import create_app
from arena.web.contest import WebConfig, update_settings

from testkit import wait_for

ROOT = Path(__file__).resolve().parents[2]


def leaderboard(url: str) -> list[dict]:
    return list(httpx.get(f"{url}/api/leaderboard", timeout=30).json()["rows"])


def done(url: str) -> int:
    return int(httpx.get(f"{url}/api/matches", timeout=30).json()["total"])


@pytest.mark.slow
def test_a_served_contest_of_60_bots_plays_rounds_until_every_bot_ranks(tmp_path, live_server):
    """60 fast bots (the house bots and 57 entries of the random and greedy samples, played
    in-process, one deal a match), one match a bot wanted: the worker plays a round that
    seats every bot (15 to 20 matches — the old plan was 70 fixed groups, and beyond 8
    bots it left some out), rests, and the leaderboard ranks all 60."""
    app = create_app(WebConfig(db=str(tmp_path / "c.db"), play=True, sandbox="inproc", jobs=2))
    engine = app.state.engine
    update_settings(engine, "contest", deals=1, matches_per_bot=1)
    specs = [resolve(str(ROOT / "sample_bots" / n)) for n in ("random", "greedy")]
    digests = [bot_digest(bot_files(s)) for s in specs]
    enter_bots(
        engine,
        "contest",
        [(f"fast{i:02d}", specs[i % 2].runner_spec, digests[i % 2]) for i in range(57)],
    )
    url = live_server(app)

    def all_ranked() -> bool:
        rows = leaderboard(url)
        return len(rows) == 60 and all(r["rated"] for r in rows)

    wait_for(all_ranked, 600, "all 60 bots ranked")
    rows = leaderboard(url)
    assert sorted(r["rank"] for r in rows) == list(range(1, 61))
    assert all(r["matches"] >= 1 for r in rows)
    assert done(url) <= 30  # one round: a cover of the field, not 70 fixed groups


async def test_a_bot_entered_mid_round_gets_its_placement_at_once(tmp_path):
    """While a round of a 10-bot contest is being played, a bot whose upload passes gets
    placement matches at once (pending in the current round, played before the next
    round is planned), not a round later."""
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from arena.ladder.queries import plan_ladder
    from arena.ladder.store import Match
    from arena.web.player import Player

    app = create_app(WebConfig(db=str(tmp_path / "c.db"), sandbox="inproc", house_bots=False))
    engine = app.state.engine
    enter_bots(engine, "contest", [(f"b{i}", "nowhere.py", f"h{i}") for i in range(10)])
    pending, _ = plan_ladder(engine, "contest", 1)
    assert 3 <= pending <= 4
    player = Player(engine, app.state.config)
    try:
        player._playing = True  # the round is being played
        late = player.enter("late", "nowhere.py", "l" * 64)
        await player.place_newcomers()
    finally:
        player.fitter.close()
    with Session(engine) as s:
        rows = s.execute(select(Match.round, Match.seats, Match.status)).all()
    placed = [seats for r, seats, _ in rows if late in seats]
    assert placed and {r for r, _, _ in rows} == {0} and {st for *_, st in rows} == {"pending"}
    assert len(rows) == pending + len(placed)
