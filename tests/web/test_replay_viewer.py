"""The match replay viewer: ``arena.web.replay_data`` over real records, and the page
(``templates/match.html`` + ``static/replay.js`` + ``static/cards.css``) in a real browser.

The records are real: matches played in-process by :func:`bigtwo.play_local`, which writes
the record ``arena replay`` accepts — one under ``hk``, one under ``pusoy`` (a pass locks
the seat out of the trick), one with three players.  A bot named like an HTML injection and
a bot that raises (a fault whose detail is HTML) sit at the ``hk`` table.  The page is
served by a small FastAPI app built here over the package's templates and static files, on
a real uvicorn server, with the Content-Security-Policy the arena sends (so inline script
would not run), and driven by Debian's chromium.

``ARENA_WRITE_SCREENSHOTS=1`` also writes the README's screenshots
(``docs/img/replay-viewer.png``, ``docs/img/replay-viewer-phone.png``)."""

from __future__ import annotations

import copy
import os
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, Request
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from arena.record import RecordError, replay
from arena.web.replay_data import replay_data
from bigtwo import PASS, Bot, Game, Observation, RuleSet, parse_cards, play_local
from bigtwo.record import read_events

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "arena" / "web"
HOSTILE_NAME = "<img src=x onerror=alert(1)>"
HOSTILE_DETAIL = "<script>alert(2)</script>"
CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'"
)


class SeededBot(Bot):
    """A random legal move from its own seeded generator (the same match every run)."""

    def __init__(self, seed: int, name: str = "seeded") -> None:
        self.rng = random.Random(seed)
        self.name = name

    def act(self, observation: Observation) -> Any:
        return self.rng.choice(observation.legal_moves)


class FaultyBot(SeededBot):
    """Raises on its 3rd and 7th move: two faults whose detail is HTML, and two moves the
    referee plays for it."""

    moves = 0

    def act(self, observation: Observation) -> Any:
        self.moves += 1
        if self.moves in (3, 7):
            raise KeyError(HOSTILE_DETAIL)
        return super().act(observation)


