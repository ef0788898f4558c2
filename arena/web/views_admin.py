"""The organizer's page: the contest's rules (until the first match), the join code, upload
limits, participants' accounts, pausing, resuming or retiring any bot, and the final
evaluation (``arena.ladder.final``: asked for here, played by the contest's player)."""

from __future__ import annotations

import json
import secrets
from typing import Annotated, Any

import anyio.from_thread
from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from bigtwo import PRESETS, RulesError, RuleSet
from bigtwo.jsontext import loads_bounded

from ..ladder.final import MAX_BUDGET, MAX_TOP
from ..ladder.final import reopen as reopen_final
from ..ladder.final import start as start_final
from ..ladder.final import view as final_view
from ..ladder.queries import StoreError, entrants, pause, retire
from .accounts import AccountError, create_user, reset_password
from .contest import contest_settings, ladder_row, played_any, set_rules, update_settings
from .pages import render
from .player import MATCHES_PER_BOT
from .security import Visitor, check_csrf, require_organizer, visitor
from .uploads import UploadLimits
from .worker_state import worker_info

router = APIRouter()
Who = Annotated[Visitor, Depends(visitor)]
Csrf = Annotated[str, Form(max_length=200)]


def admin_context(request: Request, **extra: Any) -> dict[str, Any]:
    state = request.app.state
    engine, name = state.engine, state.config.ladder
    settings = contest_settings(engine, name)
    with Session(engine) as session:
        ladder = ladder_row(session, name)
        rules = ladder.rules
        bots = [
            {
                "label": e.version.label,
                "bot": e.version.bot.name,
                "retired": e.retired,
                "paused": e.paused,
            }
            for e in entrants(session, ladder.id)
        ]
    worker = worker_info(engine, name)  # the worker runs in a process of its own
    final = final_view(engine, name)
    return {
        "title": "Organize",
        "join_code": settings.get("join_code", ""),
        "limits": UploadLimits.from_dict(settings.get("upload_limits", {})),
        "rules_json": json.dumps(rules, indent=1),
        "presets": list(PRESETS),
        "rules_locked": played_any(engine, name),
        "bots": bots,
        "playing": state.config.play or worker.alive,
        "matches_per_bot": settings.get("matches_per_bot", MATCHES_PER_BOT),
        "player_error": worker.last_error,
        "final": final,
        **extra,
    }


@router.get("/admin", response_class=HTMLResponse, include_in_schema=False)
def admin_page(request: Request, who: Who) -> Response:
    require_organizer(who)
    return render(request, who, "admin.html", admin_context(request))


@router.post("/admin/rules", include_in_schema=False)
def admin_rules(
    request: Request,
    who: Who,
    preset: Annotated[str, Form(max_length=20)] = "",
    rules_json: Annotated[str, Form(max_length=20000)] = "",
    csrf: Csrf = "",
) -> Response:
    """The contest's rules: a preset, or a JSON object of options (as ``--rules FILE``)."""
    check_csrf(who, csrf)
    require_organizer(who)
    try:
        if preset:
            if preset not in PRESETS:
                raise RulesError(f"no preset {preset!r} (presets: {', '.join(PRESETS)})")
            rules = RuleSet.preset(preset)
        else:
            try:
                data = loads_bounded(rules_json)
            except ValueError as exc:
                raise RulesError(f"the rules are not JSON: {exc}") from None
            if not isinstance(data, dict):
                raise RulesError("the rules are a JSON object of options")
            rules = RuleSet.from_dict(data)
        set_rules(request.app.state.engine, request.app.state.config.ladder, rules)
    except (RulesError, ValueError) as exc:
        return render(request, who, "admin.html", admin_context(request, error=str(exc)), 400)
    return RedirectResponse("/admin?saved=rules", status_code=303)


@router.post("/admin/join-code", include_in_schema=False)
def admin_join_code(
    request: Request, who: Who, code: Annotated[str, Form(max_length=64)] = "", csrf: Csrf = ""
) -> Response:
    """A new join code (the one given, or a random one when empty)."""
    check_csrf(who, csrf)
    require_organizer(who)
    code = code.strip() or secrets.token_urlsafe(6)
    if not (4 <= len(code) <= 64 and code.isascii() and code.isprintable() and " " not in code):
        why = "a join code is 4-64 printable ASCII characters, no spaces"
        return render(request, who, "admin.html", admin_context(request, error=why), 400)
    update_settings(request.app.state.engine, request.app.state.config.ladder, join_code=code)
    return RedirectResponse("/admin?saved=code", status_code=303)


@router.post("/admin/limits", include_in_schema=False)
def admin_limits(
    request: Request,
    who: Who,
    max_packed_mib: Annotated[float, Form(gt=0, le=500)],
    max_unpacked_mib: Annotated[float, Form(gt=0, le=5000)],
    max_files: Annotated[int, Form(gt=0, le=100000)],
    csrf: Csrf = "",
) -> Response:
    check_csrf(who, csrf)
    require_organizer(who)
    state = request.app.state
    old = UploadLimits.from_dict(
        contest_settings(state.engine, state.config.ladder)["upload_limits"]
    )
    try:
        limits = UploadLimits.from_dict(
            {
                **old.to_dict(),
                "max_packed": int(max_packed_mib * 2**20),
                "max_unpacked": int(max_unpacked_mib * 2**20),
                "max_files": max_files,
            }
        )
    except ValueError as exc:
        return render(request, who, "admin.html", admin_context(request, error=str(exc)), 400)
    update_settings(state.engine, state.config.ladder, upload_limits=limits.to_dict())
    guard = state.guard.get("guard")
    if guard is not None:
        guard.upload_cap = limits.max_packed
    return RedirectResponse("/admin?saved=limits", status_code=303)


