"""The Play page: a person takes a seat against bots (``/play``), plays at a table
(``/play/{id}`` and its WebSocket), and replays the games they played.

In ``arena serve`` a person signs in first and sees only their own tables and games (the
organizer may replay anyone's); ``arena play`` serves one person on the loopback address,
without accounts (``WebConfig.local_play``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Form, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from bigtwo import RuleSet

from ..bots import SEAT_NAME, BotSpec, BotSpecError, resolve
from ..ladder.queries import entrants
from . import games
from .contest import contest_rules, ladder_row
from .pages import render
from .rules_text import nearest_preset
from .security import Visitor, check_csrf, client_address, owner_or_organizer, visitor
from .tables import TableLimit, TableSetup, default_opponents, sample_bots_by_strength
from .views_account import Who

router = APIRouter()
PRESETS = ("hk", "family", "pusoy")


class RequestBucket:
    """A page sends a request or two per click: a burst of 200, then 50 a second; past
    that a request is answered "slow down", and 500 refused in a row is a flood (the
    connection is closed)."""

    def __init__(self, burst: float = 200, per_s: float = 50, flood: int = 500) -> None:
        self.tokens, self.burst, self.per_s, self.flood = burst, burst, per_s, flood
        self.last: float | None = None
        self.refused = 0

    def take(self, now: float) -> bool | None:
        """True: serve it; False: refuse it; None: close the connection."""
        if self.last is not None:
            self.tokens = min(self.burst, self.tokens + (now - self.last) * self.per_s)
        self.last = now
        if self.tokens >= 1:
            self.tokens -= 1
            self.refused = 0
            return True
        self.refused += 1
        return None if self.refused >= self.flood else False


def _state(request: Request | WebSocket) -> Any:
    return request.app.state


def _player(request: Request, who: Visitor) -> int | None:
    """The person's owner id (None: ``arena play``'s local player); signs in first in a
    served contest."""
    if _state(request).config.local_play:
        return None
    if who.account is None:
        raise HTTPException(401, "sign in to play")
    return who.account.id


def opponents(request: Request) -> dict[str, BotSpec]:
    """Who may sit at a table: the sample bots (strongest first), then the contest's bots
    (active entries; a served contest only)."""
    found: dict[str, BotSpec] = {}
    for name in sample_bots_by_strength():
        with contextlib.suppress(BotSpecError):
            found[name] = resolve(name)
    state = _state(request)
    if state.config.local_play:
        return found
    with Session(state.engine) as session:
        ladder = ladder_row(session, state.config.ladder)
        for entry in entrants(session, ladder.id):
            if entry.retired or entry.paused:
                continue
            label = entry.version.label
            if label in found:
                continue
            with contextlib.suppress(BotSpecError, OSError):
                spec = resolve(entry.version.spec)
                if spec.path is not None and spec.path.exists():
                    found[label] = BotSpec(label, spec.path, spec.cls)
    return found


def _rules_choice(request: Request) -> tuple[list[str], str]:
    state = _state(request)
    default = state.config.extra.get("play_rules") or (
        "hk" if state.config.local_play else "contest"
    )
    choices = list(PRESETS) if state.config.local_play else ["contest", *PRESETS]
    return choices, default


def _form_context(request: Request, owner: int | None, **extra: Any) -> dict[str, Any]:
    choices, default = _rules_choice(request)
    return {
        "title": "Play",
        "presets": choices,
        "default_rules": default,
        "opponents": [{"name": n, "label": n} for n in opponents(request)],
        "seats": [0, 1, 2, 3],
        "recent": games.recent(_state(request).engine, owner),
        "local": _state(request).config.local_play,
        "error": None,
    } | extra


@router.get("/play", response_class=HTMLResponse, include_in_schema=False)
def play_page(request: Request, who: Who) -> Response:
    if not _state(request).config.local_play and who.account is None:
        return RedirectResponse("/login", status_code=303)
    return render(request, who, "play_new.html", _form_context(request, _player(request, who)))


Text = Annotated[str, Form(max_length=100)]


@router.post("/play", include_in_schema=False)
async def open_table(
    request: Request,
    who: Who,
    csrf: Annotated[str, Form(max_length=200)] = "",
    rules: Text = "",
    players: Text = "4",
    seat: Text = "0",
    hands: Text = "",
    opponent: Annotated[list[str] | None, Form(max_length=100)] = None,
) -> Response:
    check_csrf(who, csrf)
    owner = _player(request, who)
    try:
        setup = table_setup(request, who, rules, players, seat, hands, opponent or [])
        table = _state(request).tables.open(owner, setup, address=client_address(request))
    except (ValueError, TableLimit) as exc:
        context = _form_context(request, owner, error=str(exc))
        return render(request, who, "play_new.html", context, 400)
    return RedirectResponse(f"/play/{table.id}", status_code=303)


def table_setup(
    request: Request,
    who: Visitor,
    rules_name: str,
    players_text: str,
    seat_text: str,
    hands_text: str,
    picked: list[str],
) -> TableSetup:
    """The form's fields, each checked (a message naming the field when wrong)."""
    choices, default = _rules_choice(request)
    rules_name = rules_name or default
    if rules_name not in choices:
        raise ValueError(f"rules: choose one of {', '.join(choices)}")
    state = _state(request)
    rules = (
        contest_rules(state.engine, state.config.ladder)
        if rules_name == "contest"
        else RuleSet.preset(rules_name)
    )
    if players_text.strip() not in ("2", "3", "4"):
        raise ValueError("players: 2, 3 or 4")
    if int(players_text) != rules.players:
        rules = rules.replace(players=int(players_text))
    if hands_text.strip():
        if not hands_text.strip().isdigit() or not 1 <= int(hands_text) <= 100:
            raise ValueError("hands: a number from 1 to 100, or blank for the rules' own end")
        rules = rules.replace(match_end="hands", match_end_value=int(hands_text))
    if not seat_text.strip().isdigit() or not 0 <= int(seat_text) < rules.players:
        raise ValueError(f"seat: 0 to {rules.players - 1}")
    known = opponents(request)
    names = [p for p in picked if p]
    if not names:
        names = default_opponents(rules.players)
    names = names[: rules.players - 1]
    if len(names) != rules.players - 1:
        raise ValueError(f"opponents: choose {rules.players - 1}")
    for name in names:
        if name not in known:
            raise ValueError("opponents: choose among the listed bots")
    person = who.account.name if who.account is not None else "you"
    if not SEAT_NAME.fullmatch(person) or person in names:
        person = "you"
    move_ms = int(state.config.extra.get("human_move_ms", 60_000))
    return TableSetup(rules, int(seat_text), tuple(known[n] for n in names), person, move_ms)


