"""Accounts against hostile visitors (issue 21), over a real socket on loopback.

Each client binds its own loopback source address (127.0.0.2, .3, …), so the server sees
several people: a stranger's wrong passwords from one address never lock the owner out at
another (limits per name *and* address, plus one per address across names); wrong current
passwords on ``/account/password`` are limited the same way; a one-time password allows
only choosing a new one (every page, API call, upload, token, Play table and WebSocket
refused meanwhile, by one check in ``security.visitor``); a password change (or the
organizer's reset) revokes the account's API tokens and ends its other sessions."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session
from test_api import BOT, csrf_of, sign_in
from test_tables import Page, cookie_of
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from arena.web.accounts import account_by_name, create_user, list_tokens
from arena.web.app import create_app
from arena.web.contest import WebConfig, contest_settings
from arena.web.models import Upload, User


def client_from(url: str, address: str, **kwargs) -> httpx.Client:
    """A client whose connections come from ``address`` (any 127.x.y.z is this machine)."""
    return httpx.Client(
        base_url=url, transport=httpx.HTTPTransport(local_address=address), **kwargs
    )


def sign_up_from(url: str, app, name: str, address: str, password: str = "participant-pw"):
    client = client_from(url, address)
    code = contest_settings(app.state.engine, "contest")["join_code"]
    data = {"name": name, "password": password, "join_code": code}
    r = client.post("/signup", data=data | {"csrf": csrf_of(client, "/signup")})
    assert r.status_code == 303, r.text
    return client


def login(client: httpx.Client, name: str, password: str) -> httpx.Response:
    token = csrf_of(client, "/login")
    return client.post("/login", data={"name": name, "password": password, "csrf": token})


def open_table(client: httpx.Client) -> str:
    play = {"rules": "hk", "players": "2", "seat": "0", "hands": "1", "opponent": ["greedy"]}
    r = client.post("/play", data=play | {"csrf": csrf_of(client, "/play")})
    assert r.status_code == 303, r.text
    return r.headers["location"]


def new_token(client: httpx.Client, label: str = "laptop") -> str:
    page = client.post(
        "/account/tokens", data={"label": label, "csrf": csrf_of(client, "/account")}
    )
    return re.search(r'id="new-token">([^<]+)<', page.text).group(1)


def bearer(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"authorization": f"Bearer {token}"})


@pytest.fixture
def site(tmp_path: Path, live_server):
    """A contest (no player; bots in-process so a Play table starts fast), an organizer."""
    app = create_app(
        WebConfig(db=str(tmp_path / "c.db"), sandbox="inproc", extra={"human_move_ms": 600_000})
    )
    create_user(app.state.engine, "org", "organizer", "organizer-pw")
    return live_server(app), app


# ----- sign-in limits per (name, address) -----------------------------------------------------
def test_a_strangers_wrong_passwords_do_not_lock_the_owner_out(site):
    url, _ = site
    stranger = client_from(url, "127.0.0.3")
    codes = [login(stranger, "org", f"guess-{i}").status_code for i in range(12)]
    assert codes[:10] == [401] * 10 and codes[10:] == [429, 429]
    # a forged X-Forwarded-For does not make the stranger someone else
    token = csrf_of(stranger, "/login")
    r = stranger.post(
        "/login",
        data={"name": "org", "password": "guess-x", "csrf": token},
        headers={"x-forwarded-for": "10.1.2.3"},
    )
    assert r.status_code == 429
    # the owner, at another address, signs in at once
    owner = client_from(url, "127.0.0.2")
    r = login(owner, "org", "organizer-pw")
    assert r.status_code == 303 and r.headers["location"] == "/"


def test_one_address_cannot_spray_many_names(tmp_path, live_server):
    app = create_app(WebConfig(db=str(tmp_path / "c.db"), sandbox="inproc", login_limits=(10, 15)))
    create_user(app.state.engine, "org", "organizer", "organizer-pw")
    url = live_server(app)
    sprayer = client_from(url, "127.0.0.4")
    codes = [login(sprayer, f"user{i}", "password-1").status_code for i in range(16)]
    assert codes[:15] == [401] * 15 and codes[15] == 429
    assert login(client_from(url, "127.0.0.5"), "org", "organizer-pw").status_code == 303


def test_an_address_key_is_the_ipv4_address_or_the_ipv6_slash_64():
    from arena.web.security import address_key

    assert address_key("127.0.0.3") == "127.0.0.3"
    assert address_key("::ffff:10.1.2.3") == "10.1.2.3"  # IPv4 as IPv6 is still IPv4
    same = {address_key("2001:db8:1:2::1"), address_key("2001:db8:1:2:ffff:ffff:ffff:9")}
    assert len(same) == 1  # one customer's /64 is one address
    assert address_key("2001:db8:1:3::1") not in same
    assert address_key("not an address") == "not an address"


# ----- password changes ------------------------------------------------------------------------
def test_wrong_current_passwords_are_rate_limited(site):
    url, _ = site
    thief = sign_in(url, "org", "organizer-pw")  # a session someone else got hold of
    token = csrf_of(thief, "/account")
    codes = [
        thief.post(
            "/account/password",
            data={"current": f"guess-{i}", "new": "taken-over-pw", "csrf": token},
        ).status_code
        for i in range(12)
    ]
    assert codes[:10] == [403] * 10 and codes[10:] == [429, 429]
    r = thief.post(
        "/account/password",
        data={"current": "organizer-pw", "new": "taken-over-pw", "csrf": token},
    )
    assert r.status_code == 429 and "wait" in r.text
    # the owner elsewhere is not locked out by it
    assert login(client_from(url, "127.0.0.2"), "org", "organizer-pw").status_code == 303


# ----- tokens and sessions end with a password change ----------------------------------------
def test_api_tokens_stop_working_after_a_password_change(site):
    url, app = site
    alice = sign_up_from(url, app, "alice", "127.0.0.2")
    other = client_from(url, "127.0.0.3")
    assert login(other, "alice", "participant-pw").status_code == 303
    script = bearer(url, new_token(alice))
    assert script.get("/api/me").status_code == 200
    stolen = Page(url, open_table(other), additional_headers={"Cookie": cookie_of(other)})
    assert stolen.ask({"type": "check", "cards": ["3D"], "id": 1})["type"] == "check"
    r = alice.post(
        "/account/password",
        data={
            "current": "participant-pw",
            "new": "a-new-password",
            "csrf": csrf_of(alice, "/account"),
        },
    )
    assert r.status_code == 303
    r = script.get("/api/me")
    assert r.status_code == 401 and "not valid" in r.json()["error"]
    assert (
        script.post("/api/bots", data={"name": "late"}, files={"file": ("bot.py", BOT)}).status_code
        == 401
    )
    assert other.get("/account").status_code == 401  # the other session ended
    assert alice.get("/account").status_code == 200  # this one stays
    # the ended session's open table socket acts no more
    with pytest.raises(ConnectionClosed):
        for _ in range(3):
            stolen.ask({"type": "check", "cards": ["3D"], "id": 1})
    assert list_tokens(app.state.engine, account_by_name(app.state.engine, "alice").id) == []


def test_the_organizers_reset_gives_a_one_time_password_and_ends_everything(site):
    url, app = site
    alice = sign_up_from(url, app, "alice", "127.0.0.2")
    script = bearer(url, new_token(alice))
    table = open_table(alice)
    seat = Page(url, table, additional_headers={"Cookie": cookie_of(alice)})
    assert seat.recv()["type"] == "hello"
    org = sign_in(url, "org", "organizer-pw")
    page = org.post("/admin/users/reset", data={"name": "alice", "csrf": csrf_of(org, "/admin")})
    assert page.status_code == 200, page.text
    password = re.search(r'id="one-time-password">([^<]+)<', page.text).group(1)
    assert "password was reset" in seat.until("error", timeout=10)["why"]  # no seat kept
    seat.close()
    assert alice.get("/account").status_code == 401
    assert script.get("/api/me").status_code == 401
    assert login(client_from(url, "127.0.0.2"), "alice", "participant-pw").status_code == 401
    fresh = client_from(url, "127.0.0.2")
    r = login(fresh, "alice", password)
    assert r.status_code == 303 and r.headers["location"] == "/account"
    assert fresh.get("/", follow_redirects=False).headers.get("location") == "/account"
    # only the organizer resets, and only an existing participant
    r = alice.post("/admin/users/reset", data={"name": "org", "csrf": "x"})
    assert r.status_code in (401, 403)
    for name in ("nobody", "org"):  # the organizer's own password is not reset here
        r = org.post("/admin/users/reset", data={"name": name, "csrf": csrf_of(org, "/admin")})
        assert r.status_code == 400 and "no participant named" in r.text


# ----- one-time passwords ------------------------------------------------------------------------
def _refused_to_set_a_password(r: httpx.Response) -> bool:
    """A page sends the visitor to the account page; the API answers 403 with the reason."""
    if r.request.url.path.startswith("/api"):
        return r.status_code == 403 and "new password" in r.json()["error"]
    return r.status_code == 303 and r.headers["location"] == "/account"


def test_a_one_time_password_allows_only_setting_a_new_one(site):
    url, app = site
    engine = app.state.engine
    # alice made an API token and opened a table; then her password became one-time
    alice = sign_up_from(url, app, "alice", "127.0.0.2")
    token = new_token(alice)
    play = {"rules": "hk", "players": "2", "seat": "0", "hands": "1", "opponent": ["greedy"]}
    r = alice.post("/play", data=play | {"csrf": csrf_of(alice, "/play")})
    assert r.status_code == 303, r.text
    table_path = r.headers["location"]
    with Session(engine) as s, s.begin():
        s.execute(update(User).where(User.name == "alice").values(must_change_password=True))
    csrf = csrf_of(alice, "/account")
    assert 'id="must-change"' in alice.get("/account").text
    for path in ("/", "/play", "/upload", "/matches", table_path, "/api/me", "/api/leaderboard"):
        r = alice.get(path, follow_redirects=False)
        assert _refused_to_set_a_password(r), (path, r.status_code, r.text[:200])
    forms = [
        ("/account/tokens", {"label": "another"}, None),
        ("/upload", {"name": "sneaky"}, {"file": ("bot.py", BOT)}),
        ("/play", play, None),
    ]
    for path, data, files in forms:
        r = alice.post(path, data=data | {"csrf": csrf}, files=files, follow_redirects=False)
        assert _refused_to_set_a_password(r), (path, r.status_code, r.text[:200])
    script = bearer(url, token)
    r = script.get("/api/me")
    assert _refused_to_set_a_password(r), r.text
    r = script.post("/api/bots", data={"name": "scripted"}, files={"file": ("bot.py", BOT)})
    assert _refused_to_set_a_password(r), r.text
    cookie = "; ".join(f"{k}={v}" for k, v in alice.cookies.items())
    with pytest.raises((ConnectionClosed, InvalidStatus)):
        ws = connect(
            url.replace("http://", "ws://") + table_path + "/ws",
            origin=url,
            additional_headers={"Cookie": cookie},
        )
        ws.recv(timeout=5)
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(Upload)) == 0
    alice_id = account_by_name(engine, "alice").id
    assert len(list_tokens(engine, alice_id)) == 1
    assert sum(t.owner == alice_id for t in app.state.tables.live.values()) == 1

    # the organizer's one-time password for a new student: signed in, sent to choose one
    org = sign_in(url, "org", "organizer-pw")
    page = org.post("/admin/users", data={"name": "student1", "csrf": csrf_of(org, "/admin")})
    once = re.search(r'id="one-time-password">([^<]+)<', page.text).group(1)
    student = client_from(url, "127.0.0.4")
    r = login(student, "student1", once)
    assert r.status_code == 303 and r.headers["location"] == "/account"
    assert _refused_to_set_a_password(student.get("/upload", follow_redirects=False))
    r = student.post(
        "/account/password",
        data={"current": once, "new": "students-own-pw", "csrf": csrf_of(student, "/account")},
    )
    assert r.status_code == 303
    assert student.get("/upload").status_code == 200
    assert login(client_from(url, "127.0.0.4"), "student1", once).status_code == 401
    assert login(client_from(url, "127.0.0.4"), "student1", "students-own-pw").status_code == 303

    # alice sets hers: her old token was revoked with the change, everything else opens
    r = alice.post(
        "/account/password",
        data={"current": "participant-pw", "new": "alices-new-pw", "csrf": csrf},
    )
    assert r.status_code == 303
    assert alice.get("/").status_code == 200
    assert script.get("/api/me").status_code == 401
    assert alice.get("/api/me").json()["name"] == "alice"
    # signing out is allowed while a new password is due
    with Session(engine) as s, s.begin():
        s.execute(update(User).where(User.name == "alice").values(must_change_password=True))
    r = alice.post("/logout", data={"csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303 and alice.get("/account").status_code == 401
