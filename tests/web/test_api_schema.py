"""The OpenAPI document describes every answer of the JSON API: each ``/api`` route names
its answer type (``arena.web.answers``), never an empty or any-object schema, and every live
answer of a contest that played real matches fits its type with no field left undescribed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from sqlalchemy import select
from sqlalchemy.orm import Session
from test_api import BOT, csrf_of, sign_in
from test_replay_viewer import FaultyBot, SeededBot

from arena.bots import bot_digest, bot_files, resolve
from arena.ladder.queries import enter_bots, plan_ladder
from arena.ladder.running import run_pending
from arena.ladder.store import Match
from arena.web.accounts import create_user
from arena.web.answers import API_ANSWERS, Replay
from arena.web.app import create_app
from arena.web.botstore import claim
from arena.web.contest import WebConfig, update_settings
from arena.web.models import User
from arena.web.replay_data import replay_data
from bigtwo import RuleSet, play_local
from bigtwo.record import read_events

RECORD = "/api/matches/{match_id}/record"


def _schema(spec: dict[str, Any], ref: dict[str, Any]) -> dict[str, Any]:
    assert set(ref) == {"$ref"}, f"an inline schema, not a named answer: {ref}"
    return spec["components"]["schemas"][ref["$ref"].rsplit("/", 1)[1]]


def test_every_json_route_names_its_answer_in_the_openapi_document(tmp_path: Path) -> None:
    app = create_app(WebConfig(db=str(tmp_path / "c.db"), sandbox="process"))
    spec = app.openapi()
    seen = set()
    for path, ops in spec["paths"].items():
        if not path.startswith("/api"):
            continue
        for method, op in ops.items():
            ok = {k: v for k, v in op["responses"].items() if k.startswith("2")}
            assert len(ok) == 1, (method, path, op["responses"])
            (content,) = [v["content"] for v in ok.values()]
            if path == RECORD:
                assert content == {"application/x-ndjson": {"schema": {"type": "string"}}}
                continue
            key = (method.upper(), path)
            assert key in API_ANSWERS, f"{key} answers JSON with no answer type"
            seen.add(key)
            schema = _schema(spec, content["application/json"]["schema"])
            assert schema["title"] == API_ANSWERS[key].__name__
            assert schema.get("properties"), f"{key}: an empty schema"
            assert schema.get("additionalProperties") is False, f"{key}: any object"
            for name, prop in schema["properties"].items():
                assert prop, f"{key}: field {name} has an empty (any) schema"
    assert seen == set(API_ANSWERS)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def contest(tmp_path_factory: pytest.TempPathFactory, serve_asgi: Any) -> Any:
    """A contest that played one round of real matches (house bots and an organizer's bot),
    served on a real socket; yields (url, match id)."""
    tmp = tmp_path_factory.mktemp("schema")
    app = create_app(WebConfig(db=str(tmp / "c.db"), data=tmp / "bots", sandbox="process"))
    engine = app.state.engine
    ladder = app.state.config.ladder
    create_user(engine, "org", "organizer", "organizer-pw")
    folder = tmp / "mine"
    folder.mkdir()
    (folder / "bot.py").write_bytes(BOT)
    spec = resolve(str(folder / "bot.py"))
    update_settings(engine, ladder, deals=1, rotations=4)
    with Session(engine) as s, s.begin():
        user = s.scalar(select(User).where(User.name == "org"))
        assert user is not None
        claim(s, "mine", user.id)
    enter_bots(engine, ladder, [("mine", spec.runner_spec, bot_digest(bot_files(spec)))])
    plan_ladder(engine, ladder, 1)
    await run_pending(engine, ladder, 1)
    with Session(engine) as s:
        mid = s.scalars(select(Match.id).where(Match.status == "done")).first()
    assert mid is not None
    with serve_asgi(app) as url:
        yield url, int(mid)


def _fits(key: tuple[str, str], response: httpx.Response) -> dict[str, Any]:
    assert response.status_code in (200, 202), response.text
    data = response.json()
    API_ANSWERS[key].model_validate(data)  # every field described (extra ones fail)
    return data


def test_every_live_answer_fits_its_type(contest: Any) -> None:
    url, mid = contest
    org = sign_in(url, "org", "organizer-pw")
    board = _fits(("GET", "/api/leaderboard"), org.get("/api/leaderboard"))
    assert board["rows"] and any(r["rated"] for r in board["rows"])
    _fits(("GET", "/api/me"), org.get("/api/me"))
    _fits(("GET", "/api/rules"), org.get("/api/rules"))
    page = _fits(("GET", "/api/matches"), org.get("/api/matches"))
    assert page["matches"]
    one = _fits(("GET", "/api/matches/{match_id}"), org.get(f"/api/matches/{mid}"))
    assert one["replay"]["valid"] and one["replay"]["hands"]
    for who in (org, httpx.Client(base_url=url)):  # the owner's view and a stranger's
        bot = _fits(("GET", "/api/bots/{name}"), who.get("/api/bots/mine"))
        assert bot["standing"] and bot["recent_matches"]
    sent = org.post(
        "/api/bots",
        data={"name": "mine", "csrf": csrf_of(org, "/upload")},
        files={"file": ("bot.py", BOT + b"# again\n")},
    )
    accepted = _fits(("POST", "/api/bots"), sent)
    _fits(("GET", "/api/uploads/{upload_id}"), org.get(accepted["status_url"]))


def test_replays_with_faults_and_problems_fit_their_type(tmp_path: Path) -> None:
    """The replay part of a match's answer, for what the contest above has none of: a
    faulty bot's record (faults with their details, moves the referee played) and a record
    that fails the engine's check."""
    hk = RuleSet.preset("hk").replace(match_end="hands", match_end_value=3)
    bots = [SeededBot(1, "one"), FaultyBot(2, "faulty"), SeededBot(3), SeededBot(4)]
    record = play_local(bots, hk, seed=11, record=tmp_path / "hk.jsonl").record
    assert record is not None
    data = replay_data([e for _, e in read_events(record)])
    assert data["faults"] and any(t.get("by_referee") for h in data["hands"] for t in h["turns"])
    Replay.model_validate(data)
    Replay.model_validate(replay_data([{"type": "match", "rules": "nonsense"}]))  # a problem
