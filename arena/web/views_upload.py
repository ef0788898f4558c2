"""Uploading a bot: the page's form and the API's ``POST /api/bots``, the same path.

Nothing of an upload is written anywhere before ``uploads.check_upload`` passed it (size,
member count, compression ratio, names, links, devices), and that check runs in a
short-lived child process under CPU, memory and time limits (``archive_check``), never in
the server; nothing of it runs outside the sandbox: the player unpacks it into its folder
and smoke-tests it there (``player``).
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, HTTPException, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from . import answers
from .archive_check import CheckerBusy, CheckerUnavailable, archive_checker
from .botstore import NameTaken, check_bot_name, store_upload
from .contest import contest_settings
from .models import Upload
from .pages import render
from .security import Visitor, check_csrf, client_address, require_account, visitor
from .uploads import UploadLimits, UploadRefused

router = APIRouter()
Who = Annotated[Visitor, Depends(visitor)]


async def receive_upload(
    request: Request, who: Visitor, name: str, file: UploadFile
) -> tuple[int, bool]:
    """Check and keep an upload; an HTTPException says why not."""
    account = require_account(who)
    state = request.app.state
    address = client_address(request)  # IPv6 by /64, as every per-address limit
    per_account, per_address = state.config.upload_limits
    wait = state.upload_limiter.hit(
        (f"user:{account.id}", per_account), (f"addr:{address}", per_address)
    )
    if wait:
        raise HTTPException(429, f"too many uploads: wait {int(wait) + 1} s")
    try:
        name = check_bot_name(name)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None
    limits = UploadLimits.from_dict(
        contest_settings(state.engine, state.config.ladder)["upload_limits"]
    )
    data = await file.read(limits.max_packed + 1)
    try:  # in a child process, awaited: the archive is never parsed in the server
        checked = await archive_checker(state).check(file.filename or "", data, limits)
    except UploadRefused as exc:
        raise HTTPException(400, f"upload refused: {exc}") from None
    except (CheckerBusy, CheckerUnavailable) as exc:
        raise HTTPException(503, str(exc), headers={"Retry-After": "60"}) from None
    try:  # (packing up to 50 MiB is no work for the event loop either)
        upload_id, new = await asyncio.to_thread(
            store_upload, state.engine, account.id, name, file.filename or "", checked
        )
    except NameTaken as exc:
        raise HTTPException(409, str(exc)) from None
    if new and state.wake is not None:
        state.wake()
    return upload_id, new


@router.get("/upload", response_class=HTMLResponse, include_in_schema=False)
def upload_page(request: Request, who: Who) -> Response:
    require_account(who)
    state = request.app.state
    limits = UploadLimits.from_dict(
        contest_settings(state.engine, state.config.ladder)["upload_limits"]
    )
    return render(
        request, who, "upload.html",
        {"title": "Upload a bot", "limits": limits, "playing": state.config.play},
    )  # fmt: skip


@router.post("/upload", include_in_schema=False)
async def upload_form(
    request: Request,
    who: Who,
    name: Annotated[str, Form(max_length=100)],
    file: Annotated[UploadFile, File()],
    csrf: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    check_csrf(who, csrf)
    upload_id, _ = await receive_upload(request, who, name, file)
    return RedirectResponse(f"/uploads/{upload_id}", status_code=303)


@router.post("/api/bots", tags=["bots"], status_code=202, response_model=answers.UploadAccepted)
async def upload_api(
    request: Request,
    who: Who,
    name: Annotated[str, Form(max_length=100, description="the bot's name (new, or yours)")],
    file: Annotated[UploadFile, File(description="bot.py, or a .zip/.tar.gz holding bot.py")],
    csrf: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    """Upload a new version of a bot (with an API token: ``Authorization: Bearer …``).
    It is smoke-tested, then entered into the ladder; poll ``/api/uploads/{id}``."""
    check_csrf(who, csrf)
    upload_id, new = await receive_upload(request, who, name, file)
    data = {"upload": upload_id, "new_code": new, "status_url": f"/api/uploads/{upload_id}"}
    return answers.answer(data, status_code=202)


def upload_data(request: Request, who: Visitor, upload_id: int) -> dict[str, Any]:
    account = require_account(who)
    with Session(request.app.state.engine) as session:
        row = session.get(Upload, upload_id)
        if row is None or (row.user_id != account.id and not who.is_organizer):
            raise HTTPException(404, f"no upload {upload_id} of yours")
        return {
            "id": row.id,
            "bot": row.bot_name,
            "filename": row.filename,
            "kind": row.kind,
            "files": len(_paths(row)) if row.files else None,  # None: a collected refusal
            "status": row.status,
            "reason": row.reason,
            "log": row.log,
            "created": row.created.isoformat() if row.created else None,
            "checked": row.checked.isoformat() if row.checked else None,
            "playing": request.app.state.config.play,
        }


def _paths(row: Upload) -> list[str]:
    from .botstore import unpack

    return sorted(unpack(row.files))


@router.get("/uploads/{upload_id}", response_class=HTMLResponse, include_in_schema=False)
def upload_status_page(request: Request, who: Who, upload_id: int) -> Response:
    data = upload_data(request, who, upload_id)
    return render(
        request, who, "upload_status.html", {"title": f"Upload {upload_id}", "upload": data}
    )


@router.get("/api/uploads/{upload_id}", tags=["bots"], response_model=answers.UploadStatus)
def upload_status_api(request: Request, who: Who, upload_id: int) -> Response:
    """An upload's state: checking, accepted (in the ladder) or refused (``reason``, and the
    end of the bot's own output in ``log``).  Its owner's and the organizer's only."""
    return answers.answer(upload_data(request, who, upload_id))
