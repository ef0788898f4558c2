"""The web leaderboard explains itself: under a bot ranked above the next with fewer points
a hand, a line says why, with the numbers from the deals (``arena.ladder.explain``); the
JSON twin carries the same note; where Elo and points agree there is no line.  Over a real
socket, and in a real browser (a screenshot is kept in the test's folder, and in docs/img
with ARENA_WRITE_SCREENSHOTS=1).  The ladders are scripted hand by hand
(``ladderkit``), so every number is known."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena.web.app import create_app
from arena.web.contest import WebConfig

from ladderkit import (
    AGREEING,
    HOSTILE,
    LADDER,
    agreeing_ladder,
    margins_ladder,
)

IMG = Path(__file__).resolve().parents[2] / "docs" / "img"
EXPECTED = (
    "{a} finished ahead of {b} in 75% of the 192 hand and card-set orders of the 24 deals they "
    "shared, but {b} won by more when ahead: +40.0 vs +1.0 points a hand"
)


def get(url: str) -> httpx.Response:
    """A page; the first view fits the small ladder in the server's process (seconds on a
    busy machine)."""
    return httpx.get(url, timeout=120)


def served(db: str, live_server: Any) -> str:
    return live_server(create_app(WebConfig(db=db, ladder=LADDER, sandbox="process")))


def test_the_page_and_its_api_say_why_the_ranks_and_points_disagree(tmp_path, live_server):
    url = served(margins_ladder(tmp_path), live_server)
    board = get(url + "/api/leaderboard").json()
    rows = board["rows"]
    assert [r["bot"] for r in rows] == ["winner", "steady", "bigwin", "loser"]
    assert [r["order_note"] is not None for r in rows] == [False, True, False, False]
    note = rows[1]["order_note"]
    assert note["reason"] == "margins" and note["rank"] == 2
    assert (note["pair"]["upper_ahead"], note["pair"]["orders"]) == (144, 192)
    assert note["text"].startswith(EXPECTED.format(a="steady", b="bigwin"))
    page = get(url + "/").text
    assert page.count('<tr class="order-note"') == 1
    line = page.split('<tr class="order-note"', 1)[1].split("</tr>", 1)[0]
    assert "Why #2 is above #3 with fewer points a hand:" in line
    assert EXPECTED.format(a="<bdi>steady</bdi>", b="<bdi>bigwin</bdi>") in line
    # under the upper row of the pair, above the lower one
    at = page.index
    assert at('data-bot="steady"') < at("order-note") < at('data-bot="bigwin"')
    fragment = get(url + "/fragments/leaderboard").text  # what the page swaps in live
    assert fragment.count('<tr class="order-note"') == 1


def test_no_line_where_elo_and_points_agree(tmp_path, live_server):
    db = agreeing_ladder(tmp_path)
    seats = AGREEING
    url = served(db, live_server)
    rows = get(url + "/api/leaderboard").json()["rows"]
    assert [r["bot"] for r in rows] == seats
    assert all(r["order_note"] is None for r in rows)
    assert "order-note" not in get(url + "/").text.split("<tbody>", 1)[1]


def test_hostile_names_in_the_line_are_text_in_the_html(tmp_path, live_server):
    url = served(margins_ladder(tmp_path, HOSTILE), live_server)
    note = get(url + "/api/leaderboard").json()["rows"][1]["order_note"]
    assert note["upper"] == HOSTILE["steady"]  # the JSON has the name as written
    page = get(url + "/").text
    line = page.split('<tr class="order-note"', 1)[1].split("</tr>", 1)[0]
    assert "<b>" not in line and "<script>" not in line
    assert "&lt;b&gt;st&lt;/b&gt;" in line and "&lt;script&gt;alert(1)&lt;/script&gt;" in line
    # each name isolated (<bdi>): its right-to-left override stops at the name's end
    assert "<bdi>big\u202ewin&lt;script&gt;alert(1)&lt;/script&gt;</bdi> in 75% of" in line


@pytest.mark.browser
def test_the_line_shows_in_a_browser_as_text(tmp_path, live_server, browser):
    from selenium.webdriver.common.by import By
    from test_replay_viewer import _no_alert_no_errors, _screenshot

    url = served(margins_ladder(tmp_path, {"bigwin": HOSTILE["bigwin"]}), live_server)
    browser.set_window_size(1280, 720)
    browser.get(url + "/")
    notes = browser.find_elements(By.CSS_SELECTOR, "#leaderboard tr.order-note")
    assert len(notes) == 1
    shown = notes[0].text
    assert "Why #2 is above #3 with fewer points a hand:" in shown
    assert EXPECTED.format(a="steady", b=HOSTILE["bigwin"]) in shown  # the name as text
    assert notes[0].find_elements(By.CSS_SELECTOR, "script, b") == []
    # drawn left to right after the name with the right-to-left override: the letters of
    # "orders" (after the name) go rightwards (without <bdi> the override turned the rest
    # of the line round)
    lefts = browser.execute_script(
        """
        const cell = arguments[0].querySelector("td:nth-child(2)");
        const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walk.nextNode(); node; node = walk.nextNode()) {
          const at = node.data.indexOf("orders");
          if (at < 0) continue;
          return [at, at + 5].map((i) => {
            const range = document.createRange();
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            return range.getBoundingClientRect().left;
          });
        }
        return null;
        """,
        notes[0],
    )
    assert lefts is not None and lefts[0] < lefts[1], lefts
    rows = browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")
    assert [r.get_attribute("class") for r in rows] == ["", "", "order-note", "", ""]
    # the line wraps inside the table, it does not stretch it past the window, and no
    # cell's content spills into the next (an interval bar shrunk by a long name did)
    width = browser.execute_script("return document.documentElement.scrollWidth")
    assert width <= 1280
    spilled = browser.execute_script(
        """return [...document.querySelectorAll("#leaderboard td")].filter((td) => {
             const range = document.createRange();
             range.selectNodeContents(td);
             return range.getBoundingClientRect().right > td.getBoundingClientRect().right + 1;
           }).map((td) => td.textContent.trim());"""
    )
    assert spilled == []
    _no_alert_no_errors(browser)
    _screenshot(browser, tmp_path / "leaderboard-note.png")
    if os.environ.get("ARENA_WRITE_SCREENSHOTS") == "1":
        _screenshot(browser, IMG / "leaderboard-note.png")
