"""The web arena's routes: every page and its JSON twin, every bad-input case the issue
lists, and the ownership rules — participant B never sees A's logs, never replaces A's bot,
never fetches A's code by any URL.  Sessions, forms and uploads go over a real socket
(uvicorn on 127.0.0.1); what is only the app's answer to one request (a page's headers,
a JSON twin, a refusal's reason) is asked in-process through httpx's ASGI transport."""

from __future__ import annotations

import io
import re
import zipfile
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import update
from sqlalchemy.orm import Session

from arena.web.accounts import create_user
from arena.web.app import create_app
from arena.web.contest import WebConfig, contest_settings
from arena.web.models import Upload, WebSession, now

SECRET = "A_SECRET_STRATEGY_LINE_7f3a"
BOT = (
    "from bigtwo import Bot\n\n\nclass Mine(Bot):\n    def act(self, observation):\n"
    f"        return observation.legal_moves[0]  # {SECRET}\n"
).encode()


@pytest.fixture
def site(tmp_path: Path, live_server):
    """A contest (no player) with an organizer; returns (base url, app)."""
    app = create_app(WebConfig(db=str(tmp_path / "c.db"), sandbox="process"))
    create_user(app.state.engine, "org", "organizer", "organizer-pw")
    return live_server(app), app


@pytest.fixture
async def api(tmp_path: Path):
    """The same contest as ``site``, answered in-process: an ``httpx.AsyncClient`` on the
    app through ``httpx.ASGITransport`` (no socket, no server thread), with the app's
    lifespan run around it as a server runs it."""
    app = create_app(WebConfig(db=str(tmp_path / "c.db"), sandbox="process"))
    create_user(app.state.engine, "org", "organizer", "organizer-pw")
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client,
    ):
        yield client


def csrf_of(client: httpx.Client, path: str) -> str:
    page = client.get(path)
    assert page.status_code == 200, page.text
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found, f"no form token on {path}"
    return found.group(1)


def sign_in(url: str, name: str, password: str) -> httpx.Client:
    client = httpx.Client(base_url=url)
    r = client.post(
        "/login", data={"name": name, "password": password, "csrf": csrf_of(client, "/login")}
    )
    assert r.status_code == 303, r.text
    return client


def sign_up(url: str, app, name: str, password: str = "participant-pw") -> httpx.Client:
    client = httpx.Client(base_url=url)
    code = contest_settings(app.state.engine, "contest")["join_code"]
    r = client.post(
        "/signup",
        data={
            "name": name,
            "password": password,
            "join_code": code,
            "csrf": csrf_of(client, "/signup"),
        },
    )
    assert r.status_code == 303 and r.headers["location"] == "/upload", r.text
    return client


def upload(client: httpx.Client, name: str, filename: str, data: bytes) -> httpx.Response:
    return client.post(
        "/upload",
        data={"name": name, "csrf": csrf_of(client, "/upload")},
        files={"file": (filename, data)},
    )


# ----- pages and their twins --------------------------------------------------------------
@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/matches",
        "/rules",
        "/api",
        "/login",
        "/signup",
        "/static/arena.css",
        "/static/live.js",
    ],
)
async def test_public_pages_answer_with_security_headers(api, path):
    r = await api.get(path)
    assert r.status_code == 200
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["x-content-type-options"] == "nosniff"


async def test_json_twins_carry_the_same_numbers_as_the_pages(api):
    board = (await api.get("/api/leaderboard")).json()
    assert board["ladder"] == "contest" and board["matches_done"] == 0
    # the house bots are entered when the contest is made, unrated until they play
    assert sorted(r["bot"] for r in board["rows"]) == ["greedy", "heuristic", "random"]
    assert all(not r["rated"] for r in board["rows"])
    page = (await api.get("/")).text
    for row in board["rows"]:
        assert f'data-bot="{row["bot"]}"' in page
    rules = (await api.get("/api/rules")).json()
    assert rules["rules"]["scoring"] == "hk" and "deal_key" not in rules["settings"]
    assert "join_code" not in (await api.get("/api/rules")).text
    spec = (await api.get("/openapi.json")).json()
    for path in ("/api/leaderboard", "/api/matches", "/api/matches/{match_id}", "/api/bots",
                 "/api/bots/{name}", "/api/rules", "/api/uploads/{upload_id}"):  # fmt: skip
        assert path in spec["paths"], path
    assert "/api/leaderboard" in (await api.get("/api")).text


