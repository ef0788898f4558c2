"""The Play page (issue 12) in a real browser against a real server.

The server is the arena's own app (``arena.web.app.create_app``, as ``arena play`` runs it:
``local_play``, bots in the ``inproc`` sandbox) on a real uvicorn server; the page is driven
by Debian's chromium.  A person's seat is a remote seat of the real referee, so every move
the test makes by clicking is judged, timed and recorded by the referee.

The test plays like a person: it reads the turn's legal plays the page offers
(``window.arenaPlay.state.legal``, the list the server sent), clicks those cards in the
hand, checks that Play (or Pass) is then enabled, and clicks it.

``ARENA_WRITE_SCREENSHOTS=1`` also writes the README's screenshots
(``docs/img/play-desktop.png``, ``docs/img/play-phone.png``)."""

from __future__ import annotations

import os
import random
import re
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.web.app import create_app
from arena.web.contest import WebConfig

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ENGINE_WHY = re.compile(
    r"does not beat|must include|not a combination|play \d cards|cards|a single|a pair|lead",
    re.I,
)


def _app(tmp: Path, move_ms: int = 60_000) -> Any:
    return create_app(
        WebConfig(
            db=str(tmp / "play.db"),
            local_play=True,
            sandbox="inproc",
            extra={"human_move_ms": move_ms},
        )
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, serve_asgi: Any) -> Iterator[str]:
    """The arena's app as ``arena play`` serves it, on a real uvicorn server."""
    with serve_asgi(_app(tmp_path_factory.mktemp("play"))) as url:
        yield url


# ----- driving the page ---------------------------------------------------------------------


def _wait(browser: Any, script: str, timeout: float = 15.0, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = browser.execute_script(script)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or script}")
        time.sleep(0.03)


def _state(browser: Any) -> dict[str, Any] | None:
    return browser.execute_script("return window.arenaPlay && window.arenaPlay.state")


def open_table(browser: Any, url: str, rules: str, players: int, hands: int) -> str:
    """Fill the start-a-game form and submit it by clicking; the table's id."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(url + "/play")
    Select(browser.find_element(By.ID, "rules")).select_by_value(rules)
    Select(browser.find_element(By.ID, "players")).select_by_value(str(players))
    Select(browser.find_element(By.ID, "seat")).select_by_value("0")
    # fast opponents, whatever else sample_bots holds (a search bot thinks for 300 ms)
    for i, name in enumerate(["heuristic", "greedy", "random"][: players - 1]):
        Select(browser.find_element(By.ID, f"opponent-{i}")).select_by_value(name)
    browser.find_element(By.ID, "hands").send_keys(str(hands))
    browser.find_element(By.CSS_SELECTOR, "#play-new-form button[type=submit]").click()
    _wait(browser, "return /\\/play\\/[^/]+$/.test(location.pathname)", what="the table page")
    _wait(browser, "return window.arenaPlay && window.arenaPlay.state", what="the first update")
    return str(browser.current_url.rsplit("/", 1)[-1])


def _click(browser: Any, selector: str) -> None:
    """Click an element, again if the page rebuilt it meanwhile (a new turn redraws the hand)."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    for attempt in range(5):
        try:
            browser.find_element(By.CSS_SELECTOR, selector).click()
            return
        except StaleElementReferenceException:
            if attempt == 4:
                raise
            time.sleep(0.02)


def _my_turn(browser: Any, timeout: float = 15.0) -> dict[str, Any]:
    return _wait(
        browser,
        "var s = window.arenaPlay.state;"
        "return s && s.turn !== null && s.sent === null && !s.paused ? s : null",
        timeout,
        "my turn",
    )


def choose_legal(browser: Any, rng: random.Random, state: dict[str, Any]) -> dict[str, Any]:
    """Select one of the legal plays the page offers by clicking its cards, then Play (or
    Pass); the play chosen."""
    from selenium.webdriver.common.by import By

    choice = rng.choice(state["legal"])
    if choice["cards"] is None:
        assert browser.find_element(By.ID, "btn-pass").is_enabled()
        _click(browser, "#btn-pass")
        return choice
    for card in choice["cards"]:
        _click(browser, f'#my-hand button[data-card="{card}"]')
    assert browser.find_element(By.ID, "btn-play").is_enabled(), choice
    line = browser.find_element(By.ID, "selection").text
    assert line == choice["label"], (line, choice)  # the engine's words for the play
    _click(browser, "#btn-play")
    return choice


