"""Where an uploaded bot lives: its checked files in the database (``Upload.files``), and a
folder unpacked from them under the server's data folder, which is what the sandboxes build
and run (a folder with ``bot.py``, as ``arena match`` takes it).

The folder is made from the database copy whenever it is missing, so a lost data folder or
a second machine costs a rebuild, never a bot.  Its path holds only names the arena chose
(the bot's checked name and the code's hash), never a name from the upload.

A refused upload keeps neither (:func:`collect_refused`, which the player runs after its
checks and when it starts): its unpacked folder is removed and its files in the database
are dropped, so what stays is what its owner reads: the reason, the end of the log, the
file's name and size.  Refusal records themselves are kept for
:data:`REFUSED_DAYS` days and at most :data:`REFUSED_PER_BOT` per bot.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import logging
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import delete, func, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from ..bots import SAFE_PART, sample_names
from ..ladder.store import Bot
from .models import BotOwner, Upload, now
from .uploads import UploadedBot, write_bot_folder

log = logging.getLogger("arena.web.botstore")

REFUSED_DAYS = 30
"""Days a refusal's record (reason, log tail) is kept for its owner to read."""
REFUSED_PER_BOT = 20
"""Refusal records kept per bot at most (the newest)."""
REFUSED_LOG_TAIL = 8000
"""Characters of a refused bot's log kept (its end, where the error is)."""
_HEX = re.compile(r"[0-9a-f]{16,64}")


class NameTaken(ValueError):
    pass


def pack(files: dict[str, bytes]) -> bytes:
    """The files as stored: gzip'd JSON of path → base64 (deterministic)."""
    doc = {p: base64.b64encode(files[p]).decode() for p in sorted(files)}
    return gzip.compress(json.dumps(doc, sort_keys=True).encode(), mtime=0)


def unpack(data: bytes) -> dict[str, bytes]:
    """The files :func:`pack` stored; none for a collected refusal (an empty blob)."""
    if not data:
        return {}
    return {p: base64.b64decode(v) for p, v in json.loads(gzip.decompress(data)).items()}


def check_bot_name(name: str) -> str:
    """A bot's name: the arena's safe alphabet (it reaches image tags and other seats'
    screens), at most 40 characters, and not a sample bot's."""
    name = (name or "").strip()
    if not SAFE_PART.fullmatch(name) or len(name) > 40 or name.startswith("."):
        raise ValueError(
            "a bot's name is 1-40 characters: letters, digits, '_', '.' or '-', not starting "
            "with '.' or '-'"
        )
    if name in sample_names():
        raise ValueError(f"{name!r} is a sample bot's name: choose another")
    return name


def claim(session: Session, name: str, user_id: int) -> Bot:
    """The bot ``name`` for ``user_id``: a new bot is theirs; an existing one must be."""
    bot = session.scalar(select(Bot).where(Bot.name == name))
    if bot is None:
        bot = Bot(name=name)
        session.add(bot)
        session.flush()
        session.add(BotOwner(bot_id=bot.id, user_id=user_id))
        return bot
    owner = session.get(BotOwner, bot.id)
    if owner is None or owner.user_id != user_id:
        raise NameTaken(f"the bot name {name!r} is taken by someone else")
    return bot


def store_upload(
    engine: Engine, user_id: int, name: str, filename: str, checked: UploadedBot
) -> tuple[int, bool]:
    """Keep a checked upload for the player to smoke-test; returns its id and whether it is
    new code (the same code as the bot's newest accepted upload is not stored again)."""
    with Session(engine) as session, session.begin():
        claim(session, name, user_id)
        same = session.scalar(
            select(Upload)
            .where(Upload.bot_name == name, Upload.digest == checked.digest)
            .where(Upload.status.in_(("checking", "accepted")))
            .order_by(Upload.id.desc())
        )
        if same is not None:
            return same.id, False
        row = Upload(
            user_id=user_id,
            bot_name=name,
            filename=_shown_filename(filename),
            kind=checked.kind,
            digest=checked.digest,
            files=pack(checked.files),
            size=sum(len(v) for v in checked.files.values()),
            status="checking",
            reason="",
            log="",
        )
        session.add(row)
        session.flush()
        return row.id, True


def _shown_filename(filename: str) -> str:
    """The uploaded file's name as pages show it: its last part, printable, capped."""
    last = filename.replace("\\", "/").rsplit("/", 1)[-1]
    return "".join(c if c.isprintable() else "?" for c in last)[:200] or "upload"