def _events(path: Path) -> list[dict[str, Any]]:
    return [event for _, event in read_events(path)]


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three real records: ``hk`` (4 seats, a hostile name and a faulty bot), ``pusoy``,
    ``three`` (hk with 3 players)."""
    where = tmp_path_factory.mktemp("records")
    out = {}
    hk_bots: list[Bot] = [
        SeededBot(1, HOSTILE_NAME),
        FaultyBot(2, "faulty"),
        SeededBot(3, "third"),
        SeededBot(4, "fourth"),
    ]
    hk = RuleSet.preset("hk").replace(match_end="hands", match_end_value=4)
    out["hk"] = play_local(hk_bots, hk, seed=11, record=where / "hk.jsonl").record
    out["pusoy"] = play_local(
        [SeededBot(s) for s in range(4)], "pusoy", seed=5, record=where / "pusoy.jsonl"
    ).record
    three = RuleSet.preset("hk").replace(players=3, match_end="hands", match_end_value=3)
    out["three"] = play_local(
        [SeededBot(s) for s in range(3)], three, seed=8, record=where / "three.jsonl"
    ).record
    for path in out.values():
        assert path is not None
        replay(path)  # what arena replay accepts
    return {k: v for k, v in out.items() if v is not None}


def _turns_by_hand(events: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for e in events:
        if e["type"] == "turn":
            out.setdefault(e["hand"], []).append(e)
    return out


def _move_cards(move: str) -> list[str] | None:
    return None if move == "pass" else sorted(str(c) for c in parse_cards(move))


def _tampered(events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """A copy of the record with hand 1's 9th move replaced by a play of a card another
    seat holds, and the number of that event."""
    events = copy.deepcopy(events)
    turns = [e for e in events if e["type"] == "turn" and e["hand"] == 0]
    deal = next(e for e in events if e["type"] == "deal")
    victim = turns[8]
    victim["move"] = deal["hands"][(victim["seat"] + 1) % len(deal["hands"])][-1]
    return events, events.index(victim) + 1


# ----- replay_data --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["hk", "pusoy", "three"])
def test_replay_data_follows_the_record(records: dict[str, Path], name: str) -> None:
    events = _events(records[name])
    data = replay_data(events)
    assert data["valid"] is True and data["problem"] is None and data["complete"] is True
    header = events[0]
    rules = RuleSet.from_dict(header["rules"])
    assert data["players"] == rules.players == len(data["seats"])
    assert data["match_id"] == header["match_id"]
    assert data["rules"].startswith(rules.preset_name or "hk")
    assert [s["name"] for s in data["seats"]] == [s["bot"] for s in header["seats"]]

    deals = [e for e in events if e["type"] == "deal"]
    ends = [e for e in events if e["type"] == "hand_end"]
    by_hand = _turns_by_hand(events)
    assert len(data["hands"]) == len(deals) == len(ends)
    for h, deal, end in zip(data["hands"], deals, ends, strict=True):
        assert h["hand"] == deal["hand"] and h["leader"] == deal["leader"]
        assert h["deal"] == deal["hands"]  # every seat's cards, in the record's order …
        for cards in h["deal"]:  # … which is the rule set's, weakest first
            assert cards == [str(c) for c in rules.sort_cards(parse_cards(cards))]
        turns = by_hand[deal["hand"]]
        assert len(h["turns"]) == len(turns)
        for mine, theirs in zip(h["turns"], turns, strict=True):
            assert mine["id"] == theirs["turn"] and mine["seat"] == theirs["seat"]
            shown = None if mine["cards"] is None else sorted(mine["cards"])
            assert shown == _move_cards(theirs["move"])
            assert mine.get("by_referee", False) == theirs["by_referee"]
        for k in ("winner", "cards_left", "scores", "cumulative"):
            assert h["result"][k] == end[k]
    assert sum(len(h["turns"]) for h in data["hands"]) == sum(
        1 for e in events if e["type"] == "turn"
    )
    final = next(e for e in events if e["type"] == "match_end")
    assert data["final"]["scores"] == [s["score"] for s in final["seats"]]


@pytest.mark.parametrize("name", ["hk", "pusoy", "three"])
def test_tricks_clear_when_won_and_lock_outs_hold(records: dict[str, Path], name: str) -> None:
    """Checked against the engine playing the record's moves: a turn marked ``won`` leaves
    no trick, and only then does the next move lead; ``locked`` is the engine's lock-out
    set, a locked seat never moves again in that trick, and a trick clears the locks."""
    events = _events(records[name])
    data = replay_data(events)
    rules = RuleSet.from_dict(events[0]["rules"])
    locked_seen = 0
    for h in data["hands"]:
        game = Game.from_hands(rules, h["deal"], leader=h["leader"])
        locked: set[int] = set()
        for i, t in enumerate(h["turns"]):
            assert t["seat"] == game.turn and t["seat"] not in locked
            game.apply(PASS if t["cards"] is None else t["cards"])
            assert t.get("won", False) == (
                game.trick is None and not (t["lead"] and not t["cards"])
            )
            assert set(t.get("locked", [])) == set(game.locked_out)
            locked = set(t.get("locked", []))
            locked_seen += bool(locked)
            if i + 1 < len(h["turns"]):
                assert h["turns"][i + 1]["lead"] == (game.trick is None)
                assert t["next"] == game.turn
                if t.get("won"):
                    assert "locked" not in h["turns"][i + 1] or h["turns"][i + 1]["cards"]
            else:
                assert game.hand_over and t["next"] is None and t["won"]
    if rules.pass_locks_out:
        assert locked_seen > 0  # the pusoy record does lock seats out
    else:
        assert locked_seen == 0


def test_faults_and_hostile_text_are_plain_capped_strings(records: dict[str, Path]) -> None:
    data = replay_data(_events(records["hk"]))
    assert data["seats"][0]["name"] == HOSTILE_NAME  # a plain string: the page escapes it
    faults = data["faults"]
    assert len(faults) == 2 and all(f["seat"] == 1 and f["kind"] == "crash" for f in faults)
    assert all(HOSTILE_DETAIL in f["detail"] for f in faults)
    for f in faults:  # the move after a fault is the referee's
        turn = data["hands"][f["hand"]]["turns"][f["at"]]
        assert turn["seat"] == 1 and turn["by_referee"] is True

    events = _events(records["hk"])
    events[0] = copy.deepcopy(events[0])
    events[0]["seats"][2]["bot"] = "\u202eevil\x1b[2J" + "x" * 5000
    events[0]["match_id"] = "m" * 1000
    shown = replay_data(events)
    name = shown["seats"][2]["name"]
    assert len(name) <= 40 and "\u202e" not in name and "\x1b" not in name
    assert name.startswith("\\u202eevil\\x1b[2J")
    assert len(shown["match_id"]) <= 80


def test_a_tampered_record_is_invalid_and_shown_up_to_the_problem(
    records: dict[str, Path],
) -> None:
    events, line = _tampered(_events(records["hk"]))
    turns = [e for e in events if e["type"] == "turn" and e["hand"] == 0]
    data = replay_data(events)
    assert data["valid"] is False and data["complete"] is False
    assert data["problem"].startswith(f"record:{line}: illegal move")
    assert len(data["hands"]) == 1 and len(data["hands"][0]["turns"]) == 8
    assert data["hands"][0]["result"] is None
    assert data["seats"][0]["name"] == HOSTILE_NAME

    # the same record with a hand's scores changed: every move shown, the result refused
    events = copy.deepcopy(_events(records["hk"]))
    end = next(e for e in events if e["type"] == "hand_end")
    end["scores"] = [s + 1 for s in end["scores"]]
    data = replay_data(events)
    assert data["valid"] is False
    assert "hand result differs from the engine's" in data["problem"]
    assert len(data["hands"][0]["turns"]) == len(turns)

    # the same check as arena replay: it refuses the same record
    with pytest.raises(RecordError, match="hand result differs"):
        from arena.record import replay_events

        replay_events(enumerate(events, 1), "x")


@pytest.mark.parametrize(
    ("events", "problem"),
    [
        ([], "record: empty record"),
        ([{"no": "type"}], "record:1: not a record event"),
        ([{"type": "deal"}], "record:1: the first event must be the match header"),
        ([{"type": "match", "rules": {"players": 9}}], "record:1: bad match header"),
    ],
)
def test_records_that_are_no_match_give_a_problem_not_an_error(
    events: list[dict[str, Any]], problem: str
) -> None:
    data = replay_data(events)
    assert data["valid"] is False and data["problem"].startswith(problem)
    assert data["hands"] == [] and len(data["seats"]) == data["players"]


# ----- the page ---------------------------------------------------------------------------------


def _app(records: dict[str, Path]) -> Any:
    """The viewer's page as the arena serves it (template, static files, CSP), one route."""
    app = FastAPI()
    templates = Jinja2Templates(directory=str(WEB / "templates"))
    app.mount("/static", StaticFiles(directory=str(WEB / "static")), name="static")
    data = {name: replay_data(_events(path)) for name, path in records.items()}
    data["tampered"] = replay_data(_tampered(_events(records["hk"]))[0])

    @app.middleware("http")
    async def csp(request: Request, call_next: Callable[[Request], Any]) -> Any:
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        return response

    @app.get("/match/{name}")
    def match_page(request: Request, name: str) -> Any:
        return templates.TemplateResponse(
            request,
            "match.html",
            {"replay": data[name], "match": {"id": name}, "user": None, "csrf": "", "title": name},
        )

    return app


