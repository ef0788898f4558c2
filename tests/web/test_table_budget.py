"""The Play tables as a budget (issue 21), over a real socket on loopback: each account holds
at most two live tables, each address at most its cap, every table's bot seats count their
memory limit against a server-wide budget, an idle table is reclaimed, and when the server
is full a newcomer's table takes the place of the longest-idle table of an account holding
more than its share — ten accounts cannot keep an eleventh from playing.

Each account connects from its own loopback address (127.0.0.x) as separate people do."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_account_limits import sign_up_from
from test_api import csrf_of
from test_tables import Page, cookie_of

from arena.web.app import create_app
from arena.web.contest import WebConfig

LIVE = ("starting", "playing")


def contest(tmp_path: Path, **extra: Any) -> Any:
    """A served contest, bots in-process, a person's move time long enough to never run
    out during a test."""
    config = WebConfig(
        db=str(tmp_path / "c.db"), sandbox="inproc", extra={"human_move_ms": 600_000} | extra
    )
    return create_app(config)


def open_table(client: httpx.Client, players: int = 2) -> httpx.Response:
    data = {
        "rules": "hk",
        "players": str(players),
        "seat": "0",
        "hands": "1",
        "opponent": ["greedy", "random", "random"][: players - 1],
    }
    return client.post("/play", data=data | {"csrf": csrf_of(client, "/play")})


def live_tables(app: Any) -> list[Any]:
    return [t for t in app.state.tables.live.values() if t.status in LIVE]


def test_ten_accounts_cannot_keep_an_eleventh_from_playing(tmp_path, live_server):
    app = contest(tmp_path, play_memory_mb=1_000_000)
    url = live_server(app)
    hogs = [sign_up_from(url, app, f"hog{i}", f"127.0.0.{10 + i}") for i in range(10)]
    for hog in hogs:
        assert [open_table(hog).status_code for _ in range(2)] == [303, 303]
        if hog is hogs[0]:
            r = open_table(hog)  # a third is beyond the account's two
            assert r.status_code == 400 and "you already play 2 games" in r.text
    assert len(live_tables(app)) == 20  # the server's table cap is reached
    newcomer = sign_up_from(url, app, "newcomer", "127.0.0.30")
    r = open_table(newcomer)
    assert r.status_code == 303, r.text
    page = Page(url, r.headers["location"], additional_headers={"Cookie": cookie_of(newcomer)})
    assert page.recv()["type"] == "hello"
    page.close()
    tables = live_tables(app)
    assert len(tables) == 20
    held = {i: sum(t.owner == _id(app, f"hog{i}") for t in tables) for i in range(10)}
    # the longest-idle table (nobody moved: the oldest, hog0's first) made room; every hog
    # keeps at least one table
    assert held == {0: 1} | {i: 2 for i in range(1, 10)}
    # hog0 now holds its share: it cannot take a table back while the server is full
    r = open_table(hogs[0])
    assert r.status_code == 400 and "busy" in r.text


def _id(app: Any, name: str) -> int:
    from arena.web.accounts import account_by_name

    account = account_by_name(app.state.engine, name)
    assert account is not None
    return account.id


def test_a_reclaimed_table_tells_its_page_why(tmp_path, live_server):
    app = contest(tmp_path, play_memory_mb=1_000_000, play_max_live=2)
    url = live_server(app)
    hog = sign_up_from(url, app, "hog", "127.0.0.10")
    paths = [open_table(hog).headers["location"] for _ in range(2)]
    page = Page(url, paths[0], additional_headers={"Cookie": cookie_of(hog)})
    page.recv()
    time.sleep(0.2)  # the first table is now the longer idle
    newcomer = sign_up_from(url, app, "newcomer", "127.0.0.11")
    assert open_table(newcomer).status_code == 303
    msg = page.until("error", timeout=10)
    assert msg["type"] == "error" and "make room" in msg["why"], msg
    page.close()
    assert hog.get(paths[1]).status_code == 200  # its other table plays on


def test_one_address_holds_at_most_its_cap_of_tables(tmp_path, live_server):
    app = contest(tmp_path, play_memory_mb=1_000_000, play_per_address=3)
    url = live_server(app)
    a = sign_up_from(url, app, "a1", "127.0.0.40")
    b = sign_up_from(url, app, "b1", "127.0.0.40")
    assert [open_table(a).status_code for _ in range(2)] == [303, 303]
    assert open_table(b).status_code == 303
    r = open_table(b)
    assert r.status_code == 400 and "address" in r.text
    c = sign_up_from(url, app, "c1", "127.0.0.41")
    assert open_table(c).status_code == 303


def test_the_memory_budget_refuses_a_table_beyond_it(tmp_path, live_server):
    # each bot seat counts 300 MiB; the budget holds one 4-player table (3 bots) only
    app = contest(tmp_path, play_memory_mb=1000, play_seat_mb=300)
    url = live_server(app)
    alice = sign_up_from(url, app, "alice", "127.0.0.50")
    bob = sign_up_from(url, app, "bob", "127.0.0.51")
    assert open_table(alice, players=4).status_code == 303
    for client, players in ((bob, 4), (bob, 2), (alice, 2)):
        r = open_table(client, players=players)
        assert r.status_code == 400 and "memory" in r.text, (players, r.text[-300:])
    assert len(live_tables(app)) == 1
    assert app.state.tables.limits.seat_mb == 300


def test_an_idle_table_is_reclaimed(tmp_path, live_server):
    app = contest(tmp_path, play_memory_mb=1_000_000, play_idle_s=1)
    url = live_server(app)
    alice = sign_up_from(url, app, "alice", "127.0.0.60")
    path = open_table(alice).headers["location"]
    page = Page(url, path, additional_headers={"Cookie": cookie_of(alice)})
    page.recv()
    time.sleep(1.5)  # alice makes no move
    bob = sign_up_from(url, app, "bob", "127.0.0.61")
    assert open_table(bob).status_code == 303
    msg = page.until("error", timeout=10)
    assert "idle" in msg["why"], msg
    page.close()
    assert [t.owner for t in live_tables(app)] == [_id(app, "bob")]


def test_the_default_budget_is_a_share_of_the_machines_memory(monkeypatch):
    from arena.web.table_budget import PlayLimits, machine_memory_mb

    total = machine_memory_mb()
    assert total > 100
    limits = PlayLimits.from_settings({}, sandbox="process")
    assert limits.budget_mb == pytest.approx(total * 0.5, abs=1)
    assert limits.seat_mb == 1024  # the process sandbox's own memory limit per bot
    monkeypatch.setenv("ARENA_PLAY_MEMORY", "25%")
    assert PlayLimits.from_settings({}, sandbox="docker").budget_mb == pytest.approx(
        total * 0.25, abs=1
    )
    monkeypatch.setenv("ARENA_PLAY_MEMORY", "4096")
    assert PlayLimits.from_settings({}, sandbox="docker").budget_mb == 4096
    assert PlayLimits.from_settings({}, sandbox="docker").seat_mb == 256
    monkeypatch.setenv("ARENA_PLAY_MEMORY", "lots")  # a mistyped setting: the default, said
    assert PlayLimits.from_settings({}, sandbox="docker").budget_mb == pytest.approx(
        total * 0.5, abs=1
    )


# ----- the decision alone --------------------------------------------------------------------
def _limits(**changes: Any) -> Any:
    from arena.web.table_budget import PlayLimits

    return PlayLimits(**({"budget_mb": 1000, "seat_mb": 100, "max_live": 4} | changes))


def _held(table_id: str, owner: int, idle_s: float, cost_mb: int = 100, address: str = "a") -> Any:
    from arena.web.table_budget import Held

    return Held(table_id, owner, address, cost_mb, idle_s)


def test_a_full_server_never_takes_anyones_last_table():
    from arena.web.table_budget import decide

    held = [_held(f"t{i}", i, idle_s=100 - i) for i in range(4)]  # four people, one each
    verdict = decide(_limits(), held, owner=9, address="b", cost_mb=100)
    assert verdict.reclaim == () and "busy" in (verdict.refusal or "")


def test_room_comes_from_the_longest_idle_table_over_its_share():
    from arena.web.table_budget import decide

    held = [_held("a1", 1, 5), _held("a2", 1, 50), _held("b1", 2, 500), _held("b2", 2, 40)]
    verdict = decide(_limits(), held, owner=3, address="c", cost_mb=100)
    assert verdict.refusal is None
    assert [t for t, _ in verdict.reclaim] == ["b1"]  # the longest idle of an over-share owner


def test_idle_tables_go_even_when_the_request_is_refused():
    from arena.web.table_budget import decide

    held = [_held("a1", 1, 5), _held("a2", 1, 9999)]
    verdict = decide(_limits(idle_s=600, per_account=1), held, owner=1, address="a", cost_mb=100)
    assert [t for t, _ in verdict.reclaim] == ["a2"] and verdict.refusal is not None


def test_a_table_bigger_than_the_share_is_refused_rather_than_evicting():
    from arena.web.table_budget import decide

    held = [_held("a1", 1, 90, cost_mb=300), _held("a2", 1, 80, cost_mb=300)]
    verdict = decide(_limits(), held, owner=2, address="b", cost_mb=600)  # share: 500 MiB
    assert verdict.reclaim == () and "memory" in (verdict.refusal or "")