def bot_folder(data_dir: Path, name: str, digest: str, files: dict[str, bytes]) -> Path:
    """The folder the sandboxes play this version from, made when missing (atomically: a
    half-written folder never has the final name)."""
    folder = data_dir / check_bot_name(name) / digest[:16]
    if (folder / "bot.py").is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".incoming-", dir=folder.parent))
    try:
        write_bot_folder(UploadedBot(files=files, kind="folder", digest=digest), scratch / "bot")
        try:
            (scratch / "bot").rename(folder)
        except OSError:
            if not (folder / "bot.py").is_file():
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return folder


def finish_upload(
    engine: Engine, upload_id: int, ok: bool, reason: str, log: str, version_id: int | None
) -> None:
    with Session(engine) as session, session.begin():
        row = session.get(Upload, upload_id)
        if row is None:
            return
        row.status = "accepted" if ok else "refused"
        row.reason = reason[:4000]
        row.log = log[-20000:]
        row.version_id = version_id
        row.checked = now()


@dataclass(frozen=True)
class Collected:
    """What one :func:`collect_refused` removed."""

    trimmed: int = 0
    """Refused uploads whose files were cut to their names."""
    folders: int = 0
    """Unpacked folders removed."""
    deleted: int = 0
    """Refusal records deleted for their age or their number."""


def collect_refused(engine: Engine, data_dir: Path, when: datetime | None = None) -> Collected:
    """Collect refused uploads: each one's unpacked folder (unless the same code of the
    same bot is also waiting or accepted: they share it) and its files in the database,
    then the refusal records
    older than :data:`REFUSED_DAYS` or beyond :data:`REFUSED_PER_BOT` per bot.

    The player calls it after its checks and when it starts, in its own thread, so no
    check is using a folder this removes (a folder still needed is made again from the
    database).  With nothing new refused it is one query."""
    with Session(engine) as session:
        todo = list(
            session.execute(
                select(Upload.id, Upload.bot_name, Upload.digest).where(
                    Upload.status == "refused", func.length(Upload.files) > 0
                )
            )
        )
    if not todo:
        return Collected()
    with Session(engine) as session:
        live = {
            (name, digest)
            for name, digest in session.execute(
                select(Upload.bot_name, Upload.digest).where(
                    Upload.status.in_(("checking", "accepted"))
                )
            )
        }
    folders = 0
    for _, name, digest in todo:
        if (name, digest) not in live and _remove_folder(data_dir, name, digest):
            folders += 1
    with Session(engine) as session, session.begin():
        for upload_id, _, _ in todo:
            row = session.get(Upload, upload_id)
            if row is None or row.status != "refused":
                continue
            row.files = b""  # (an empty blob is the mark of a collected refusal)
            row.log = (row.log or "")[-REFUSED_LOG_TAIL:]
    deleted = _prune_refusals(engine, when or now())
    return Collected(len(todo), folders, deleted)


def _remove_folder(data_dir: Path, name: str, digest: str) -> bool:
    """Remove ``bot_folder``'s folder for this code (and the bot's folder if it is left
    empty); whether there was one."""
    try:
        folder = data_dir / check_bot_name(name) / digest[:16]
    except ValueError:
        return False
    if not _HEX.fullmatch(digest) or not folder.is_dir() or folder.is_symlink():
        return False
    shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.rmdir(folder.parent)  # only when empty
    if folder.exists():
        log.warning("could not remove the refused upload's folder %s", folder)
        return False
    return True


def _prune_refusals(engine: Engine, when: datetime) -> int:
    """Delete refusal records older than :data:`REFUSED_DAYS` or beyond the newest
    :data:`REFUSED_PER_BOT` of their bot; how many."""
    with Session(engine) as session, session.begin():
        rows = session.execute(
            select(Upload.id, Upload.bot_name, Upload.created)
            .where(Upload.status == "refused")
            .order_by(Upload.id.desc())
        ).all()
        seen: dict[str, int] = {}
        cutoff = when - timedelta(days=REFUSED_DAYS)
        doomed = []
        for upload_id, name, created in rows:
            seen[name] = seen.get(name, 0) + 1
            if created is not None and created.tzinfo is None:
                created = created.replace(tzinfo=cutoff.tzinfo)
            if seen[name] > REFUSED_PER_BOT or (created is not None and created < cutoff):
                doomed.append(upload_id)
        for start in range(0, len(doomed), 500):
            session.execute(delete(Upload).where(Upload.id.in_(doomed[start : start + 500])))
    return len(doomed)