@pytest.fixture(scope="module")
def site(records: dict[str, Path], serve_asgi: Any) -> Iterator[str]:
    with serve_asgi(_app(records)) as url:
        yield url


def test_page_escapes_what_the_record_says(site: str) -> None:
    import httpx

    page = httpx.get(f"{site}/match/hk").text
    assert HOSTILE_NAME not in page and HOSTILE_DETAIL not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page  # the header line, as text
    assert '<script type="application/json" id="replay-data">' in page
    assert '<script src="/static/replay.js" defer></script>' in page
    assert '<script src="/static/cards.js" defer></script>' in page
    # no inline script: every <script> is the data block or one of those two files
    assert page.count("<script") == 3
    for asset in ("replay.js", "cards.js", "cards.css"):
        assert httpx.get(f"{site}/static/{asset}").status_code == 200


def _expected(events: list[dict[str, Any]], hand: int, turn: int) -> dict[str, Any]:
    """What the viewer must draw at (hand, turn), from the record and the engine: each
    seat's remaining cards (the deal's order) and the play in the middle."""
    rules = RuleSet.from_dict(events[0]["rules"])
    deal = [e for e in events if e["type"] == "deal"][hand]
    moves = _turns_by_hand(events)[deal["hand"]][:turn]
    game = Game.from_hands(rules, deal["hands"], leader=deal["leader"])
    trick: list[str] = []
    for m in moves:
        game.apply(m["move"])
        action = game.history[-1]
        if action.move is not PASS:
            trick = [str(c) for c in action.move.cards]
        elif action.lead:
            trick = []
    if turn == 0:
        trick = []
    held = [set(map(str, game.hand(s))) for s in range(game.players)]
    return {
        "hands": [[c for c in deal["hands"][s] if c in held[s]] for s in range(game.players)],
        "trick": trick,
        "turns": len(_turns_by_hand(events)[deal["hand"]]),
        "to_move": None if game.hand_over else game.turn,
    }


