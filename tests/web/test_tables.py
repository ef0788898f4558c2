"""The Play page's tables over a real socket (issue 12): a person's seat at the real referee,
driven through the page's WebSocket protocol as a browser would, against sample bots.

A whole match played through the socket (engine-worded checks, refusals that send nothing,
hands shown at hand end, the match stored unrated and replayed), a time-out played by the
referee with the person's own move time, a closed page forfeiting after that time, a second
tab rebuilding the same state, hostile requests answered, and the owner checks of a served
contest (sign-in, someone else's table, a foreign Origin)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from test_api import csrf_of, sign_up
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from arena.ladder.store import Match
from arena.web.app import create_app
from arena.web.contest import WebConfig
from arena.web.models import HumanGame

REPLIES = {"refused", "sent", "check", "hint", "error"}


def play_app(tmp_path: Path, **extra: Any) -> Any:
    """``arena play``'s app: local, bots in-process (fast), a short hk match."""
    config = WebConfig(
        db=str(tmp_path / "play.db"),
        sandbox="inproc",
        local_play=True,
        extra={"play_rules": "hk"} | extra,
    )
    return create_app(config)


def open_table(client: httpx.Client, **fields: str) -> str:
    players = int(fields.get("players", "4"))
    picked = ["heuristic", "greedy", "random"][: players - 1]  # fast, whatever else is there
    data = {"rules": "hk", "players": "4", "seat": "0", "hands": "1", "opponent": picked}
    data |= fields
    r = client.post("/play", data=data | {"csrf": csrf_of(client, "/play")})
    assert r.status_code == 303, r.text
    return r.headers["location"]


def cookie_of(client: httpx.Client) -> str:
    """A signed-in client's cookies, as a WebSocket handshake sends them."""
    return "; ".join(f"{k}={v}" for k, v in client.cookies.items())


class Page:
    """What a page does with the table's socket: fold updates, send requests, match
    replies (which are not part of the update log)."""

    def __init__(self, url: str, path: str, **headers: str) -> None:
        ws_url = url.replace("http://", "ws://") + path + "/ws"
        self.ws: ClientConnection = connect(ws_url, origin=url, **headers)
        self.updates: list[dict[str, Any]] = []
        self.replies: list[dict[str, Any]] = []
        self.unread: list[dict[str, Any]] = []  # updates that came while awaiting a reply

    def recv(self, timeout: float = 30) -> dict[str, Any]:
        msg = json.loads(self.ws.recv(timeout=timeout))
        (self.replies if msg["type"] in REPLIES else self.updates).append(msg)
        return msg

    def until(self, *kinds: str, timeout: float = 30) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while True:
            if self.unread:
                msg = self.unread.pop(0)
                if msg["type"] in kinds or msg["type"] == "closed":
                    return msg
                continue
            try:
                msg = self.recv(max(0.1, end - time.monotonic()))
            except TimeoutError:
                seen = [u["type"] for u in self.updates[-8:]]
                why = f"no {'/'.join(kinds)} within {timeout} s; last: {seen}"
                raise AssertionError(why) from None
            if msg["type"] in kinds or msg["type"] == "closed":
                return msg

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        self.ws.send(json.dumps(request))
        while True:
            msg = self.recv()
            if msg["type"] in REPLIES:
                return msg
            self.unread.append(msg)  # a turn may come before the reply: until() sees it

    def close(self) -> None:
        self.ws.close()


def _illegal_selection(turn: dict[str, Any]) -> list[str] | None:
    """Cards of the hand that are no legal play now (the page's illegal click)."""
    legal = {tuple(sorted(m["cards"])) for m in turn["legal"] if m["cards"]}
    hand = turn["cards"]
    for size in (1, 2):
        for i in range(len(hand) - size + 1):
            pick = hand[i : i + size]
            if tuple(sorted(pick)) not in legal:
                return pick
    return None


