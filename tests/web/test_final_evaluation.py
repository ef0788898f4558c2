"""The final evaluation from the organizer's page of a served contest (real uvicorn on
loopback, the worker as its child process): only the organizer may ask for it, with the
page's form token; the contest's player plays it (fresh deals on the top), marks the
standings final — the leaderboard page and its JSON twin say so — and plays no regular
round until the organizer reopens the contest."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from test_api import csrf_of, sign_in, sign_up

from arena.ladder.store import Match
from arena.web.accounts import create_user
from arena.web.app import create_app
from arena.web.contest import WebConfig, contest_settings, update_settings

from testkit import wait_for


def matches(app, final: bool) -> dict[str, int]:
    """Match statuses, of the final phase's matches or of the regular ones."""
    prefix = Match.key.startswith("final-")
    with Session(app.state.engine) as s:
        rows = s.execute(
            select(Match.status, func.count())
            .where(prefix if final else ~prefix)
            .group_by(Match.status)
        ).all()
    return dict(rows)  # type: ignore[arg-type]


@pytest.mark.slow
def test_the_organizer_runs_the_final_evaluation_and_reopens(tmp_path: Path, live_server):
    app = create_app(WebConfig(db=str(tmp_path / "c.db"), play=True, sandbox="inproc"))
    update_settings(app.state.engine, "contest", deals=1, matches_per_bot=1)  # then it rests
    create_user(app.state.engine, "org", "organizer", "organizer-pw")
    url = live_server(app)
    wait_for(lambda: matches(app, False).get("done", 0) >= 1, 120, "the house bots' round")

    # only the organizer, only with the page's form token, only sensible numbers
    alice = sign_up(url, app, "alice")
    r = alice.post("/admin/final", data={"top": "2", "budget": "4", "csrf": csrf_of(alice, "/")})
    assert r.status_code == 403 and "only the organizer" in r.text
    stranger = httpx.Client(base_url=url)
    token = csrf_of(stranger, "/login")
    assert stranger.post("/admin/final", data={"top": 2, "budget": 4, "csrf": token}).is_error
    org = sign_in(url, "org", "organizer-pw")
    assert org.post("/admin/final", data={"top": 2, "budget": 4, "csrf": "x"}).status_code == 403
    token = csrf_of(org, "/admin")
    for top, budget in (("0", "4"), ("2", "0"), ("2", "lots"), ("101", "4")):
        r = org.post("/admin/final", data={"top": top, "budget": budget, "csrf": token})
        assert r.status_code == 422 and "Traceback" not in r.text, (top, budget)
    assert "final_phase" not in contest_settings(app.state.engine, "contest")
    assert httpx.get(f"{url}/api/leaderboard", timeout=30).json()["final"] is None

    regular = matches(app, False)
    page = org.get("/admin").text
    assert 'id="final-form"' in page and "Run the final evaluation" in page
    r = org.post("/admin/final", data={"top": "2", "budget": "4", "csrf": token})
    assert r.status_code == 303 and r.headers["location"] == "/admin?saved=final"
    board = wait_for(
        lambda: (b := httpx.get(f"{url}/api/leaderboard", timeout=10).json())["final"] and b,
        180,
        "the standings marked final",
    )
    marker = board["final"]
    assert marker["k"] == 2 and marker["budget"] == 4 and board["final_phase"] is None
    assert marker["stopped"] in ("separated", "budget") and len(marker["top"]) == 2
    played = matches(app, True)
    assert set(played) == {"done"} and played["done"] == marker["matches"] <= 4
    assert marker["matches"] > 0  # one regular match of one deal separates nothing
    assert matches(app, False) == regular  # no regular match meanwhile
    assert contest_settings(app.state.engine, "contest")["final"] == marker
    assert "Final standings since" in httpx.get(url, timeout=30).text
    assert "(final)" in httpx.get(url, timeout=30).text
    page = org.get("/admin").text
    assert 'id="final-state"' in page and "final" in page and 'id="final-reopen"' in page
    r = org.post("/admin/final", data={"top": "3", "budget": "4", "csrf": token})
    assert r.status_code == 400 and "final already" in r.text

    # final: raising the pace plays no regular round; reopened, the player goes on
    org.post("/admin/pace", data={"matches_per_bot": "50", "csrf": token})
    time.sleep(5)  # more than a cycle of the player
    assert matches(app, False) == regular
    r = org.post("/admin/final/reopen", data={"csrf": token})
    assert r.status_code == 303
    assert httpx.get(f"{url}/api/leaderboard", timeout=30).json()["final"] is None
    wait_for(
        lambda: matches(app, False).get("done", 0) > regular.get("done", 0),
        120,
        "a regular round after reopening",
    )
    assert contest_settings(app.state.engine, "contest")["final_history"] == [marker]


@pytest.mark.browser
@pytest.mark.slow
def test_the_final_evaluation_button_in_a_browser(browser, live_server, tmp_path: Path):
    """The organizer signs in, asks for the final evaluation with the form; the leaderboard
    left open turns "final" by itself (its script refreshes when the final state moves,
    not only when a match finishes)."""
    from selenium.webdriver.common.by import By

    app = create_app(WebConfig(db=str(tmp_path / "c.db"), play=True, sandbox="inproc"))
    update_settings(app.state.engine, "contest", deals=1, matches_per_bot=1)
    create_user(app.state.engine, "org", "organizer", "organizer-pw")
    url = live_server(app)
    wait_for(lambda: matches(app, False).get("done", 0) >= 1, 120, "the house bots' round")
    browser.delete_all_cookies()
    browser.get(f"{url}/login")
    browser.find_element(By.ID, "name").send_keys("org")
    browser.find_element(By.ID, "password").send_keys("organizer-pw")
    browser.find_element(By.ID, "submit").click()
    wait_for(lambda: "/login" not in browser.current_url, 10, "signed in")
    browser.get(f"{url}/admin")
    top = browser.find_element(By.CSS_SELECTOR, "#final-form input[name=top]")
    top.clear()
    top.send_keys("1")
    budget = browser.find_element(By.CSS_SELECTOR, "#final-form input[name=budget]")
    budget.clear()
    budget.send_keys("3")
    browser.find_element(By.ID, "final-start").click()
    wait_for(lambda: "saved=final" in browser.current_url, 10, "the request saved")
    browser.get(url)
    done = wait_for(
        lambda: (
            (e := browser.find_elements(By.ID, "final")) and "Final standings" in e[0].text and e
        ),
        180,
        "the open leaderboard showing the final standings",
    )
    assert "the top 1" in done[0].text
    browser.get(f"{url}/admin")
    assert browser.find_element(By.ID, "final-state").text.startswith("The standings are final")
    browser.delete_all_cookies()