_DRAWN_JS = """
const cards = (sel) => Array.from(document.querySelectorAll(sel), (e) => e.dataset.card);
const seats = Array.from(document.querySelectorAll('#table .seat'));
return {
  hands: seats.map((_, s) => cards('#seat-' + s + ' .hand [data-card]')),
  trick: cards('#trick [data-card]'),
  position: document.getElementById('position').textContent,
  to_move: seats.filter((e) => e.classList.contains('to-move')).map((e) => +e.dataset.seat),
};
"""


def _drawn(browser: Any) -> dict[str, Any]:
    """What the page draws now (one script call: a round trip per card would be slow)."""
    drawn: dict[str, Any] = browser.execute_script(_DRAWN_JS)
    return drawn


def _check(browser: Any, events: list[dict[str, Any]], hand: int, turn: int) -> None:
    want = _expected(events, hand, turn)
    hands_total = sum(1 for e in events if e["type"] == "deal")
    got = _drawn(browser)
    assert got["position"] == f"hand {hand + 1}/{hands_total} · turn {turn}/{want['turns']}"
    assert got["hands"] == want["hands"]
    assert got["trick"] == want["trick"]
    assert got["to_move"] == ([] if want["to_move"] is None else [want["to_move"]])
    assert browser.current_url.endswith(f"#hand={hand + 1}&turn={turn}")