def test_a_whole_match_through_the_socket_is_refereed_stored_and_replayable(tmp_path, live_server):
    app = play_app(tmp_path)
    url = live_server(app)
    client = httpx.Client(base_url=url)
    path = open_table(client, seat="1", hands="2")
    assert client.get(path).status_code == 200
    page = Page(url, path)
    hello = page.recv()
    assert hello["type"] == "hello" and hello["seat"] == 1
    refused = checked = 0
    hand_ends = []
    while True:
        msg = page.until("turn", "hand_end", "match_end")
        if msg["type"] == "closed":
            break
        if msg["type"] == "hand_end":
            hand_ends.append(msg)
            continue
        if msg["type"] == "match_end":
            end = msg
            continue
        turn = msg
        bad = _illegal_selection(turn)
        if bad is not None:
            check = page.ask({"type": "check", "cards": bad, "id": 7})
            assert check["id"] == 7 and check["playable"] is False and check["why"], check
            reply = page.ask({"type": "play", "turn_id": turn["turn_id"], "cards": bad})
            assert reply["type"] == "refused" and reply["why"] == check["why"]
            refused += 1
        choice = turn["legal"][0]
        if choice["cards"] is not None:
            check = page.ask({"type": "check", "cards": choice["cards"], "id": 8})
            assert check["playable"] is True and check["label"] == choice["label"]
            checked += 1
            reply = page.ask({"type": "play", "turn_id": turn["turn_id"], "cards": choice["cards"]})
        else:
            reply = page.ask({"type": "pass", "turn_id": turn["turn_id"]})
        assert reply == {"type": "sent", "turn_id": turn["turn_id"]}
        # a second answer to the same turn is refused, not sent
        again = page.ask({"type": "pass", "turn_id": turn["turn_id"]})
        assert again["type"] == "refused"
    assert refused and checked
    assert len(hand_ends) == 2
    for h in hand_ends:  # every hand shown at hand end, as many cards as the referee counts
        assert [len(cards) for cards in h["hands"]] == h["cards_left"]
    assert end["replay_url"] == path + "/replay"
    mine = [u for u in page.updates if u["type"] == "move" and u["seat"] == 1]
    assert mine and not any(u["by_referee"] for u in mine)  # no fault: refusals sent nothing
    assert not [u for u in page.updates if u["type"] == "fault"]
    moves = [u for u in page.updates if u["type"] == "move"]
    assert all("next" in u and "locked_out" in u for u in moves)
    page.close()
    replay = client.get(end["replay_url"])
    assert replay.status_code == 200 and "Re-validated by the engine" in replay.text
    assert end["replay_url"] in client.get("/play").text  # listed among the person's games
    with Session(app.state.engine) as session:
        game = session.get(HumanGame, path.rsplit("/", 1)[1])
        assert game is not None and game.status == "over" and game.record
        assert json.loads(game.result)["places"] == end["places"]
        assert session.scalar(select(func.count()).select_from(Match)) == 0  # never rated


def test_a_time_out_is_played_by_the_referee_with_the_persons_own_move_time(tmp_path, live_server):
    app = play_app(tmp_path, human_move_ms=1000)
    url = live_server(app)
    client = httpx.Client(base_url=url)
    path = open_table(client, seat="0")
    page = Page(url, path)
    turn = page.until("turn")
    assert turn["move_ms"] == 1000  # the person's, while the bots keep the match's
    started = time.monotonic()
    fault = page.until("fault")
    assert fault["kind"] == "timeout" and 0.9 < time.monotonic() - started < 10
    played = page.until("move")
    assert played["seat"] == 0 and played["by_referee"] is True
    late = page.ask({"type": "pass", "turn_id": turn["turn_id"]})
    assert late["type"] == "refused"  # the referee played it: not sent
    page.close()


def test_a_closed_page_forfeits_after_the_move_time_and_the_fallback_ends_the_match(
    tmp_path, live_server
):
    app = play_app(tmp_path, human_move_ms=1000)
    url = live_server(app)
    client = httpx.Client(base_url=url)
    path = open_table(client, seat="2", hands="1")
    page = Page(url, path)
    page.until("hand_start")
    page.close()
    game_id = path.rsplit("/", 1)[1]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with Session(app.state.engine) as session:
            game = session.get(HumanGame, game_id)
            if game.status != "playing":
                break
        time.sleep(0.2)
    assert game.status == "over"
    assert json.loads(game.result)["forfeited"] == [False, False, True, False]
    back = Page(url, path)  # the person comes back: told they left, and how it ended
    end = back.until("match_end")
    assert end["forfeited"] == [False, False, True, False] and end["replay_url"]
    assert any(u["type"] == "left" for u in back.updates)
    back.close()


