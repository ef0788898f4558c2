"""Who is asking and may they: the visitor of each request (signed in by cookie, by API
token, or anonymous), CSRF tokens on every form, response headers that keep a page from
running anything but the app's own scripts, and a cap on request bodies.

CSRF: a signed-in browser's forms carry its session's token; an anonymous browser's (sign
in, sign up) carry a random token also set as an HttpOnly cookie, and the two must match
(the double-submit pattern; SameSite=Lax cookies stop the cross-site POST before that).  A
request with an API token carries no cookie a third-party page could ride on, so it needs
no CSRF token.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..addresses import peer_key
from .accounts import Account, session_account, token_account

SESSION_COOKIE = "arena_session"
CSRF_COOKIE = "arena_csrf"
FORM_BODY_CAP = 256 * 1024
"""Bytes of any request body but an upload's (a form field is never bigger)."""

HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
        b"script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
        b"form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
]


@dataclass(frozen=True)
class Visitor:
    """The account behind a request (None: anonymous) and the CSRF token its forms carry."""

    account: Account | None
    csrf: str
    session_token: str | None = None
    by_api_token: bool = False

    @property
    def is_organizer(self) -> bool:
        return self.account is not None and self.account.is_organizer


def visitor(request: HTTPConnection) -> Visitor:
    """The request's visitor (a FastAPI dependency of every page, API route and socket: the
    only way a view learns who asks).  A bearer token that is not valid is an error rather
    than an anonymous visit, so a script learns its token is wrong.  An account whose
    password is one-time gets no further than choosing a new one (:func:`password_due`)."""
    engine = request.app.state.engine
    auth = request.headers.get("authorization", "")
    if auth:
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise HTTPException(401, "Authorization must be 'Bearer <API token>'")
        account = token_account(engine, token.strip())
        if account is None:
            raise HTTPException(401, "this API token is not valid (revoked or mistyped)")
        password_due(request, account, by_api_token=True)
        return Visitor(account, "", None, True)
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        found = session_account(engine, cookie)
        if found is not None:
            password_due(request, found[0], by_api_token=False)
            return Visitor(found[0], found[1], cookie)
    return Visitor(None, getattr(request.state, "anon_csrf", ""))


ACCOUNT_PAGE = "/account"
WHILE_PASSWORD_DUE = {("GET", ACCOUNT_PAGE), ("POST", "/account/password"), ("POST", "/logout")}
"""What an account with a one-time password may do: read the account page, set a new
password, sign out.  Nothing else, by any route: pages, the API, uploads, tokens, tables and
their sockets."""
PASSWORD_DUE = "set a new password first: your password is a one-time password (see /account)"


def password_due(request: HTTPConnection, account: Account, by_api_token: bool) -> None:
    """Refuse everything but :data:`WHILE_PASSWORD_DUE` to an account whose password must
    change.  Checked here, in the one dependency every view uses to learn its visitor, so a
    new view cannot forget it: a one-time password (printed, handed over, maybe seen by
    others) buys nothing but its own replacement.  A page is sent to the account page; the
    API, a script's token and a WebSocket are refused (403, the reason as JSON)."""
    if not account.must_change_password:
        return
    page = request.scope["type"] == "http"
    path = request.url.path
    if page and not by_api_token and (request.scope["method"], path) in WHILE_PASSWORD_DUE:
        return
    if by_api_token or not page or path.startswith("/api"):
        raise HTTPException(403, PASSWORD_DUE)
    raise HTTPException(303, PASSWORD_DUE, headers={"location": ACCOUNT_PAGE})


address_key = peer_key
"""The address a visitor is counted under (``arena.addresses``: IPv4 as it is, IPv6 by
its /64) — the same rule as the referee's gate and the web server's connection caps."""


def client_address(request: HTTPConnection) -> str:
    """The visitor's address key: the connection's peer as the server saw it (the ASGI
    ``client``), never a header a visitor writes.  ``arena serve`` runs uvicorn with
    ``proxy_headers=False``, so ``X-Forwarded-For`` is only believed when whoever starts the
    server chose to trust a proxy."""
    return address_key(request.client.host) if request.client else "?"


def check_csrf(who: Visitor, submitted: str | None) -> None:
    """A form's token must be its visitor's (constant-time comparison)."""
    if who.by_api_token:
        return
    if not submitted or not who.csrf or not hmac.compare_digest(submitted, who.csrf):
        raise HTTPException(
            403, "the form's security token is missing or out of date: reload the page and retry"
        )


def owner_or_organizer(who: Visitor, owner_id: int | None) -> bool:
    """What is private to its owner (a bot's logs and fault details, a person's games):
    its owner's and the organizer's, nobody else's."""
    return who.account is not None and (who.is_organizer or who.account.id == owner_id)


def require_account(who: Visitor) -> Account:
    if who.account is None:
        raise HTTPException(401, "sign in first")
    return who.account


def require_organizer(who: Visitor) -> Account:
    account = require_account(who)
    if not account.is_organizer:
        raise HTTPException(403, "only the organizer may do this")
    return account


class Guard:
    """ASGI middleware: security headers on every response, an anonymous CSRF cookie for
    browsers that have none, and request bodies capped (an upload's at the contest's
    packed-size limit, anything else at ``FORM_BODY_CAP``) before the app reads them."""

    def __init__(self, app: ASGIApp, upload_paths: tuple[str, ...], secure: bool) -> None:
        self.app = app
        self.upload_paths = upload_paths
        self.secure = secure
        self.upload_cap = 5 * 2**20

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = self.upload_cap + 64 * 1024 if scope["path"] in self.upload_paths else FORM_BODY_CAP
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > cap):
            await _refuse(send, 413, f"the request is larger than {cap} bytes")
            return
        anon = _cookie(headers.get(b"cookie", b""), CSRF_COOKIE)
        new_anon = None
        if not anon or len(anon) > 100:
            anon = new_anon = secrets.token_urlsafe(24)
        scope.setdefault("state", {})["anon_csrf"] = anon
        received = 0
        started = False

        async def capped_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap:
                    raise BodyTooLarge(cap)
            return message

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                extra = list(HEADERS)
                if new_anon is not None:
                    cookie = f"{CSRF_COOKIE}={new_anon}; Path=/; HttpOnly; SameSite=Lax"
                    if self.secure:
                        cookie += "; Secure"
                    extra.append((b"set-cookie", cookie.encode()))
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        try:
            await self.app(scope, capped_receive, send_with_headers)
        except BodyTooLarge as exc:
            if not started:
                await _refuse(send, 413, str(exc))


class BodyTooLarge(Exception):
    def __init__(self, cap: int) -> None:
        super().__init__(f"the request is larger than {cap} bytes")


def _cookie(header: bytes, name: str) -> str | None:
    for part in header.decode("latin-1").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


async def _refuse(send: Send, status: int, reason: str) -> None:
    body = ('{"error": "' + reason + '"}').encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *HEADERS],
        }
    )
    await send({"type": "http.response.body", "body": body})


def cookie_options(secure: bool) -> dict[str, Any]:
    return {"httponly": True, "samesite": "lax", "secure": secure, "path": "/"}
