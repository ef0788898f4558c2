"""A bot's fault details are its owner's: over a real server on loopback, after a real ladder
match of a hostile bot (it raises with a secret in its exception and on the line that raises,
then prints a secret to stderr and dies), an anonymous visitor and another participant find
none of the three secrets on any page, JSON twin, record download or Play-game replay; the
owner and the organizer see them where fault details are shown.  And the stored public forms
(the match's record, its result, a Play game's record) never hold them at all, so no page
written later can leak them by mistake."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session
from test_api import sign_in, sign_up

from arena.bots import bot_digest, bot_files, resolve
from arena.ladder.queries import enter_bots, plan_ladder
from arena.ladder.running import run_pending
from arena.ladder.store import FaultRow, Match, MatchRecord
from arena.match import run_match
from arena.web.accounts import create_user
from arena.web.app import create_app
from arena.web.botstore import claim
from arena.web.contest import WebConfig, update_settings
from arena.web.models import HumanGame, User
from bigtwo import RuleSet
from bigtwo.record import compress, read_events

SECRET_EXC = "EXCEPTIONSECRET9q4w"
SECRET_SRC = "SOURCELINESECRET5t2z"
SECRET_ERR = "STDERRSECRET8k1m"
SECRETS = (SECRET_EXC, SECRET_SRC, SECRET_ERR)
HOSTILE = f'''import os
import sys

from bigtwo import Bot


class Leaky(Bot):
    calls = 0

    def act(self, observation):
        Leaky.calls += 1
        if Leaky.calls == 1:
            raise RuntimeError("{SECRET_EXC}")  # {SECRET_SRC}
        sys.stderr.write("{SECRET_ERR}\\n")
        sys.stderr.flush()
        os._exit(3)
'''


def _found(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def _contest(tmp_path: Path, sandbox: str, db: str | None = None) -> tuple[Any, dict[str, Any]]:
    """A contest (on ``db``: by default a SQLite file) with an organizer, and the hostile
    bot's spec; returns the app and what was made."""
    db = db or str(tmp_path / "c.db")
    app = create_app(WebConfig(db=db, data=tmp_path / "bots", sandbox=sandbox))
    engine = app.state.engine
    create_user(engine, "org", "organizer", "organizer-pw")
    folder = tmp_path / "leaky"
    folder.mkdir()
    (folder / "bot.py").write_text(HOSTILE)
    spec = resolve(str(folder / "bot.py"))
    return app, {"spec": spec, "db": db}


async def _play_ladder(app: Any, spec: Any, owner: str) -> int:
    engine = app.state.engine
    ladder = app.state.config.ladder
    update_settings(engine, ladder, deals=1, rotations=4)
    with Session(engine) as s, s.begin():
        user = s.scalar(select(User).where(User.name == owner))
        assert user is not None
        claim(s, "leaky", user.id)
    enter_bots(engine, ladder, [("leaky", spec.runner_spec, bot_digest(bot_files(spec)))])
    plan_ladder(engine, ladder, 1)
    await run_pending(engine, ladder, 1)
    with Session(engine) as s:
        faults = s.scalars(select(FaultRow)).all()
        # the hostile bot did fault, with its secrets, in the private store
        assert any(SECRET_EXC in f.detail for f in faults), [f.detail for f in faults]
        assert any(SECRET_ERR in f.detail for f in faults), [f.detail for f in faults]
        mid = s.scalars(select(Match.id).where(Match.status == "done")).first()
        assert mid is not None
        return int(mid)


async def _play_game(app: Any, spec: Any, tmp_path: Path, owner: str) -> str:
    """A Play game of ``owner``'s against the hostile bot, stored as the Play page stores
    one (``games.started``/``ended``), from a real referee record."""
    from arena.web import games

    record = tmp_path / "game.jsonl"
    bots = [resolve("greedy"), spec, resolve("random"), resolve("heuristic")]
    rules = RuleSet.preset("hk").replace(match_end="hands", match_end_value=1)
    summary = await run_match(bots, rules, 7, None, "process", record)
    events = [e for _, e in read_events(record)]
    assert any(SECRET_EXC in json.dumps(e) for e in events)  # the referee's record holds it

    class _Setup:
        seat = 0

        def __init__(self) -> None:
            self.rules = rules

        def bots(self) -> list[Any]:
            return bots

    class _Table:
        id = "g" * 32
        status = "over"
        setup = _Setup()

    engine = app.state.engine
    with Session(engine) as s:
        user_id = s.scalar(select(User.id).where(User.name == owner))
    table = _Table()
    table.owner = user_id  # type: ignore[attr-defined]
    games.started(engine, table)  # type: ignore[arg-type]
    games.ended(engine, table, summary, compress(events))  # type: ignore[arg-type]
    return table.id