@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        ("/api/bots/nobody", 404, "no bot named 'nobody'"),
        ("/api/matches/999", 404, "no match 999"),
        ("/api/matches/abc", 422, "match_id"),
        ("/api/matches?page=0", 422, "page"),
        ("/api/matches?page=9", 404, "no such page"),
        ("/api/matches?bot=ghost", 404, "no bot named 'ghost'"),
        ("/api/uploads/1", 401, "sign in first"),
        ("/api/nothing", 404, "Not Found"),
        ("/static/../c.db", 404, "Not Found"),
    ],
)
async def test_bad_requests_get_a_4xx_and_one_line_reason(api, path, status, words):
    r = await api.get(path)
    assert r.status_code == status
    reason = (
        r.json()["error"] if r.headers["content-type"].startswith("application/json") else r.text
    )
    assert words in reason
    if path.startswith("/api/"):
        assert "\n" not in r.json()["error"]


async def test_a_page_error_is_a_page_with_the_reason(api):
    r = await api.get("/bots/nobody")
    assert r.status_code == 404 and "text/html" in r.headers["content-type"]
    assert "no bot named &#39;nobody&#39;" in r.text


# ----- accounts -----------------------------------------------------------------------------
def test_signup_needs_the_join_code_and_a_good_name(site):
    url, app = site
    client = httpx.Client(base_url=url)
    token = csrf_of(client, "/signup")
    r = client.post(
        "/signup",
        data={"name": "eve", "password": "long-enough", "join_code": "wrong", "csrf": token},
    )
    assert r.status_code == 403 and "join code" in r.text
    code = contest_settings(app.state.engine, "contest")["join_code"]
    for name, words in [
        ("<b>x</b>", "letters, digits"),
        ("a", "2-32"),
        ("org", "taken"),
        ("ORG", "taken"),
    ]:
        r = client.post(
            "/signup",
            data={"name": name, "password": "long-enough", "join_code": code, "csrf": token},
        )
        assert r.status_code == 400 and words in r.text, (name, r.text[-400:])
    r = client.post(
        "/signup", data={"name": "eve", "password": "short", "join_code": code, "csrf": token}
    )
    assert r.status_code == 400 and "8 to 200" in r.text
    r = client.post(
        "/signup", data={"name": "eve", "password": "long-enough", "join_code": code, "csrf": token}
    )
    assert r.status_code == 303
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie.replace("Lax", "lax")
    assert client.get("/api/me").json() == {"name": "eve", "role": "participant"}


@pytest.mark.parametrize(
    "path", ["/login", "/signup", "/logout", "/upload", "/account/tokens", "/admin/join-code"]
)
def test_every_form_refuses_a_missing_or_foreign_csrf_token(site, path):
    url, _ = site
    client = sign_in(url, "org", "organizer-pw")
    for token in ("", "forged-token"):
        data = {
            "name": "x1",
            "password": "whatever-pw",
            "join_code": "x",
            "csrf": token,
            "code": "abcd",
        }
        files = {"file": ("bot.py", BOT)} if path == "/upload" else None
        r = client.post(path, data=data, files=files)
        assert r.status_code == 403, (path, token, r.status_code)
        assert "security token" in r.text


