"""Where an uploaded bot lives: its checked files in the database (``Upload.files``), and a
folder unpacked from them under the server's data folder, which is what the sandboxes build
and run (a folder with ``bot.py``, as ``arena match`` takes it).

The folder is made from the database copy whenever it is missing, so a lost data folder or
a second machine costs a rebuild, never a bot.  Its path holds only names the arena chose
(the bot's checked name and the code's hash), never a name from the upload.
"""

from __future__ import annotations

import base64
import gzip
import json
import shutil
import tempfile
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from ..bots import SAFE_PART, sample_names
from ..ladder.store import Bot
from .models import BotOwner, Upload, now
from .uploads import UploadedBot, write_bot_folder


class NameTaken(ValueError):
    pass


def pack(files: dict[str, bytes]) -> bytes:
    """The files as stored: gzip'd JSON of path → base64 (deterministic)."""
    doc = {p: base64.b64encode(files[p]).decode() for p in sorted(files)}
    return gzip.compress(json.dumps(doc, sort_keys=True).encode(), mtime=0)


def unpack(data: bytes) -> dict[str, bytes]:
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