def play_out(browser: Any, rng: random.Random, timeout: float = 40.0) -> int:
    """Play the match to its end by clicking; the number of my plays."""
    deadline = time.monotonic() + timeout
    plays = 0
    while time.monotonic() < deadline:
        state = _state(browser)
        if state and state["finished"]:
            return plays
        if state and state["paused"]:  # the hand-end panel: every hand shown, then Continue
            _click(browser, "#btn-continue")
        elif state and state["turn"] is not None and state["sent"] is None:
            choose_legal(browser, rng, state)
            plays += 1
        time.sleep(0.03)
    raise AssertionError(f"the match did not end within {timeout} s ({plays} plays)")


def _notices(browser: Any) -> str:
    from selenium.webdriver.common.by import By

    return str(browser.find_element(By.ID, "notice").text)


# ----- the tests ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "players", "hands"), [("hk", 4, 2), ("pusoy", 4, 1), ("hk", 3, 1)]
)
def test_a_whole_match_by_clicking(
    browser: Any, site: str, rules: str, players: int, hands: int
) -> None:
    """Every play is chosen among the legal plays the page offers and made by clicking;
    the hand-end panel shows every hand; the match ends with standings and a replay link
    that opens the replay viewer of the stored record."""
    from selenium.webdriver.common.by import By

    open_table(browser, site, rules, players, hands)
    names = browser.execute_script(
        "return JSON.parse(document.getElementById('table-data').textContent).names"
    )
    assert len(names) == players
    assert len(browser.find_elements(By.CSS_SELECTOR, "#felt .seat")) == players
    plays = play_out(browser, random.Random(f"{rules}{players}"))
    assert plays > 0
    standings = browser.find_elements(By.CSS_SELECTOR, "#match-end-body tbody tr")
    assert len(standings) == players
    assert "fault" not in _notices(browser).lower()  # every click was a legal, timely play
    history = browser.find_element(By.ID, "history").text
    assert history.count("won by") == hands
    moves = browser.execute_script("return window.arenaPlay.moves")
    assert sum(1 for m in moves if m["seat"] == 0) >= plays
    if rules == "hk" and players == 4:  # the finished match replays
        link = browser.find_element(By.ID, "replay-link")
        assert link.get_attribute("href").endswith("/replay")
        link.click()
        _wait(
            browser, "return document.getElementById('replay') !== null", what="the replay viewer"
        )
        assert "Re-validated by the engine" in browser.find_element(By.ID, "validity").text
        seats = browser.find_elements(By.CSS_SELECTOR, "#table .seat")
        assert len(seats) == players
        logs = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert not logs, logs  # no script error, no CSP refusal