def test_a_second_page_rebuilds_the_same_state_from_the_log(tmp_path, live_server):
    app = play_app(tmp_path)
    url = live_server(app)
    client = httpx.Client(base_url=url)
    path = open_table(client, seat="3")
    first = Page(url, path)
    turn = first.until("turn")
    second = Page(url, path)
    hello = second.recv()
    assert hello["type"] == "hello" and hello["replaying"] is True
    second.until("live")

    def folded(page: Page) -> list[dict[str, Any]]:
        return [u for u in page.updates if u["type"] not in ("hello", "live")]

    assert folded(second) == folded(first)  # the same updates, in the same order
    first_legal = turn["legal"][0]["cards"]
    kind = "play" if first_legal else "pass"
    reply = second.ask({"type": kind, "turn_id": turn["turn_id"], "cards": first_legal or []})
    assert reply["type"] == "sent"
    assert first.until("move")["seat"] == 3  # both pages see it
    first.close()
    second.close()


HOSTILE = [
    ("not json", "not JSON"),
    ("[1, 2]", "a request is a JSON object"),
    ('{"type": "play", "turn_id": "x", "cards": ["3D"]}', "turn_id must be a whole number"),
    ('{"type": "play", "turn_id": 1, "cards": "3D"}', "cards must be a list"),
    ('{"type": "check", "cards": [1, 2]}', "cards must be a list"),
    ('{"type": "check", "cards": ["ZZ"]}', None),
    ('{"type": "hint", "bot": "../../etc/passwd"}', None),
    ('{"type": "launch"}', "unknown request"),
    ('{"type": "check", "cards": ["' + "A" * 5000 + '"]}', "request too long"),
]


def test_hostile_requests_get_a_reason_and_the_table_plays_on(tmp_path, live_server):
    app = play_app(tmp_path)
    url = live_server(app)
    client = httpx.Client(base_url=url)
    page = Page(url, open_table(client, seat="0"))
    turn = page.until("turn")
    for request_text, why in HOSTILE:
        page.ws.send(request_text)
        while True:
            reply = page.recv()
            if reply["type"] in REPLIES:
                break
        if why is not None:
            assert reply["type"] == "error" and why in reply["why"], (request_text, reply)
        else:
            assert reply.get("why"), reply  # refused with a reason, nothing played
    page.ws.send(b"\x00binary")
    assert page.until("error")["why"] == "requests are JSON text"
    assert not [u for u in page.updates if u["type"] in ("fault", "move") and u.get("seat", 0) == 0]
    assert page.ask({"type": "pass", "turn_id": turn["turn_id"]})["type"] in ("sent", "refused")
    page.close()


def test_a_served_contest_keeps_each_table_to_its_owner(tmp_path, live_server):
    app = create_app(
        WebConfig(db=str(tmp_path / "c.db"), sandbox="inproc", extra={"human_move_ms": 30_000})
    )
    url = live_server(app)
    anonymous = httpx.Client(base_url=url)
    assert anonymous.get("/play").headers["location"].startswith("/login")
    alice = sign_up(url, app, "alice")
    bob = sign_up(url, app, "bob")
    form = alice.get("/play").text
    assert "heuristic" in form and "contest" in form
    path = open_table(alice, rules="contest", players="3", seat="0")
    assert alice.get(path).status_code == 200
    assert bob.get(path).status_code == 404  # someone else's table is no table
    assert anonymous.get(path).status_code in (303, 401)
    for who in (bob, anonymous):
        cookie = cookie_of(who)
        with pytest.raises((ConnectionClosed, InvalidStatus)):
            page = Page(url, path, additional_headers={"Cookie": cookie})
            page.recv(5)
    cookie = cookie_of(alice)
    foreign = url.replace("127.0.0.1", "localhost")
    with pytest.raises((ConnectionClosed, InvalidStatus)):
        ws = connect(
            url.replace("http://", "ws://") + path + "/ws",
            origin=foreign,
            additional_headers={"Cookie": cookie},
        )
        ws.recv(timeout=5)
    page = Page(url, path, additional_headers={"Cookie": cookie})
    hello = page.recv()
    assert hello["type"] == "hello" and len(hello["names"]) == 3 and hello["names"][0] == "alice"
    page.close()


def _play_to_the_end(page: Page) -> dict[str, Any]:
    """Answer every turn with its first legal play; the match's end."""
    while True:
        msg = page.until("turn", "match_end", timeout=60)
        if msg["type"] == "match_end":
            return msg
        assert msg["type"] == "turn", msg
        first = msg["legal"][0]["cards"]
        kind = "play" if first else "pass"
        assert (
            page.ask({"type": kind, "turn_id": msg["turn_id"], "cards": first or []})["type"]
            == "sent"
        )