def _table_for(request: Request | WebSocket, who: Visitor, table_id: str) -> Any:
    table = _state(request).tables.get(table_id)
    if table is None:
        return None
    if table.owner is not None and (who.account is None or who.account.id != table.owner):
        return None  # someone else's table is no table at all
    return table


def table_context(table: Any, request: Request) -> dict[str, Any]:
    setup = table.setup
    rules = setup.rules
    return {
        "id": table.id,
        "ws": f"/play/{table.id}/ws",
        "seat": setup.seat,
        "players": rules.players,
        "names": [b.name for b in setup.bots()],
        "rules": rules.to_dict(),
        "rules_text": games.rules_label(rules.to_dict()),
        "preset": nearest_preset(rules),
        "suit_order": rules.suit_order,
        "move_ms": setup.move_ms,
        "hint_bots": sample_bots_by_strength(),
        "replay_url": table.replay_url,
    }


@router.get("/play/{table_id}", response_class=HTMLResponse, include_in_schema=False)
def table_page(request: Request, who: Who, table_id: str) -> Response:
    _player(request, who)
    table = _table_for(request, who, table_id)
    if table is None:
        stored = games.load(_state(request).engine, table_id)
        if stored is not None and _may_see(request, who, stored[1]) and stored[0]["replay_url"]:
            return RedirectResponse(stored[0]["replay_url"], status_code=303)
        raise HTTPException(404, "no such table (games end when the server stops)")
    return render(
        request, who, "play.html", {"title": "Play", "table": table_context(table, request)}
    )


def _may_see(request: Request, who: Visitor, owner: int | None) -> bool:
    return _state(request).config.local_play or owner_or_organizer(who, owner)


@router.get("/play/{table_id}/replay", response_class=HTMLResponse, include_in_schema=False)
def game_replay(request: Request, who: Who, table_id: str) -> Response:
    from .replay_data import replay_data

    stored = games.load(_state(request).engine, table_id)
    if stored is None or not _may_see(request, who, stored[1]):
        raise HTTPException(404, "no such game")
    _game, _owner, events = stored
    if not events:
        raise HTTPException(404, "this game has no record (it did not end)")
    context = {"match": {"id": f"game {table_id[:8]}"}, "replay": replay_data(events)}
    return render(request, who, "match.html", context)


@router.websocket("/play/{table_id}/ws")
async def table_socket(ws: WebSocket, table_id: str) -> None:
    """The table's live connection: everything so far, then each update as it comes; the
    page's requests answered in turn.  Cross-site pages may not connect (the Origin must be
    this server), and only the table's owner may."""
    origin = ws.headers.get("origin")
    host = ws.headers.get("host", "")
    if origin is not None and urlsplit(origin).netloc != host:
        await ws.close(code=1008)
        return
    try:
        who = visitor(ws)
    except HTTPException:
        await ws.close(code=1008)
        return
    state = _state(ws)
    if not state.config.local_play and who.account is None:
        await ws.close(code=1008)
        return
    table = _table_for(ws, who, table_id)
    if table is None:
        await ws.close(code=1008)
        return
    await ws.accept()
    hint_bots = sample_bots_by_strength()
    past, queue = table.attach()
    sending = asyncio.Lock()  # one message at a time: updates and replies share the socket

    async def send(obj: dict[str, Any]) -> None:
        async with sending:
            await ws.send_text(json.dumps(obj))

    sender = asyncio.create_task(_send_updates(send, table, past, queue))
    bucket = RequestBucket()
    try:
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                break
            text = message.get("text")
            if who.account is not None and not await asyncio.to_thread(_still_signed_in, ws, who):
                await ws.close(code=1008)
                break
            allowed = bucket.take(asyncio.get_running_loop().time())
            if allowed is None:
                await ws.close(code=1008)
                break
            if not allowed:
                await send({"type": "error", "why": "too many requests: slow down"})
                continue
            reply = (
                await table.request(text, hint_bots)
                if isinstance(text, str)
                else {"type": "error", "why": "requests are JSON text"}
            )
            await send(reply)
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        sender.cancel()
        table.detach(queue)


def _still_signed_in(ws: WebSocket, who: Visitor) -> bool:
    """The sign-in that opened the socket still holds: a password change or reset ends the
    account's other sessions and revokes its tokens, and their open sockets act no more."""
    try:
        now = visitor(ws)
    except HTTPException:
        return False
    return now.account is not None and who.account is not None and now.account.id == who.account.id


async def _send_updates(send: Any, table: Any, past: list[Any], queue: Any) -> None:
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        await send(table.hello() | {"replaying": bool(past)})
        for update in past:
            await send(update)
        await send({"type": "live"})
        while True:
            await send(await queue.get())