def _check_privacy(url: str, app: Any, mid: int, game: str, tmp_path: Path) -> None:
    alice = sign_in(url, "alice", "participant-pw")
    bob = sign_in(url, "bob", "participant-pw")
    org = sign_in(url, "org", "organizer-pw")
    anon = httpx.Client(base_url=url)
    public = [
        "/",
        "/api/leaderboard",
        "/fragments/leaderboard",
        "/matches",
        "/api/matches",
        "/matches?bot=leaky",
        f"/matches/{mid}",
        f"/api/matches/{mid}",
        f"/api/matches/{mid}/record",
        "/bots/leaky",
        "/api/bots/leaky",
    ]
    spec = httpx.get(url + "/openapi.json").json()
    fill = {"{name}": "leaky", "{match_id}": str(mid), "{table_id}": game, "{upload_id}": "1"}
    for path, ops in spec["paths"].items():
        if "get" in ops:
            for key, value in fill.items():
                path = path.replace(key, value)
            public.append(path)
    for who, name in ((anon, "anonymous"), (bob, "bob")):
        for path in public:
            r = who.get(path)
            assert not _found(r.text), f"{name} reads {_found(r.text)} at {path}"
    # bob's own Play game against the hostile bot: his replay shows the bot's kind only
    r = bob.get(f"/play/{game}/replay")
    assert r.status_code == 200, r.text
    assert "crash" in r.text
    assert not _found(r.text), f"bob's game replay shows {_found(r.text)}"
    # the match page still says what happened, in the referee's fixed words
    data = anon.get(f"/api/matches/{mid}").json()
    faults = data["replay"]["faults"]
    assert faults and all(f["kind"] in ("crash", "disconnect") for f in faults)
    assert all(f["detail"] is None and f["reason"] for f in faults), faults
    # the owner and the organizer see the details where they are shown
    for who, name in ((alice, "alice"), (org, "org")):
        page = who.get("/bots/leaky").text
        assert SECRET_EXC in page and SECRET_ERR in page, f"{name}'s bot page lacks details"
        shown = who.get(f"/api/matches/{mid}").json()["replay"]["faults"]
        details = " ".join(f["detail"] or "" for f in shown)
        assert SECRET_EXC in details and SECRET_ERR in details, f"{name}: {shown}"
        assert SECRET_EXC in who.get(f"/matches/{mid}").text
    # what is stored as public never held them
    engine = app.state.engine
    with Session(engine) as s:
        for rec in s.scalars(select(MatchRecord)):
            assert not _found(gzip.decompress(rec.data).decode()), "a stored record holds one"
        for m in s.scalars(select(Match)):
            assert not _found(json.dumps(m.result)), "a stored result holds one"
        for g in s.scalars(select(HumanGame)):
            assert g.record is None or not _found(gzip.decompress(g.record).decode())


