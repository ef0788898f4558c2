"""How a page is rendered: the templates (Jinja2, autoescaped) and :func:`render`, which
gives every template the visitor and its form token.  A module of its own so that the app
and every view import it, and nothing imports the app back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from .security import Visitor

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=str(HERE / "templates"))


def render(
    request: Request, who: Visitor, name: str, context: dict[str, Any], status: int = 200
) -> HTMLResponse:
    """A page: the template with the visitor and its form token."""
    return templates.TemplateResponse(
        request,
        name,
        {
            "user": who.account,
            "csrf": who.csrf,
            "title": "",
            "local_play": request.app.state.config.local_play,
            **context,
        },
        status_code=status,
    )