def test_wrong_passwords_are_rate_limited_per_account(site):
    url, _ = site
    client = httpx.Client(base_url=url)
    token = csrf_of(client, "/login")
    codes = [
        client.post(
            "/login", data={"name": "org", "password": f"guess-{i}", "csrf": token}
        ).status_code
        for i in range(12)
    ]
    assert codes[:10] == [401] * 10 and codes[10:] == [429, 429]
    # the right password is refused too while the account's window is full
    r = client.post("/login", data={"name": "org", "password": "organizer-pw", "csrf": token})
    assert r.status_code == 429 and "wait" in r.text
    # the address is a classroom's: another account signs in from it meanwhile
    r = client.post("/login", data={"name": "teacher2", "password": "no-such-one", "csrf": token})
    assert r.status_code == 401


def test_uploads_are_rate_limited_per_account(tmp_path, live_server):
    config = WebConfig(db=str(tmp_path / "c.db"), sandbox="process", upload_limits=(2, 200))
    app = create_app(config)
    url = live_server(app)
    alice = sign_up(url, app, "alice")
    codes = [upload(alice, "alicebot", "bot.py", BOT + b"#%d\n" % i).status_code for i in range(3)]
    assert codes == [303, 303, 429]
    assert upload(sign_up(url, app, "bob"), "bobbot", "bot.py", BOT).status_code == 303


def test_an_expired_session_is_signed_out(site):
    url, app = site
    client = sign_in(url, "org", "organizer-pw")
    assert client.get("/account").status_code == 200
    with Session(app.state.engine) as s, s.begin():
        s.execute(update(WebSession).values(expires=now() - timedelta(seconds=1)))
    r = client.get("/account")
    assert r.status_code == 401 and "sign in first" in r.text


def test_changing_the_password_ends_the_other_sessions(site):
    url, _ = site
    first = sign_in(url, "org", "organizer-pw")
    second = sign_in(url, "org", "organizer-pw")
    token = csrf_of(first, "/account")
    r = first.post(
        "/account/password",
        data={"current": "organizer-pw", "new": "a-new-password", "csrf": token},
    )
    assert r.status_code == 303
    assert first.get("/account").status_code == 200
    assert second.get("/account").status_code == 401
    sign_in(url, "org", "a-new-password")


def test_a_one_time_password_must_be_changed(site):
    url, _ = site
    org = sign_in(url, "org", "organizer-pw")
    page = org.post("/admin/users", data={"name": "student1", "csrf": csrf_of(org, "/admin")})
    assert page.status_code == 200
    password = re.search(r'id="one-time-password">([^<]+)<', page.text).group(1)
    client = httpx.Client(base_url=url)
    r = client.post(
        "/login", data={"name": "student1", "password": password, "csrf": csrf_of(client, "/login")}
    )
    assert r.status_code == 303 and r.headers["location"] == "/account"
    assert 'id="must-change"' in client.get("/account").text