@router.post("/admin/pace", include_in_schema=False)
def admin_pace(
    request: Request,
    who: Who,
    matches_per_bot: Annotated[int, Form(ge=1, le=1_000_000)],
    csrf: Csrf = "",
) -> Response:
    """How many matches each bot plays before the player rests (until a new upload)."""
    check_csrf(who, csrf)
    require_organizer(who)
    state = request.app.state
    update_settings(state.engine, state.config.ladder, matches_per_bot=matches_per_bot)
    if state.wake is not None:
        state.wake()
    return RedirectResponse("/admin?saved=pace", status_code=303)


@router.post("/admin/final", include_in_schema=False)
def admin_final(
    request: Request,
    who: Who,
    top: Annotated[int, Form(ge=1, le=MAX_TOP)],
    budget: Annotated[int, Form(ge=1, le=MAX_BUDGET)],
    csrf: Csrf = "",
) -> Response:
    """Ask the contest's player for the final evaluation (as ``arena ladder final``): fresh
    deals on the top ``top`` until their order is separated or ``budget`` matches are
    played; then the standings are final.  Asked again while under way: the new limits."""
    check_csrf(who, csrf)
    require_organizer(who)
    state = request.app.state
    try:
        start_final(state.engine, state.config.ladder, top, budget)
    except StoreError as exc:
        return render(request, who, "admin.html", admin_context(request, error=str(exc)), 400)
    if state.wake is not None:
        state.wake()
    return RedirectResponse("/admin?saved=final", status_code=303)


@router.post("/admin/final/reopen", include_in_schema=False)
def admin_final_reopen(request: Request, who: Who, csrf: Csrf = "") -> Response:
    """Reopen the contest: no longer final (or its final evaluation stopped); regular
    rounds go on.  The final matches played keep counting."""
    check_csrf(who, csrf)
    require_organizer(who)
    state = request.app.state
    reopen_final(state.engine, state.config.ladder)
    if state.wake is not None:
        state.wake()
    return RedirectResponse("/admin?saved=reopened", status_code=303)


@router.post("/admin/users", include_in_schema=False)
def admin_new_user(
    request: Request, who: Who, name: Annotated[str, Form(max_length=40)], csrf: Csrf = ""
) -> Response:
    """A participant's account with a one-time password (shown once, changed at first
    sign-in): for classes where students do not sign up themselves."""
    check_csrf(who, csrf)
    require_organizer(who)
    try:
        account, password = create_user(request.app.state.engine, name, "participant")
    except AccountError as exc:
        return render(request, who, "admin.html", admin_context(request, error=str(exc)), 400)
    return render(
        request,
        who,
        "admin.html",
        admin_context(request, created={"name": account.name, "password": password}),
    )


@router.post("/admin/users/reset", include_in_schema=False)
def admin_reset_password(
    request: Request, who: Who, name: Annotated[str, Form(max_length=40)], csrf: Csrf = ""
) -> Response:
    """A participant's forgotten password: a new one-time password (shown once), which
    opens nothing but choosing a new one; the account's API tokens are revoked and its
    sessions ended (whoever held the old password keeps nothing)."""
    check_csrf(who, csrf)
    require_organizer(who)
    try:
        account, password = reset_password(request.app.state.engine, name.strip())
    except AccountError as exc:
        return render(request, who, "admin.html", admin_context(request, error=str(exc)), 400)
    tables = request.app.state.tables  # on the event loop: tables are the loop's
    anyio.from_thread.run_sync(tables.end_for, account.id, "the account's password was reset")
    created = {"name": account.name, "password": password, "what": "reset"}
    return render(request, who, "admin.html", admin_context(request, created=created))


ACTIONS = {"pause": (pause, False), "resume": (pause, True),
           "retire": (retire, False), "unretire": (retire, True)}  # fmt: skip
"""Each action and the ladder's own operation (``arena ladder retire`` is the same), which
also withdraws the bot's pending matches or puts them back."""


@router.post("/admin/bots/{label}/{action}", include_in_schema=False)
def admin_bot(request: Request, who: Who, label: str, action: str, csrf: Csrf = "") -> Response:
    check_csrf(who, csrf)
    require_organizer(who)
    if action not in ACTIONS:
        raise HTTPException(404, f"no action {action!r} (pause, resume, retire, unretire)")
    operation, undo = ACTIONS[action]
    state = request.app.state
    with Session(state.engine) as session:
        ladder_id = ladder_row(session, state.config.ladder).id
    try:
        operation(state.engine, ladder_id, label, undo)
    except StoreError as exc:
        raise HTTPException(404, str(exc)) from None
    if state.wake is not None:
        state.wake()
    return RedirectResponse("/admin?saved=bots", status_code=303)
