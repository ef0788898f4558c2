"""Signing up (with the contest's join code), in and out, and the account page: a new
password, API tokens for scripts, one's own bots and uploads."""

from __future__ import annotations

import hmac
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from . import answers
from .accounts import (
    AccountError,
    attempt_keys,
    authenticate,
    create_token,
    create_user,
    end_session,
    list_tokens,
    name_key,
    revoke_token,
    set_password,
    start_session,
)
from .contest import contest_settings
from .models import Upload
from .pages import render
from .security import (
    SESSION_COOKIE,
    Visitor,
    check_csrf,
    client_address,
    cookie_options,
    require_account,
    visitor,
)

router = APIRouter()
Who = Annotated[Visitor, Depends(visitor)]
Field = Annotated[str, Form(max_length=300)]
Csrf = Annotated[str, Form(max_length=200)]


def _password_attempt(request: Request, name: str) -> str:
    """Count one password attempt for ``name`` from this address (429 when its counts are
    full: see ``accounts.attempt_keys``); the key a right password clears."""
    state = request.app.state
    address = client_address(request)
    wait = state.login_limiter.hit(*attempt_keys(name, address, state.config.login_limits))
    if wait:
        raise HTTPException(
            429,
            f"too many password attempts from your address: wait {int(wait) + 1} s",
            headers={"retry-after": str(int(wait) + 1)},
        )
    return name_key(name, address)


def _signed_in(request: Request, account_id: int, to: str) -> Response:
    token, _ = start_session(request.app.state.engine, account_id)
    response = RedirectResponse(to, status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=14 * 86400,
        **cookie_options(request.app.state.config.secure_cookies),
    )
    return response


@router.get("/login", response_class=HTMLResponse, include_in_schema=False)
def login_page(request: Request, who: Who) -> Response:
    return render(request, who, "login.html", {"title": "Sign in", "name": ""})


@router.post("/login", include_in_schema=False)
def login(request: Request, who: Who, name: Field, password: Field, csrf: Csrf = "") -> Response:
    check_csrf(who, csrf)
    key = _password_attempt(request, name)
    account = authenticate(request.app.state.engine, name, password)
    if account is None:
        return render(
            request, who, "login.html",
            {"title": "Sign in", "name": name, "error": "wrong name or password"}, 401,
        )  # fmt: skip
    request.app.state.login_limiter.forget(key)
    return _signed_in(request, account.id, "/account" if account.must_change_password else "/")


@router.get("/signup", response_class=HTMLResponse, include_in_schema=False)
def signup_page(request: Request, who: Who) -> Response:
    return render(request, who, "signup.html", {"title": "Sign up", "name": ""})


@router.post("/signup", include_in_schema=False)
def signup(
    request: Request, who: Who, name: Field, password: Field, join_code: Field, csrf: Csrf = ""
) -> Response:
    """A participant's account, for whoever holds the contest's join code."""
    check_csrf(who, csrf)
    state = request.app.state
    wait = state.login_limiter.hit(
        (f"addr:{client_address(request)}", state.config.login_limits[1])
    )
    if wait:
        raise HTTPException(429, f"too many attempts: wait {int(wait) + 1} s")
    code = contest_settings(state.engine, state.config.ladder).get("join_code") or ""
    if not code or not hmac.compare_digest(join_code.strip().encode(), code.encode()):
        ctx = {"title": "Sign up", "name": name, "error": "that join code is not this contest's"}
        return render(request, who, "signup.html", ctx, 403)
    try:
        account, _ = create_user(state.engine, name, "participant", password)
    except AccountError as exc:
        return render(
            request, who, "signup.html", {"title": "Sign up", "name": name, "error": str(exc)}, 400
        )
    return _signed_in(request, account.id, "/upload")


@router.post("/logout", include_in_schema=False)
def logout(request: Request, who: Who, csrf: Csrf = "") -> Response:
    check_csrf(who, csrf)
    if who.session_token:
        end_session(request.app.state.engine, who.session_token)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


# ----- the account page ---------------------------------------------------------------------
def account_context(request: Request, who: Visitor, **extra: Any) -> dict[str, Any]:
    account = require_account(who)
    engine = request.app.state.engine
    with Session(engine) as session:
        mine = session.scalars(
            select(Upload).where(Upload.user_id == account.id).order_by(Upload.id.desc()).limit(30)
        )
        uploads = [
            {
                "id": u.id,
                "bot": u.bot_name,
                "status": u.status,
                "filename": u.filename,
                "created": u.created.isoformat() if u.created else "",
            }
            for u in mine
        ]
    return {
        "title": "Your account",
        "tokens": list_tokens(engine, account.id),
        "uploads": uploads,
        **extra,
    }


@router.get("/account", response_class=HTMLResponse, include_in_schema=False)
def account_page(request: Request, who: Who) -> Response:
    return render(request, who, "account.html", account_context(request, who))


@router.post("/account/password", include_in_schema=False)
def change_password(
    request: Request, who: Who, current: Field, new: Field, csrf: Csrf = ""
) -> Response:
    """A new password.  The current one is asked for and its wrong guesses count as
    sign-in attempts do (per name and address), so a stolen session cannot try passwords
    faster than the sign-in page lets anyone.  The change revokes every API token and ends
    every other session (``accounts.set_password``)."""
    check_csrf(who, csrf)
    account = require_account(who)
    engine = request.app.state.engine
    key = _password_attempt(request, account.name)
    if authenticate(engine, account.name, current) is None:
        ctx = account_context(request, who, error="the current password is wrong")
        return render(request, who, "account.html", ctx, 403)
    request.app.state.login_limiter.forget(key)
    try:
        set_password(engine, account.id, new, keep_session=who.session_token)
    except AccountError as exc:
        return render(
            request, who, "account.html", account_context(request, who, error=str(exc)), 400
        )
    return RedirectResponse("/account?changed=1", status_code=303)


@router.post("/account/tokens", include_in_schema=False)
def new_token(
    request: Request, who: Who, label: Annotated[str, Form(max_length=60)] = "", csrf: Csrf = ""
) -> Response:
    check_csrf(who, csrf)
    account = require_account(who)
    try:
        token = create_token(request.app.state.engine, account.id, label)
    except AccountError as exc:
        return render(
            request, who, "account.html", account_context(request, who, error=str(exc)), 400
        )
    return render(request, who, "account.html", account_context(request, who, new_token=token))


@router.post("/account/tokens/{token_id}/revoke", include_in_schema=False)
def drop_token(request: Request, who: Who, token_id: int, csrf: Csrf = "") -> Response:
    check_csrf(who, csrf)
    account = require_account(who)
    try:
        revoke_token(request.app.state.engine, account.id, token_id)
    except AccountError as exc:
        raise HTTPException(404, str(exc)) from None
    return RedirectResponse("/account", status_code=303)


@router.get("/api/me", tags=["account"], response_model=answers.Me)
def me(who: Who) -> Response:
    """Who the API token (or session) belongs to."""
    account = require_account(who)
    return answers.answer({"name": account.name, "role": account.role})
