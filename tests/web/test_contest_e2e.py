"""A contest as a participant meets it, in a real browser against a real server playing its
ladder (``--play``): sign up with the join code, upload a bot, see its smoke check pass, see
it on the leaderboard once matches are played (the page updates itself), open one of its
matches and step the replay with the keyboard, the cards drawn checked against the record.
Screenshots of the leaderboard and the replay go to docs/img when ARENA_WRITE_SCREENSHOTS=1.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_replay_viewer import _check, _expected, _keys, _no_alert_no_errors, _open, _screenshot

from arena.web.accounts import create_user
from arena.web.app import create_app
from arena.web.contest import WebConfig, contest_settings, update_settings

from testkit import wait_for

IMG = Path(__file__).resolve().parents[2] / "docs" / "img"
BOT = '''"""A student's first bot: the weakest play that beats the trick."""
from bigtwo import Bot


class Student(Bot):
    def act(self, observation):
        print("thinking <script>alert(1)</script><img src=x onerror=alert(2)>")
        return observation.legal_moves[0]
'''


@pytest.mark.browser
@pytest.mark.slow
def test_a_participant_signs_up_uploads_and_replays_a_match(browser, live_server, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    app = create_app(
        WebConfig(db=str(tmp_path / "contest.db"), play=True, sandbox="process", jobs=2)
    )
    engine = app.state.engine
    update_settings(engine, "contest", deals=1)  # short matches: the test waits for two
    create_user(engine, "teacher", "organizer", "teacher-password")
    code = contest_settings(engine, "contest")["join_code"]
    url = live_server(app)
    bot_file = tmp_path / "bot.py"
    bot_file.write_text(BOT)
    browser.set_window_size(1280, 720)

    # sign up with the join code: the upload page follows
    browser.get(f"{url}/signup")
    browser.find_element(By.ID, "join_code").send_keys(code)
    browser.find_element(By.ID, "name").send_keys("sam")
    browser.find_element(By.ID, "password").send_keys("sams-password")
    browser.find_element(By.ID, "submit").click()
    wait_for(lambda: browser.current_url.endswith("/upload"), 10, "the upload page")

    # upload; the status page turns to accepted by itself once the smoke check passed
    browser.find_element(By.ID, "name").send_keys("sambot")
    browser.find_element(By.ID, "file").send_keys(str(bot_file))
    browser.find_element(By.ID, "submit").click()
    wait_for(lambda: "/uploads/" in browser.current_url, 10, "the upload's page")

    def checked() -> Any:
        """The status once it is not "checking"; None meanwhile (a read while the page
        reloads itself, which it does when the check ends, is "not yet" to wait_for)."""
        for s in browser.find_elements(By.ID, "status"):
            if s.get_attribute("data-status") != "checking":
                return s
        return None

    status = wait_for(checked, 120, "the smoke check")
    assert status.get_attribute("data-status") == "accepted", browser.page_source[-2000:]
    log = browser.find_element(By.ID, "log").text
    # the author's own output, shown as text: nothing in it runs
    assert "thinking <script>alert(1)</script><img src=x onerror=alert(2)>" in log
    assert browser.find_elements(By.CSS_SELECTOR, "#log *") == []
    _no_alert_no_errors(browser)

    # the leaderboard, left open: it shows the bot rated once matches finish, no reload
    row = "#leaderboard tr[data-bot='sambot']"

    def listed() -> Any:
        """The new entry's row, once the worker's refit (its own process, after the entry)
        is stored: until then the page shows the last standings."""
        browser.get(f"{url}/")
        return browser.find_elements(By.CSS_SELECTOR, row)

    wait_for(listed, 60, "sambot listed on the leaderboard")
    browser.execute_script("document.body.dataset.untouched = 'yes'")
    wait_for(
        lambda: httpx.get(f"{url}/api/leaderboard").json()["matches_done"] >= 2,
        240,
        "two matches played",
    )
    rated = wait_for(
        lambda: [
            cell.text
            for cell in browser.find_elements(By.CSS_SELECTOR, f"{row} td.num")[:2]
            if cell.text not in ("", "–")
        ],
        30,
        "the page showing sambot rated",
    )
    assert rated and browser.execute_script("return document.body.dataset.untouched") == "yes"
    board = httpx.get(f"{url}/api/leaderboard").json()
    mine = next(r for r in board["rows"] if r["bot"] == "sambot")
    assert mine["owner"] == "sam" and mine["rated"]
    assert browser.find_element(By.CSS_SELECTOR, f"{row} td.num").text == str(mine["rank"])
    if os.environ.get("ARENA_WRITE_SCREENSHOTS") == "1":
        _screenshot(browser, IMG / "leaderboard.png")

    # its bot page lists the match; the replay steps with the keyboard, as the record says
    browser.get(f"{url}/bots/sambot")
    link = browser.find_element(By.CSS_SELECTOR, "#recent a")
    match_id = int(link.text)
    link.click()
    record = httpx.get(f"{url}/api/matches/{match_id}/record").text
    events = [json.loads(line) for line in record.splitlines()]
    _open(browser, f"{url}/matches/{match_id}")
    browser.get_log("browser")
    _check(browser, events, 0, 0)
    _keys(browser, *[Keys.ARROW_RIGHT] * 7)
    _check(browser, events, 0, 7)
    _keys(browser, Keys.ARROW_LEFT, Keys.ARROW_LEFT)
    _check(browser, events, 0, 5)
    last = _expected(events, 0, 0)["turns"]
    _keys(browser, Keys.END)
    _check(browser, events, 0, last)
    if os.environ.get("ARENA_WRITE_SCREENSHOTS") == "1":
        _keys(browser, Keys.HOME, *[Keys.ARROW_RIGHT] * 6)
        _screenshot(browser, IMG / "contest-replay.png")
    _no_alert_no_errors(browser)