def test_an_illegal_selection_says_why_and_sends_nothing(browser: Any, site: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    open_table(browser, site, "hk", 4, 1)
    state = _my_turn(browser)
    legal = [sorted(m["cards"]) for m in state["legal"] if m["cards"]]
    bad = next(([c] for c in state["cards"] if [c] not in legal), None)
    if bad is None:  # every single is legal: two cards of different ranks are no combination
        bad = next([a, b] for a in state["cards"] for b in state["cards"] if a[:-1] != b[:-1])
    for card in bad:
        _click(browser, f'#my-hand button[data-card="{card}"]')
    line = _wait(
        browser,
        "var e = document.getElementById('selection');"
        "return e.classList.contains('bad') ? e.textContent : null",
        what="the engine's reason",
    )
    assert ENGINE_WHY.search(line), line
    assert not browser.find_element(By.ID, "btn-play").is_enabled()
    ActionChains(browser).send_keys(Keys.ENTER).perform()  # Enter plays only a legal play
    time.sleep(0.6)
    after = _state(browser)
    assert after["turn"] == state["turn"] and after["sent"] is None  # still ours, unsent
    assert not [
        m for m in browser.execute_script("return window.arenaPlay.moves") if m["seat"] == 0
    ]
    assert "fault" not in _notices(browser).lower()
    assert browser.find_element(By.ID, "selection").text == line


def test_a_timeout_shows_the_default_action(browser: Any, tmp_path: Path, live_server: Any) -> None:
    from selenium.webdriver.common.by import By

    url = live_server(_app(tmp_path, move_ms=1000))
    open_table(browser, url, "hk", 4, 1)
    state = _my_turn(browser)
    assert browser.find_element(By.ID, "clock").is_displayed()
    referee = _wait(
        browser,
        "return window.arenaPlay.moves.filter(function (m) {"
        " return m.seat === 0 && m.by_referee; })[0]",
        timeout=8,
        what="the referee's move for the time-out",
    )
    notices = _notices(browser)
    assert "Time ran out: the referee" in notices, notices
    if referee["cards"]:
        shown = " ".join(
            e.get_attribute("title") for e in browser.find_elements(By.CSS_SELECTOR, "#trick .card")
        )
        assert "played" in notices and shown  # the default play is on the table
    else:
        assert "passed for you" in notices
    assert "played by the referee" in browser.find_element(By.ID, "history").text
    assert state["turn"] is not None


TIMED_BOT = """
import time
from bigtwo import PASS, Bot


class TimedBot(Bot):
    \"\"\"Greedy, and notes when it answered (epoch ms) in LOG, one line a move.\"\"\"

    def act(self, observation):
        move = next((m for m in observation.legal_moves if m is not PASS), PASS)
        with open(LOG, "a") as out:
            out.write(f"{time.time() * 1000:.3f}\\n")
        return move
"""


@pytest.mark.serial  # measures time
def test_latency_bot_move_to_screen(browser: Any, tmp_path: Path, live_server: Any) -> None:
    """From a bot's answer (the time its act() returns, written by the bot itself, run in
    the server's process by the inproc sandbox) to its cards on the screen (``shown``: the
    animation frame after they were put in the DOM): median < 100 ms.  The table is the one
    ``arena play`` opens at start (``first_table``) with three such bots."""
    from arena.bots import resolve
    from arena.web.tables import TableSetup
    from bigtwo import RuleSet

    acts = tmp_path / "acts.txt"
    bot = tmp_path / "timed.py"
    bot.write_text(f"LOG = {str(acts)!r}\n{TIMED_BOT}")
    rules = RuleSet.preset("hk").replace(match_end="hands", match_end_value=1)
    setup = TableSetup(rules, 0, tuple(resolve(str(bot)) for _ in range(3)), "you", 60_000)
    app = create_app(
        WebConfig(
            db=str(tmp_path / "play.db"),
            local_play=True,
            sandbox="inproc",
            extra={"first_table": {"id": "latency", "setup": setup}},
        )
    )
    url = live_server(app)
    browser.get(url + "/play/latency")
    _wait(browser, "return window.arenaPlay && window.arenaPlay.state", what="the table")
    play_out(browser, random.Random(7))
    moves = browser.execute_script("return window.arenaPlay.moves")
    answered = [float(line) for line in acts.read_text().split()]
    bots = [m for m in moves if m["seat"] != 0 and not m["by_referee"]]
    assert len(bots) == len(answered)  # one act() per bot move, in the same order
    live = [(m, a) for m, a in zip(bots, answered, strict=True) if not m["queued"] and m["shown"]]
    assert len(live) >= 10
    delays = [m["shown"] - a for m, a in live]
    relay = [m["shown"] - m["t"] for m, _ in live]
    median = statistics.median(delays)
    print(
        f"bot answer -> cards on screen: median {median:.1f} ms, max {max(delays):.1f} ms "
        f"over {len(delays)} moves (server relay -> screen: {statistics.median(relay):.1f} ms)"
    )
    assert median < 100


def test_screenshots_desktop_and_phone(browser: Any, site: str, tmp_path: Path) -> None:
    """The table at 1280x720 and at a phone's 375 px: no horizontal scroll, the whole hand
    and the buttons on screen; written to docs/img under ARENA_WRITE_SCREENSHOTS=1."""
    from selenium.webdriver.common.by import By

    out = ROOT / "docs" / "img" if os.environ.get("ARENA_WRITE_SCREENSHOTS") == "1" else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    open_table(browser, site, "pusoy", 4, 1)
    rng = random.Random(3)
    for turn in range(8):  # a turn with a trick to beat and a play that beats it
        state = _my_turn(browser)
        plays = [m for m in state["legal"] if m["cards"]]
        on_table = browser.find_elements(By.CSS_SELECTOR, "#trick .card")
        if (turn >= 2 and on_table and plays) or turn == 7:
            break
        choose_legal(browser, rng, state)
    for card in plays[-1]["cards"] if plays else []:
        _click(browser, f'#my-hand button[data-card="{card}"]')
    time.sleep(0.3)
    browser.save_screenshot(str(out / "play-desktop.png"))
    try:
        browser.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": 375, "height": 740, "deviceScaleFactor": 1, "mobile": True},
        )
        time.sleep(0.3)
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= 375, f"horizontal scroll at 375 px: {width}"
        for node in browser.find_elements(
            By.CSS_SELECTOR, "#my-hand button.card, .controls button"
        ):
            rect = node.rect
            assert rect["x"] >= 0 and rect["x"] + rect["width"] <= 375, rect
        browser.save_screenshot(str(out / "play-phone.png"))
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
