"""The server answers only to its own names (``Host``), and its WebSockets only to pages of
its own origin (``Origin``).

Why: DNS rebinding.  A page of another site (``http://evil.test:8000``) can make its own
name resolve to 127.0.0.1 a moment after it loaded; the browser then sends that page's
requests to the arena on this machine and lets the page read the answers (same origin, as
far as the browser knows), its WebSocket included.  ``arena play`` has no accounts: such a
page could open a table and play it.  What gives it away is the ``Host`` header, which
names the attacker's site.  So a request naming a host the server does not answer to is
refused (400, one line saying why), and a WebSocket handshake whose ``Origin`` is not the
page's own host too (403): a page of any other origin, on this machine or not.

Names answered to: on a loopback bind, 127.0.0.1, localhost and ::1; on a specific address,
that address; on every interface (0.0.0.0, ::), any IP address — an address in ``Host`` is
no rebinding, the page's origin is then that address itself — and localhost; always the
names given (``arena serve --allowed-host NAME``: the server's DNS names, or the name a TLS
proxy in front passes on).  ``*`` answers to any name (what a server did before).  The port
in ``Host`` is not compared: behind a proxy it is the proxy's.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class AllowedHosts:
    """The host names a server answers to (lowercase, no port, IPv6 without brackets)."""

    names: frozenset[str]
    any_address: bool = False  # any IP literal (a server on every interface)
    anything: bool = False  # '*': no check at all

    def allows(self, host: str) -> bool:
        if self.anything or host in self.names:
            return True
        return self.any_address and _is_address(host)

    def shown(self) -> str:
        names = sorted(self.names)
        if self.any_address:
            names.insert(0, "its IP addresses")
        return ", ".join(names)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def host_name(value: str) -> str:
    """A ``Host`` header's (or URL authority's) host, lowercase, without port or brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[1:end] if end > 0 else value
    if value.count(":") == 1:
        value = value.split(":", 1)[0]
    return value.rstrip(".")


def allowed_hosts(bind: str, port: int, extra: Iterable[str] = ()) -> AllowedHosts:
    """The names a server bound to ``bind`` answers to, with ``extra`` (``*``: any)."""
    given = [host_name(name) for name in extra if name.strip()]
    if "*" in given:
        return AllowedHosts(frozenset(given), anything=True)
    host = host_name(bind)
    names = set(given)
    any_address = False
    if host in ("", "0.0.0.0", "::"):
        any_address = True
        names.add("localhost")
    elif host == "localhost" or _is_loopback(host):
        names.update(LOOPBACK_NAMES)
        names.add(host)
    else:
        names.add(host)
    return AllowedHosts(frozenset(names), any_address)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class HostCheck:
    """ASGI middleware: refuse requests for other hosts, and cross-origin WebSockets."""

    def __init__(self, app: ASGIApp, allowed: AllowedHosts, hint: str = "") -> None:
        self.app = app
        self.allowed = allowed
        self.hint = hint or "arena serve --allowed-host NAME adds a name"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket") or self.allowed.anything:
            await self.app(scope, receive, send)
            return
        headers = {k: v for k, v in scope.get("headers") or []}
        raw_host = headers.get(b"host", b"").decode("latin-1")
        host = host_name(raw_host)
        reason = None
        if not raw_host:
            reason = "the request names no host (Host header)"
        elif not self.allowed.allows(host):
            reason = (
                f"this server answers to {self.allowed.shown()}, not {_shown(host)} "
                f"(a page of another site may be trying to reach it; {self.hint})"
            )
        elif kind == "websocket":
            origin = headers.get(b"origin", b"").decode("latin-1")
            if origin and (
                origin == "null" or urlsplit(origin).netloc.lower() != raw_host.strip().lower()
            ):
                reason = f"a page of {_shown(origin)} may not open this server's WebSocket"
        if reason is None:
            await self.app(scope, receive, send)
        elif kind == "http":
            await _refuse_http(send, 400, reason)
        else:
            await _refuse_websocket(scope, receive, send, reason)


def _shown(text: str, cap: int = 100) -> str:
    flat = "".join(c if c.isprintable() and c not in "\r\n" else "?" for c in text)
    return repr(flat if len(flat) <= cap else flat[: cap - 1] + "…")


_HEADERS = [
    (b"content-type", b"text/plain; charset=utf-8"),
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-store"),
]


async def _refuse_http(send: Send, status: int, reason: str) -> None:
    body = (reason + "\n").encode()
    headers = [*_HEADERS, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _refuse_websocket(scope: Scope, receive: Receive, send: Send, reason: str) -> None:
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    if "websocket.http.response" in (scope.get("extensions") or {}):
        body = (reason + "\n").encode()
        headers = [*_HEADERS, (b"content-length", str(len(body)).encode())]
        await send({"type": "websocket.http.response.start", "status": 403, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008})