@pytest.mark.parametrize(
    "preset, changes",
    [
        ("family", {"players": 2}),
        ("pusoy", {"players": 3}),
        ("hk", {"bombs": "anywhere", "pass_locks_out": True, "revolution": True}),
        ("family", {"teams": True, "alert_rule": True}),
    ],
    ids=["family-2", "pusoy-3", "hk-options", "family-teams"],
)
def test_every_preset_and_option_mix_plays_to_the_end(tmp_path, live_server, preset, changes):
    from arena.bots import resolve
    from arena.web.tables import TableSetup
    from bigtwo import RuleSet

    rules = RuleSet.preset(preset).replace(match_end="hands", match_end_value=1, **changes)
    names = ["heuristic", "greedy", "random"][: rules.players - 1]
    setup = TableSetup(rules, rules.players - 1, tuple(resolve(n) for n in names))
    app = play_app(tmp_path, first_table={"id": "first-table-id", "setup": setup})
    url = live_server(app)
    page = Page(url, "/play/first-table-id")
    hello = page.recv()
    assert hello["seat"] == rules.players - 1 and len(hello["names"]) == rules.players
    end = _play_to_the_end(page)
    assert len(end["places"]) == rules.players
    hand_end = next(u for u in page.updates if u["type"] == "hand_end")
    assert [len(cards) for cards in hand_end["hands"]] == hand_end["cards_left"]
    start = next(u for u in page.updates if u["type"] == "match_start")
    assert RuleSet.from_dict(start["rules"]) == rules
    page.close()


def test_a_served_contest_offers_its_bots_as_opponents(tmp_path, live_server):
    import shutil

    from arena.bots import bot_digest, bot_files, resolve
    from arena.ladder.queries import enter_bots
    from bigtwo.samples import FOLDER

    app = create_app(WebConfig(db=str(tmp_path / "c.db"), sandbox="inproc", house_bots=False))
    folder = tmp_path / "mybot"
    shutil.copytree(FOLDER / "greedy", folder)
    digest = bot_digest(bot_files(resolve(str(folder))))
    enter_bots(app.state.engine, "contest", [("mybot", str(folder), digest)])
    url = live_server(app)
    alice = sign_up(url, app, "alice")
    assert "mybot" in alice.get("/play").text
    path = open_table(alice, players="2", opponent=["mybot"])
    cookie = cookie_of(alice)
    page = Page(url, path, additional_headers={"Cookie": cookie})
    assert page.recv()["names"] == ["alice", "mybot"]
    _play_to_the_end(page)
    page.close()


def test_several_people_play_at_once_each_at_their_own_table(tmp_path, live_server):
    app = create_app(WebConfig(db=str(tmp_path / "c.db"), sandbox="inproc"))
    url = live_server(app)
    people = {name: sign_up(url, app, name) for name in ("ann", "ben")}
    pages = {}
    for name, client in people.items():
        path = open_table(client, players="3", seat="1")
        cookie = cookie_of(client)
        pages[name] = Page(url, path, additional_headers={"Cookie": cookie})
        assert pages[name].recv()["names"][1] == name
    for page in pages.values():  # both tables dealt and live at once
        page.until("hand_start")
    ends = {name: _play_to_the_end(page) for name, page in pages.items()}
    assert ends["ann"]["replay_url"] != ends["ben"]["replay_url"]
    for name, client in people.items():
        other = "ben" if name == "ann" else "ann"
        assert client.get(ends[name]["replay_url"]).status_code == 200
        assert client.get(ends[other]["replay_url"]).status_code == 404  # not theirs
        pages[name].close()


def test_the_form_refuses_bad_fields_with_their_reason(tmp_path, live_server):
    url = live_server(play_app(tmp_path))
    client = httpx.Client(base_url=url)
    for fields, words in [
        ({"rules": "poker"}, "rules: choose one of"),
        ({"players": "5"}, "players: 2, 3 or 4"),
        ({"seat": "4"}, "seat: 0 to 3"),
        ({"hands": "0"}, "hands: a number"),
        ({"opponent": ["random", "nobody", "greedy"]}, "opponents: choose among"),
    ]:
        data = {"rules": "hk", "players": "4", "seat": "0"} | fields
        r = client.post("/play", data=data | {"csrf": csrf_of(client, "/play")})
        assert r.status_code == 400 and words in re.sub(r"\s+", " ", r.text), (fields, r.text)