def _open(browser: Any, url: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get("about:blank")  # a new document even when only the hash differs
    browser.get(url)
    WebDriverWait(browser, 10).until(
        lambda b: b.find_element(By.ID, "position").text.startswith("hand ")
    )


def _keys(browser: Any, *keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    chain = ActionChains(browser)
    for key in keys:
        chain.send_keys(key)
    chain.perform()


def _no_alert_no_errors(browser: Any) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 (reading it is the check)
    errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert errors == []  # a CSP refusal or a script error shows here


@pytest.mark.browser
def test_stepping_with_the_keyboard_draws_the_record(
    browser: Any, site: str, records: dict[str, Path]
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    events = _events(records["hk"])
    browser.set_window_size(1280, 720)
    _open(browser, f"{site}/match/hk")
    browser.get_log("browser")  # start the error check from this page
    _check(browser, events, 0, 0)
    _keys(browser, *[Keys.ARROW_RIGHT] * 9)
    _check(browser, events, 0, 9)
    _keys(browser, Keys.ARROW_LEFT)
    _check(browser, events, 0, 8)
    # to the hand's end: every seat's cards left and the hand's scores
    last = _expected(events, 0, 0)["turns"]
    _keys(browser, Keys.END)
    _check(browser, events, 0, last)
    result = browser.find_element(By.ID, "hand-result")
    assert result.is_displayed() and "wins" in result.text
    _keys(browser, Keys.ARROW_RIGHT)  # over the hand's end: the next deal
    _check(browser, events, 1, 0)
    _keys(browser, Keys.ARROW_LEFT)
    _check(browser, events, 0, last)

    # the hostile name is drawn as text, in the seat and in the header
    assert browser.find_element(By.CSS_SELECTOR, "#seat-0 .seat-name").text == HOSTILE_NAME
    assert browser.find_elements(By.CSS_SELECTOR, "#replay img") == []
    _no_alert_no_errors(browser)


@pytest.mark.browser
def test_the_address_opens_a_move_and_the_hand_select_jumps(
    browser: Any, site: str, records: dict[str, Path]
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    events = _events(records["hk"])
    _open(browser, f"{site}/match/hk#hand=2&turn=5")
    _check(browser, events, 1, 5)
    Select(browser.find_element(By.ID, "hand-select")).select_by_value("2")
    _check(browser, events, 2, 0)
    # a fault is shown at the move the referee played for the seat, as text
    fault = replay_data(events)["faults"][0]
    _open(browser, f"{site}/match/hk#hand={fault['hand'] + 1}&turn={fault['at'] + 1}")
    note = browser.find_element(By.CSS_SELECTOR, "#notes .fault").text
    assert HOSTILE_DETAIL in note and "faulty" in note
    assert "played by the referee" in browser.find_element(By.ID, "notes").text
    # a record that fails re-validation: said so, and shown up to the refused move
    _open(browser, f"{site}/match/tampered#hand=1&turn=99")
    validity = browser.find_element(By.ID, "validity")
    assert "invalid" in (validity.get_attribute("class") or "")
    assert "fails re-validation" in validity.text and "illegal move" in validity.text
    want, got = _expected(events, 0, 8), _drawn(browser)
    assert got["position"] == "hand 1/1 · turn 8/8"
    assert (got["hands"], got["trick"]) == (want["hands"], want["trick"])
    _no_alert_no_errors(browser)


@pytest.mark.browser
def test_play_pause_with_space_and_the_lock_outs_of_pusoy(
    browser: Any, site: str, records: dict[str, Path]
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    events = _events(records["pusoy"])
    data = replay_data(events)
    _open(browser, f"{site}/match/pusoy")
    Select(browser.find_element(By.ID, "speed")).select_by_value("150")
    _keys(browser, Keys.SPACE)
    time.sleep(0.8)
    _keys(browser, Keys.SPACE)  # paused: the position stays
    shown = browser.find_element(By.ID, "position").text
    turn = int(shown.split("turn ")[1].split("/")[0])
    assert turn >= 2
    time.sleep(0.4)
    assert browser.find_element(By.ID, "position").text == shown
    _check(browser, events, 0, turn)

    # the first position with a seat locked out: its badge says so
    hand, at, seats = next(
        (h, i + 1, t["locked"])
        for h, hd in enumerate(data["hands"])
        for i, t in enumerate(hd["turns"])
        if t.get("locked") and not t.get("won")
    )
    _open(browser, f"{site}/match/pusoy#hand={hand + 1}&turn={at}")
    _check(browser, events, hand, at)
    for s in seats:
        seat = browser.find_element(By.ID, f"seat-{s}")
        assert "locked" in (seat.get_attribute("class") or "")
        assert seat.find_element(By.CLASS_NAME, "seat-badge").text == "locked out"
    _no_alert_no_errors(browser)


def _fits(browser: Any) -> None:
    width = browser.execute_script("return document.documentElement.scrollWidth")
    inner = browser.execute_script("return window.innerWidth")
    assert width <= inner, f"the page scrolls sideways: {width} px in {inner} px"


def _screenshot(browser: Any, path: Path) -> None:
    """The page as a PNG, in 192 colours when Pillow is at hand (a README's picture stays
    small: about a third of the size)."""
    browser.save_screenshot(str(path))
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as shot:
        small = shot.convert("RGB").quantize(192, dither=Image.Dither.NONE)
    small.save(path, optimize=True)


def _viewport(browser: Any, width: int, height: int) -> None:
    """Make the page's viewport exactly ``width``×``height`` CSS pixels (a window's size
    would include the browser's own frame)."""
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )


@pytest.mark.browser
def test_three_players_and_a_phone_sized_window(
    browser: Any, site: str, records: dict[str, Path], tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    events = _events(records["three"])
    write = os.environ.get("ARENA_WRITE_SCREENSHOTS") == "1"
    shots = ROOT / "docs" / "img" if write else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    try:
        _open(browser, f"{site}/match/three#hand=1&turn=4")
        _check(browser, events, 0, 4)
        assert browser.find_elements(By.ID, "seat-3") == []
        _fits(browser)

        # the pictures show a later hand in the middle of a trick of its widest plays
        hk = _events(records["hk"])
        _, hand, turn = max(
            (len(t["cards"]), -h, -(i + 1))
            for h, hd in enumerate(replay_data(hk)["hands"])
            for i, t in enumerate(hd["turns"])
            if h > 0 and t["cards"] and not t["lead"] and not t.get("won")
        )
        hand, turn = -hand, -turn
        _viewport(browser, 1280, 720)
        _open(browser, f"{site}/match/hk#hand={hand + 1}&turn={turn}")
        bottom = browser.find_element(By.ID, "seat-0").rect
        assert bottom["y"] + bottom["height"] <= 720  # the whole table in a laptop's screen
        _screenshot(browser, shots / "replay-viewer.png")
        _fits(browser)

        _viewport(browser, 375, 812)
        _check(browser, hk, hand, turn)
        _fits(browser)
        # the seats stack in the order of play, under the trick; 13 cards fit in one row
        rects = [browser.find_element(By.ID, f"seat-{s}").rect for s in range(4)]
        trick = browser.find_element(By.ID, "trick-area").rect
        assert trick["y"] < rects[0]["y"] < rects[1]["y"] < rects[2]["y"] < rects[3]["y"]
        assert all(r["x"] + r["width"] <= 375 for r in rects)
        rows = browser.execute_script(
            "return new Set(Array.from(document.querySelectorAll('#seat-0 .hand .card'),"
            " (c) => Math.round(c.getBoundingClientRect().top))).size"
        )
        assert rows == 1
        # the phone picture: from the controls to the last seat
        end = browser.execute_script(
            "return Math.ceil(document.getElementById('notes').getBoundingClientRect().bottom"
            " + window.scrollY)"
        )
        _viewport(browser, 375, min(int(end) + 8, 1600))
        _screenshot(browser, shots / "replay-viewer-phone.png")
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    _no_alert_no_errors(browser)
