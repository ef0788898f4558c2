"""The web arena's application: ``create_app(config)`` builds the FastAPI app that
``arena serve`` runs under uvicorn (and the tests run on a real socket).

Pages are rendered on the server with Jinja2 (autoescaped: everything a participant or a bot
wrote is shown as text); each page has a JSON twin under ``/api``, described by the
framework's OpenAPI document (``/openapi.json``, read as a page at ``/api``).  Every asset is
served from ``arena/web/static``: no CDN, so an offline contest server works.  The
framework's own documentation pages load their scripts from a CDN, so they are off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..ladder.store import open_engine
from ..referee.time_control import TimeControl
from . import games
from .accounts import RateLimiter
from .contest import StandingsCache, WebConfig, contest_settings, ensure_contest
from .pages import HERE, render
from .security import Guard, Visitor
from .table_budget import PlayLimits
from .tables import Tables
from .uploads import UploadLimits
from .worker_state import nudge

UPLOAD_PATHS = ("/upload", "/api/bots")


def wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api")


def one_line(text: Any, cap: int = 300) -> str:
    """A reason as one printable line (it may quote what a visitor sent)."""
    flat = " ".join(str(text).split())
    flat = "".join(c if c.isprintable() else "?" for c in flat)
    return flat if len(flat) <= cap else flat[: cap - 1] + "…"


def create_app(config: WebConfig) -> FastAPI:
    engine = open_engine(config.db)
    ensure_contest(engine, config)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        player = None
        games.interrupt_unfinished(engine)
        first = config.extra.get("first_table")  # arena play: the table its URL names
        if first is not None:
            state.tables.open(None, first["setup"], table_id=first["id"])
        if config.play:  # the worker in a child process (arena worker), never in this one
            from .supervisor import WorkerProcess

            player = app.state.player = WorkerProcess(config)
            player.start()
        try:
            yield
        finally:
            await state.tables.close()
            if player is not None:
                await asyncio.to_thread(player.stop)
            state.standings.fitter.close()
            engine.dispose()

    app = FastAPI(
        title="Big Two Arena",
        summary="The web arena's JSON API: each page's data, bot uploads for scripts.",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    state = app.state
    state.config = config
    state.engine = engine
    state.standings = StandingsCache()
    state.login_limiter = RateLimiter(300.0)
    state.upload_limiter = RateLimiter(3600.0)
    state.wake = _Nudge(engine, config.ladder)  # tells the worker there is new work
    settings = contest_settings(engine, config.ladder)
    state.tables = Tables(
        sandbox=config.sandbox,
        time_control=TimeControl(**settings.get("time_control", {})),
        store_start=lambda table: games.started(engine, table),
        store_end=lambda table, summary, record: games.ended(engine, table, summary, record),
        limits=PlayLimits.from_settings(config.extra, config.sandbox),
    )
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    from . import views_account, views_admin, views_ladder, views_play, views_upload

    if config.local_play:

        @app.get("/", include_in_schema=False)
        def home() -> Response:
            return RedirectResponse("/play", status_code=303)

    for module in (views_play, views_ladder, views_account, views_upload, views_admin):
        app.include_router(module.router)

    guard_holder: dict[str, Guard] = {}

    def guard_factory(inner: Any) -> Guard:
        guard = Guard(inner, UPLOAD_PATHS, config.secure_cookies)
        limits = UploadLimits.from_dict(contest_settings(engine, config.ladder)["upload_limits"])
        guard.upload_cap = limits.max_packed
        guard_holder["guard"] = guard
        return guard

    app.add_middleware(_Factory, factory=guard_factory)
    state.guard = guard_holder

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        reason = one_line(exc.detail)
        headers = getattr(exc, "headers", None) or {}  # a redirect's location, a Retry-After
        if wants_json(request):
            return JSONResponse({"error": reason}, status_code=exc.status_code, headers=headers)
        from .security import visitor

        try:
            who = visitor(request)
        except HTTPException:
            who = Visitor(None, "")
        page = render(
            request, who, "error.html",
            {"status": exc.status_code, "title": _status_title(exc.status_code), "reason": reason},
            exc.status_code,
        )  # fmt: skip
        page.headers.update(headers)
        return page

    @app.exception_handler(RequestValidationError)
    async def bad_input(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("body", "query"))
        reason = one_line(f"{where}: {first.get('msg', 'invalid input')}".strip(": "))
        return await http_error(request, HTTPException(422, reason))

    return app


class _Factory:
    """Starlette builds middleware lazily; this hands the built Guard back to the app so
    the organizer's new upload limit reaches it."""

    def __init__(self, app: Any, factory: Any) -> None:
        self.inner = factory(app)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.inner(scope, receive, send)


class _Nudge:
    """``state.wake()``: tell the worker (in its own process) there is new work, through the
    database, off the caller's thread (a page's event loop never waits for the write)."""

    def __init__(self, engine: Any, ladder: str) -> None:
        self.engine, self.ladder = engine, ladder

    def __call__(self) -> None:
        threading.Thread(target=self._write, name="arena-nudge", daemon=True).start()

    def _write(self) -> None:
        try:
            nudge(self.engine, self.ladder)
        except Exception:  # the worker still polls for uploads on its own
            logging.getLogger("arena.web").warning("could not nudge the worker", exc_info=True)


def _status_title(status: int) -> str:
    """The page heading for an error: the status's name a person reads ("Bad Request"),
    the bare number only when the status has no name."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return f"Error {status}"