@pytest.mark.slow
async def test_fault_details_are_the_owners_on_every_page_process_sandbox(tmp_path, live_server):
    app, made = _contest(tmp_path, "process")
    url = live_server(app)
    sign_up(url, app, "alice")
    sign_up(url, app, "bob")
    mid = await _play_ladder(app, made["spec"], "alice")
    game = await _play_game(app, made["spec"], tmp_path, "bob")
    _check_privacy(url, app, mid, game, tmp_path)
    # the operator's own command line still reads every detail
    from testkit import arena

    shown = arena("replay", str(mid), "--db", made["db"], timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert SECRET_EXC in shown.stdout and SECRET_ERR in shown.stdout, shown.stdout[-3000:]
    faults = arena("ladder", "faults", "leaky", "--name", "contest", "--db", made["db"])
    assert SECRET_EXC in faults.stdout, faults.stdout + faults.stderr


@pytest.mark.docker
@pytest.mark.slow
async def test_fault_details_are_the_owners_on_every_page_docker_sandbox(tmp_path, live_server):
    from testkit import need_docker

    need_docker()
    app, made = _contest(tmp_path, "docker")
    url = live_server(app)
    sign_up(url, app, "alice")
    sign_up(url, app, "bob")
    mid = await _play_ladder(app, made["spec"], "alice")
    game = await _play_game(app, made["spec"], tmp_path, "bob")
    _check_privacy(url, app, mid, game, tmp_path)


def _age(engine: Any, raw_game: Path) -> None:
    """Make a ladder look as one kept before details were kept apart (revision 0004): the
    details back in its records and results, no ``faults.seat``."""
    from sqlalchemy import text

    from arena.public_record import fault_key, with_details

    with Session(engine) as s, s.begin():
        for m in s.scalars(select(Match).where(Match.status == "done")):
            details: dict[Any, list[str]] = {}
            for f in s.scalars(select(FaultRow).where(FaultRow.match_id == m.id)):
                key = fault_key(f.seat, {"kind": f.kind, "hand": f.hand, "turn": f.turn})
                details.setdefault(key, []).append(f.detail)
            rec = s.get(MatchRecord, m.id)
            assert rec is not None
            events = [json.loads(line) for line in gzip.decompress(rec.data).splitlines()]
            rec.data = compress(with_details(events, details))
            result = json.loads(json.dumps(m.result))
            for seat in result["seats"]:
                seat["faults"] = with_details(
                    [{**f, "type": "fault", "seat": seat["seat"]} for f in seat["faults"]],
                    details,
                )
            m.result = result
        for g in s.scalars(select(HumanGame)):
            g.record = compress(e for _, e in read_events(raw_game))  # the referee's own
    with engine.begin() as conn:
        for later in ("rating_states", "match_digests"):  # (0008's tables)
            conn.execute(text(f"DROP TABLE IF EXISTS {later}"))
        conn.execute(text("ALTER TABLE faults DROP COLUMN seat"))
        conn.execute(text("DROP INDEX IF EXISTS ix_matches_ladder_id_round"))  # (0007's)
        conn.execute(text("ALTER TABLE matches DROP COLUMN round"))
        for later in ("check_charges", "standings_fits", "worker_status"):  # (0006's tables)
            conn.execute(text(f"DROP TABLE IF EXISTS {later}"))
        conn.execute(text("UPDATE alembic_version SET version_num = '0004'"))
    with Session(engine) as s:
        rec = s.scalars(select(MatchRecord)).first()
        assert rec is not None and SECRET_EXC in gzip.decompress(rec.data).decode()


@pytest.mark.slow
async def test_an_older_ladder_is_rewritten_public_and_served_so(db, tmp_path, live_server):
    """Revision 0005 on a ladder kept before it (SQLite and PostgreSQL): its records,
    results and Play games rewritten public, its details still its owner's."""
    app, made = _contest(tmp_path, "process", db)
    url = live_server(app)
    sign_up(url, app, "alice")
    sign_up(url, app, "bob")
    mid = await _play_ladder(app, made["spec"], "alice")
    game = await _play_game(app, made["spec"], tmp_path, "bob")
    _age(app.state.engine, tmp_path / "game.jsonl")
    app.state.engine.dispose()
    again = create_app(WebConfig(db=db, data=tmp_path / "bots", sandbox="process"))  # upgrades
    _check_privacy(live_server(again), again, mid, game, tmp_path)


@pytest.mark.browser
@pytest.mark.slow
async def test_the_replay_page_in_a_browser_shows_the_reason_to_all_and_the_detail_to_its_owner(
    browser, tmp_path, live_server
):
    from selenium.webdriver.common.by import By
    from test_replay_viewer import _no_alert_no_errors, _open

    app, made = _contest(tmp_path, "process")
    url = live_server(app)
    alice = sign_up(url, app, "alice")
    mid = await _play_ladder(app, made["spec"], "alice")
    faults = alice.get(f"/api/matches/{mid}").json()["replay"]["faults"]
    raised = next(f for f in faults if SECRET_EXC in (f["detail"] or ""))
    where = f"{url}/matches/{mid}#hand={raised['hand'] + 1}&turn={raised['at'] + 1}"
    browser.delete_all_cookies()
    _open(browser, where)  # anonymous
    browser.get_log("browser")
    note = browser.find_element(By.CSS_SELECTOR, "#notes .fault").text
    assert "leaky" in note and "the bot's act() raised an exception" in note, note
    assert not _found(browser.page_source), _found(browser.page_source)
    _no_alert_no_errors(browser)
    browser.add_cookie({"name": "arena_session", "value": alice.cookies["arena_session"]})
    _open(browser, where)  # its owner
    note = browser.find_element(By.CSS_SELECTOR, "#notes .fault").text
    assert SECRET_EXC in note, note
    browser.delete_all_cookies()