# ----- uploads --------------------------------------------------------------------------------
def zipped(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


@pytest.mark.parametrize(
    ("filename", "data", "status", "words"),
    [
        ("bot.zip", b"not a zip at all", 400, "not a zip archive"),
        ("bot.zip", zipped({"../evil.py": b"x", "bot.py": BOT}), 400, ".."),
        ("bot.zip", zipped({"helper.py": b"x"}), 400, "bot.py"),
        ("bot.exe", BOT, 400, ".py"),
        ("bot.py", b"", 400, "empty"),
        ("bot.zip", zipped({"bot.py": BOT, "big.bin": bytes(60 << 20)}), 400, "ratio"),
    ],
    ids=["not-a-zip", "dot-dot", "no-bot-py", "wrong-suffix", "empty", "zip-bomb"],
)
def test_a_malformed_upload_is_refused_with_its_reason_and_nothing_kept(
    site, filename, data, status, words
):
    url, app = site
    client = sign_up(url, app, "alice")
    r = upload(client, "alicebot", filename, data)
    assert r.status_code == status and words in r.text, r.text[-500:]
    with Session(app.state.engine) as s:
        assert s.query(Upload).count() == 0


def test_an_upload_over_the_packed_cap_is_cut_off_before_it_is_read(site):
    url, app = site
    client = sign_up(url, app, "alice")
    r = upload(client, "alicebot", "bot.zip", b"PK" + bytes(6 << 20))
    assert r.status_code == 413 and "larger than" in r.text


def test_bot_names_are_checked_and_owned(site):
    url, app = site
    alice = sign_up(url, app, "alice")
    bob = sign_up(url, app, "bob")
    for name, status, words in [
        ("<script>", 400, "letters, digits"),
        ("greedy", 400, "sample bot"),
        ("x" * 41, 400, "1-40 characters"),
    ]:
        r = upload(alice, name, "bot.py", BOT)
        assert r.status_code == status and words in r.text, (name, r.text[-300:])
    r = upload(alice, "alicebot", "bot.py", BOT)
    assert r.status_code == 303
    # the same code again is the same upload, not a new version
    assert upload(alice, "alicebot", "bot.py", BOT).headers["location"] == r.headers["location"]
    r = upload(bob, "alicebot", "bot.py", BOT + b"# bob's\n")
    assert r.status_code == 409 and "taken by someone else" in r.text


def test_nobody_but_the_owner_and_the_organizer_sees_an_upload_or_a_bots_logs(site):
    url, app = site
    alice = sign_up(url, app, "alice")
    bob = sign_up(url, app, "bob")
    org = sign_in(url, "org", "organizer-pw")
    upload_id = int(upload(alice, "alicebot", "bot.py", BOT).headers["location"].rsplit("/", 1)[1])
    with Session(app.state.engine) as s, s.begin():
        s.execute(update(Upload).values(log="alice's own output", reason="x"))
    assert alice.get(f"/api/uploads/{upload_id}").json()["log"] == "alice's own output"
    assert org.get(f"/api/uploads/{upload_id}").status_code == 200
    for who in (bob, httpx.Client(base_url=url)):
        r = who.get(f"/api/uploads/{upload_id}")
        assert r.status_code in (401, 404)
        assert who.get(f"/uploads/{upload_id}").status_code in (401, 404)
    # no route serves the code: crawl every GET route with bob's session
    spec = httpx.get(url + "/openapi.json").json()
    probes = ["/", "/matches", "/bots/alicebot", "/api/bots/alicebot", f"/uploads/{upload_id}",
              "/account", "/api/leaderboard", "/api/matches", "/rules"]  # fmt: skip
    fill = {"{name}": "alicebot", "{upload_id}": str(upload_id), "{match_id}": "1"}
    for path, ops in spec["paths"].items():
        if "get" in ops:
            for key, value in fill.items():
                path = path.replace(key, value)
            probes.append(path)
    for path in probes:
        body = bob.get(path).text
        assert SECRET not in body, path
    assert SECRET not in bob.get("/static/../c.db.bots/alicebot").text


# ----- API tokens -------------------------------------------------------------------------
def test_a_script_uploads_with_an_api_token_until_it_is_revoked(site):
    url, app = site
    alice = sign_up(url, app, "alice")
    page = alice.post(
        "/account/tokens", data={"label": "laptop", "csrf": csrf_of(alice, "/account")}
    )
    token = re.search(r'id="new-token">([^<]+)<', page.text).group(1)
    script = httpx.Client(base_url=url, headers={"authorization": f"Bearer {token}"})
    assert script.get("/api/me").json()["name"] == "alice"
    r = script.post("/api/bots", data={"name": "scripted"}, files={"file": ("bot.py", BOT)})
    assert r.status_code == 202 and r.json()["new_code"] is True
    assert script.get(r.json()["status_url"]).json()["status"] == "checking"
    token_id = re.search(r"/account/tokens/(\d+)/revoke", alice.get("/account").text).group(1)
    assert (
        alice.post(
            f"/account/tokens/{token_id}/revoke", data={"csrf": csrf_of(alice, "/account")}
        ).status_code
        == 303
    )
    r = script.get("/api/me")
    assert r.status_code == 401 and "not valid" in r.json()["error"]
    for header in ("Basic abc", "Bearer", "Bearer b2a_nope"):
        r = httpx.get(url + "/api/me", headers={"authorization": header})
        assert r.status_code == 401 and r.json()["error"]


# ----- the organizer -----------------------------------------------------------------------
def test_only_the_organizer_organizes(site):
    url, app = site
    alice = sign_up(url, app, "alice")
    assert alice.get("/admin").status_code == 403
    token = csrf_of(alice, "/account")
    r = alice.post("/admin/join-code", data={"code": "mine1234", "csrf": token})
    assert r.status_code == 403 and "only the organizer" in r.text
    org = sign_in(url, "org", "organizer-pw")
    token = csrf_of(org, "/admin")
    assert (
        org.post("/admin/join-code", data={"code": "class-2026", "csrf": token}).status_code == 303
    )
    assert contest_settings(app.state.engine, "contest")["join_code"] == "class-2026"
    assert org.post("/admin/join-code", data={"code": "a b", "csrf": token}).status_code == 400
    assert org.post("/admin/rules", data={"preset": "pusoy", "csrf": token}).status_code == 303
    assert httpx.get(url + "/api/rules").json()["rules"]["scoring"] == "pusoy"
    r = org.post("/admin/rules", data={"rules_json": '{"players": 7}', "csrf": token})
    assert r.status_code == 400 and "players" in r.text
    r = org.post("/admin/rules", data={"rules_json": "[1", "csrf": token})
    assert r.status_code == 400 and "not JSON" in r.text
    r = org.post("/admin/bots/greedy/pause", data={"csrf": token})
    assert r.status_code == 303 and "paused" in org.get("/admin").text
    assert org.post("/admin/bots/ghost/pause", data={"csrf": token}).status_code == 404
    assert org.post("/admin/bots/greedy/explode", data={"csrf": token}).status_code == 404


def test_oversized_form_fields_are_refused(site):
    url, _ = site
    client = httpx.Client(base_url=url)
    token = csrf_of(client, "/login")
    r = client.post("/login", data={"name": "x" * 5000, "password": "y", "csrf": token})
    assert r.status_code == 422 and "name" in r.text
    r = client.post("/login", data={"name": "x", "password": "y" * 300_000, "csrf": token})
    assert r.status_code == 413


# ----- both stores ------------------------------------------------------------------------
def test_a_contest_runs_on_sqlite_and_postgresql_with_the_migrations_as_its_schema(
    db, tmp_path, live_server
):
    """The same migrations make the schema the models describe (nothing to autogenerate),
    and a participant's path works on either store."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from arena.ladder.store import Base

    app = create_app(WebConfig(db=db, data=tmp_path / "bots", sandbox="process"))
    with app.state.engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []
    url = live_server(app)
    alice = sign_up(url, app, "alice")
    assert upload(alice, "alicebot", "bot.py", BOT).status_code == 303
    assert alice.get("/api/uploads/1").json()["status"] == "checking"
    assert httpx.get(url + "/api/matches").json()["total"] == 0
    assert len(httpx.get(url + "/api/leaderboard").json()["rows"]) == 3


def test_a_failing_player_never_takes_the_server_down(tmp_path, live_server):
    """The player's cycle fails (here: the contest asks for a sandbox that does not exist);
    the pages keep answering, the upload waits, and the organizer is told why."""
    import time

    app = create_app(WebConfig(db=str(tmp_path / "c.db"), play=True, sandbox="process"))
    from arena.web.contest import update_settings

    update_settings(app.state.engine, "contest", sandbox="no-such-sandbox")
    create_user(app.state.engine, "org", "organizer", "organizer-pw")
    url = live_server(app)
    alice = sign_up(url, app, "alice")
    assert upload(alice, "alicebot", "bot.py", BOT).status_code == 303
    org = sign_in(url, "org", "organizer-pw")
    deadline = time.monotonic() + 30
    while "last cycle failed" not in (page := org.get("/admin").text):
        assert time.monotonic() < deadline, "the player's failure was never shown"
        time.sleep(0.3)
    assert "no-such-sandbox" in page
    assert httpx.get(url + "/api/leaderboard").status_code == 200
    assert alice.get("/api/uploads/1").json()["status"] == "checking"


def test_the_player_rests_once_every_bot_has_its_matches(tmp_path, live_server):
    """matches_per_bot 1: one round, then nothing, until the organizer raises it."""
    import time

    from arena.web.contest import update_settings

    app = create_app(WebConfig(db=str(tmp_path / "c.db"), play=True, sandbox="inproc"))
    update_settings(app.state.engine, "contest", deals=1, matches_per_bot=1)
    create_user(app.state.engine, "org", "organizer", "organizer-pw")
    url = live_server(app)

    def done() -> int:
        return httpx.get(url + "/api/matches").json()["total"]

    deadline = time.monotonic() + 60
    while done() < 1:
        assert time.monotonic() < deadline
        time.sleep(0.3)
    time.sleep(4)  # more than a cycle of the player: it rests
    assert done() == 1
    org = sign_in(url, "org", "organizer-pw")
    r = org.post("/admin/pace", data={"matches_per_bot": "2", "csrf": csrf_of(org, "/admin")})
    assert r.status_code == 303
    deadline = time.monotonic() + 60
    while done() < 2:
        assert time.monotonic() < deadline, "raising the pace played nothing"
        time.sleep(0.3)


def _statuses(app) -> dict[str, int]:
    from sqlalchemy import func, select

    from arena.ladder.store import Match

    with Session(app.state.engine) as s:
        return dict(s.execute(select(Match.status, func.count()).group_by(Match.status)).all())


def test_pausing_or_retiring_a_bot_withdraws_its_pending_matches_and_undo_restores(site):
    """The organizer's buttons are the ladder's own retire (and pause): a bot taken out
    plays none of its planned matches; brought back, they are pending again."""
    from arena.ladder.queries import plan_ladder

    url, app = site
    plan_ladder(app.state.engine, "contest", 1)  # the house bots' one group
    assert _statuses(app) == {"pending": 1}
    org = sign_in(url, "org", "organizer-pw")
    token = csrf_of(org, "/admin")
    for out, back in (("pause", "resume"), ("retire", "unretire")):
        assert org.post(f"/admin/bots/greedy/{out}", data={"csrf": token}).status_code == 303
        assert _statuses(app) == {"withdrawn": 1}, out
        assert org.post(f"/admin/bots/greedy/{back}", data={"csrf": token}).status_code == 303
        assert _statuses(app) == {"pending": 1}, back
    r = org.post("/admin/bots/greedy@v9/pause", data={"csrf": token})
    assert r.status_code == 404 and "no version 9" in r.text


def test_a_new_version_retires_the_old_one_and_its_pending_matches(site):
    from arena.ladder.queries import entrants, plan_ladder
    from arena.web.player import Player

    _, app = site
    player = Player(app.state.engine, app.state.config)
    first = player.enter("alicebot", "/nowhere/v1/bot.py", "a" * 64)
    plan_ladder(app.state.engine, "contest", 1)
    assert _statuses(app) == {"pending": 1}  # four bots: one group
    second = player.enter("alicebot", "/nowhere/v2/bot.py", "b" * 64)
    assert second != first
    assert _statuses(app) == {"withdrawn": 1}  # the old version sat in it

    with Session(app.state.engine) as s:
        state = {e.version.label: e.retired for e in entrants(s, 1, "alicebot")}
    assert state == {"alicebot": True, "alicebot@v2": False}
