"""Contestant data is never parsed in the server (issue 21).

An archive is checked in a short-lived child process under CPU, memory and wall-clock
limits, its tar/zip metadata walked and bounded before the standard library's parsers see
it; the server only awaits the child, a bounded number at once.  Shown here on a real
server on loopback: a 60,000-digit pax header (CPython < 3.11.10's quadratic header
parsing, CVE-2024-6232) used to hold every page for many seconds; now the pages keep
answering while it is refused.  A child that overruns, dies or prints garbage is a refusal
with a reason, never a 500.  And a refused upload is collected: its unpacked folder and its
files in the database go, its reason and log tail stay for its owner.
"""

from __future__ import annotations

import asyncio
import gzip
import io
import os
import struct
import tarfile
import textwrap
import threading
import time
import zipfile
from pathlib import Path

import httpx
import pytest
from sqlalchemy.orm import Session
from test_api import BOT, sign_up, upload

from arena.web.accounts import create_user
from arena.web.app import create_app
from arena.web.archive_check import ArchiveChecker, CheckerBusy, CheckLimits
from arena.web.contest import WebConfig
from arena.web.models import Upload
from arena.web.uploads import UploadLimits, UploadRefused


# ----- hostile archives, built here ---------------------------------------------------------
def _ext_header(kind: bytes, body: bytes) -> bytes:
    """One tar header block of ``kind`` carrying ``body`` (padded to whole blocks)."""
    info = tarfile.TarInfo("././@LongLink" if kind in (b"L", b"K") else "././@PaxHeader")
    info.type = kind
    info.size = len(body)
    return info.tobuf(format=tarfile.USTAR_FORMAT) + body + b"\0" * (-len(body) % 512)


def pax_digits(digits: int = 60_000) -> bytes:
    """The finding's upload: an extended header of digits and nothing else, gzip'd."""
    return gzip.compress(_ext_header(b"x", b"9" * digits) + b"\0" * 1024, mtime=0)


def gnu_longname(length: int = 60_000) -> bytes:
    """A GNU long-name block of 60,000 bytes before an honest bot.py."""
    bot = tarfile.TarInfo("bot.py")
    bot.size = len(BOT)
    body = bot.tobuf(format=tarfile.USTAR_FORMAT) + BOT + b"\0" * (-len(BOT) % 512)
    return gzip.compress(_ext_header(b"L", b"a" * length) + body + b"\0" * 1024, mtime=0)


def zip_of(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def zip_count_lie() -> bytes:
    """An honest one-file zip whose end record claims 65,535 entries."""
    data = bytearray(zip_of({"bot.py": BOT}))
    end = data.rindex(b"PK\x05\x06")
    struct.pack_into("<HH", data, end + 8, 0xFFFF, 0xFFFF)
    return bytes(data)


def zip_comment() -> bytes:
    """An honest zip with a 65,000-byte archive comment."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("bot.py", BOT)
        zf.comment = b"c" * 65_000
    return buf.getvalue()


def zip_huge_directory(entries: int = 60_000) -> bytes:
    """A central directory of 60,000 entries (and no data for them): zipfile would build
    60,000 objects before any count is judged."""
    one = zip_of({"bot.py": BOT})
    cd_at = one.index(b"PK\x01\x02")
    end_at = one.rindex(b"PK\x05\x06")
    entry = one[cd_at:end_at]
    directory = entry * entries
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, len(directory), cd_at, 0)
    return one[:cd_at] + directory + end


HOSTILE = {
    "pax-digits": ("bot.tar.gz", pax_digits(), "extended header"),
    "gnu-longname": ("bot.tar.gz", gnu_longname(), "long-name header"),
    "zip-count": ("bot.zip", zip_count_lie(), "over 1000 entries"),
    "zip-comment": ("bot.zip", zip_comment(), "comment"),
    "zip-directory": ("bot.zip", zip_huge_directory(), "over 1000 entries"),
}


# ----- the served case ----------------------------------------------------------------------
@pytest.fixture
def site(tmp_path: Path, live_server):
    app = create_app(WebConfig(db=str(tmp_path / "c.db"), sandbox="process"))
    create_user(app.state.engine, "org", "organizer", "organizer-pw")
    return live_server(app), app


def _page_time(url: str) -> float:
    start = time.monotonic()
    r = httpx.get(url + "/", timeout=120)
    assert r.status_code == 200
    return time.monotonic() - start


def test_the_finding_is_a_tiny_upload():
    assert len(pax_digits()) < 400


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_archive_is_refused_while_every_page_keeps_answering(site, case):
    url, app = site
    filename, data, words = HOSTILE[case]
    alice = sign_up(url, app, "alice")
    alice.timeout = httpx.Timeout(150)
    baseline = max(_page_time(url) for _ in range(5))
    latencies: list[float] = []
    done = threading.Event()

    def visitor() -> None:
        while not done.is_set():
            latencies.append(_page_time(url))
            time.sleep(0.05)

    thread = threading.Thread(target=visitor, daemon=True)
    thread.start()
    time.sleep(0.3)  # the visitor is fetching before the upload arrives
    try:
        started = time.monotonic()
        r = upload(alice, "alicebot", filename, data)
        took = time.monotonic() - started
        time.sleep(0.3)
    finally:
        done.set()
        thread.join(150)
    # generous: a loaded two-core machine; the unfixed server held pages 6-29 s
    worst = max(latencies)
    print(f"{case}: refused in {took:.2f} s; pages {baseline:.3f} s before, {worst:.3f} s worst")
    assert worst < max(2.5, 10 * baseline), f"a page took {worst:.1f} s (baseline {baseline:.2f})"
    assert took < 30, f"the refusal took {took:.1f} s"
    assert r.status_code == 400, r.text[-300:]
    assert "upload refused" in r.text and words in r.text, r.text[-300:]
    with Session(app.state.engine) as s:
        assert s.query(Upload).count() == 0


def test_an_honest_archive_still_passes_through_the_child(site):
    url, app = site
    alice = sign_up(url, app, "alice")
    data = zip_of({"mine/bot.py": BOT, "mine/data/table.bin": os.urandom(3000)})
    r = upload(alice, "alicebot", "bot.zip", data)
    assert r.status_code == 303, r.text[-300:]
    with Session(app.state.engine) as s:
        row = s.query(Upload).one()
        assert row.kind == "zip" and row.size == len(BOT) + 3000


# ----- the child's limits -------------------------------------------------------------------
def _entry(tmp_path: Path, body: str) -> dict[str, object]:
    """A checker whose child runs ``body`` (a module in tmp_path) instead of the check."""
    (tmp_path / "hostile_child.py").write_text(
        "import os, sys, time\n\ndef main():\n" + textwrap.indent(textwrap.dedent(body), "    ")
    )
    return {"entry": "hostile_child:main", "path": [str(tmp_path)]}


async def _check(checker: ArchiveChecker, name: str = "bot.py", data: bytes = BOT):
    return await checker.check(name, data, UploadLimits())


async def test_a_check_over_its_cpu_limit_is_killed_and_reported(tmp_path):
    checker = ArchiveChecker(
        CheckLimits(cpu_seconds=1, wall_seconds=60), **_entry(tmp_path, "while True:\n    pass")
    )
    started = time.monotonic()
    with pytest.raises(UploadRefused, match="took too long to check"):
        await _check(checker)
    assert time.monotonic() - started < 45  # the CPU limit ended it, not the wall clock


async def test_a_check_over_its_wall_clock_is_killed_and_reported(tmp_path):
    checker = ArchiveChecker(CheckLimits(wall_seconds=1.0), **_entry(tmp_path, "time.sleep(60)"))
    started = time.monotonic()
    with pytest.raises(UploadRefused, match="took too long to check"):
        await _check(checker)
    assert time.monotonic() - started < 20


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("sys.stdout.write('garbage' * 10)", "could not be checked"),
        ("os._exit(3)", "could not be checked"),
        ("x = bytearray(4 << 30)", "could not be checked"),  # over its memory limit
        (
            'sys.stdout.buffer.write(b\'{"ok": true, "kind": "py", "sizes": [["bot.py", 5]]}\\n\')',
            "could not be checked",
        ),  # promises bytes it never sends
        ("while True:\n    sys.stdout.write('x' * 65536)", "could not be checked"),
    ],
    ids=["garbage", "dies", "memory", "short", "flood"],
)
async def test_a_child_that_misbehaves_is_a_refusal_with_a_reason(tmp_path, body, words):
    checker = ArchiveChecker(CheckLimits(wall_seconds=20), **_entry(tmp_path, body))
    with pytest.raises(UploadRefused, match=words) as exc:
        await _check(checker)
    assert str(exc.value).isprintable() and len(str(exc.value)) < 200


async def test_the_child_inherits_no_secret_and_can_write_no_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_SECRET_FOR_TEST", "s3cret")
    body = f"""
    import json
    try:
        with open({str(tmp_path / "written")!r}, "wb") as f:
            f.write(b"x" * 100)
        wrote = "wrote"
    except OSError as exc:
        wrote = type(exc).__name__
    reason = json.dumps([sorted(os.environ), wrote])
    sys.stdout.write(json.dumps({{"ok": False, "reason": reason}}) + "\\n")
    """
    checker = ArchiveChecker(CheckLimits(wall_seconds=20), **_entry(tmp_path, body))
    with pytest.raises(UploadRefused) as exc:
        await _check(checker)
    assert "ARENA_SECRET_FOR_TEST" not in str(exc.value)
    assert "wrote" not in str(exc.value).replace("written", ""), exc.value  # RLIMIT_FSIZE 0
    assert not (tmp_path / "written").exists() or (tmp_path / "written").stat().st_size == 0


async def test_a_flood_of_checks_queues_then_is_turned_away(tmp_path):
    """One child at a time, one more waiting: the third at once is told to come back."""
    marker = tmp_path / "running"
    body = f"""
    import json
    marker = {str(marker)!r}
    fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)  # fails if two run at once
    os.close(fd)
    time.sleep(1)
    os.unlink(marker)
    sys.stdout.write(json.dumps({{"ok": False, "reason": "checked"}}) + "\\n")
    """
    checker = ArchiveChecker(
        CheckLimits(concurrent=1, waiting=1, wall_seconds=30), **_entry(tmp_path, body)
    )

    async def one() -> BaseException | None:
        try:
            await checker.check("bot.py", BOT, UploadLimits())
        except (UploadRefused, CheckerBusy) as exc:
            return exc
        return None

    outcomes = await asyncio.gather(one(), one(), one())
    busy = [o for o in outcomes if isinstance(o, CheckerBusy)]
    checked = [o for o in outcomes if isinstance(o, UploadRefused) and "checked" in str(o)]
    assert len(busy) == 1 and len(checked) == 2, outcomes


async def test_the_real_child_refuses_the_finding_quickly():
    checker = ArchiveChecker(CheckLimits(cpu_seconds=5, wall_seconds=60))
    started = time.monotonic()
    with pytest.raises(UploadRefused, match="extended header"):
        await _check(checker, "bot.tar.gz", pax_digits())
    assert time.monotonic() - started < 30
    bot = await _check(checker, "bot.zip", zip_of({"bot.py": BOT, "lib/x.py": b"X = 1\n"}))
    assert sorted(bot.files) == ["bot.py", "lib/x.py"] and bot.files["bot.py"] == BOT


# ----- refused uploads are collected --------------------------------------------------------
FAILING = b"""from bigtwo import Bot


class Broken(Bot):
    def act(self, observation):
        print("the end of my log")
        raise RuntimeError("I always fail")
"""


def test_a_refused_upload_leaves_no_folder_and_no_blob(tmp_path, live_server):
    data_dir = tmp_path / "bots"
    app = create_app(
        WebConfig(db=str(tmp_path / "c.db"), data=data_dir, play=True, sandbox="inproc")
    )
    url = live_server(app)
    alice = sign_up(url, app, "alice")
    big = os.urandom(3 << 20)  # incompressible: its data file is really on disk
    r = upload(alice, "alicebot", "bot.zip", zip_of({"bot.py": FAILING, "data/big.bin": big}))
    assert r.status_code == 303, r.text[-300:]
    upload_id = int(r.headers["location"].rsplit("/", 1)[1])
    deadline = time.monotonic() + 120
    while (state := alice.get(f"/api/uploads/{upload_id}").json())["status"] == "checking":
        assert time.monotonic() < deadline, "the upload was never checked"
        time.sleep(0.3)
    assert state["status"] == "refused" and "I always fail" in state["reason"], state

    def blob() -> int:
        with Session(app.state.engine) as s:
            row = s.get(Upload, upload_id)
            assert row is not None
            return len(row.files or b"")

    # the collection removes the folder, then empties the blob in its next transaction: a
    # look between the two saw the blob (seen once on a loaded machine) — wait for both
    deadline = time.monotonic() + 30
    while any(data_dir.rglob("big.bin")) or blob() >= 100:
        assert time.monotonic() < deadline, (
            f"the refused upload is still kept: folder {any(data_dir.rglob('big.bin'))}, "
            f"blob {blob()} bytes"
        )
        time.sleep(0.3)
    again = alice.get(f"/api/uploads/{upload_id}").json()
    assert again["status"] == "refused" and "I always fail" in again["reason"]
    assert alice.get(f"/uploads/{upload_id}").status_code == 200


def test_collection_keeps_shared_folders_and_prunes_old_records(tmp_path):
    """Unit level: a refusal whose code is also waiting or accepted keeps the folder they
    share; refusals left from before (blobs still in the database) are collected at the
    first call; records go after REFUSED_DAYS or beyond REFUSED_PER_BOT per bot."""
    from datetime import timedelta

    from arena.web import botstore
    from arena.web.botstore import bot_folder, collect_refused, finish_upload, store_upload
    from arena.web.models import now
    from arena.web.uploads import check_upload

    app = create_app(WebConfig(db=str(tmp_path / "c.db"), data=tmp_path / "bots"))
    engine, data_dir = app.state.engine, tmp_path / "bots"
    account, _ = create_user(engine, "alice", "participant", "participant-pw")

    def uploaded(code: bytes, status: str, age_days: float = 0) -> tuple[int, Path]:
        bot = check_upload("bot.py", code)
        upload_id, _ = store_upload(engine, account.id, "alicebot", "bot.py", bot)
        folder = bot_folder(data_dir, "alicebot", bot.digest, bot.files)
        if status != "checking":
            finish_upload(engine, upload_id, status == "accepted", "why", "L" * 30_000, None)
        with Session(engine) as s, s.begin():
            row = s.get(Upload, upload_id)
            assert row is not None
            row.created = now() - timedelta(days=age_days)
        return upload_id, folder

    shared_code = BOT + b"# shared\n"
    refused_id, shared = uploaded(shared_code, "refused")
    waiting_id, same = uploaded(shared_code, "checking")  # the same code, uploaded again
    assert same == shared and waiting_id != refused_id
    alone_id, alone = uploaded(BOT + b"# alone\n", "refused")
    old_id, old = uploaded(BOT + b"# old\n", "refused", age_days=botstore.REFUSED_DAYS + 1)

    collected = collect_refused(engine, data_dir)
    assert collected.trimmed == 3 and collected.folders == 2 and collected.deleted == 1
    assert shared.is_dir() and not alone.exists() and not old.exists()
    with Session(engine) as s:
        row = s.get(Upload, alone_id)
        assert row is not None and row.files == b"" and row.reason == "why"
        assert len(row.log) == botstore.REFUSED_LOG_TAIL
        assert s.get(Upload, old_id) is None
        waiting = s.get(Upload, waiting_id)
        assert waiting is not None and waiting.files  # the waiting one is untouched
    assert collect_refused(engine, data_dir) == botstore.Collected()  # nothing new: no work

    for i in range(botstore.REFUSED_PER_BOT + 3):
        uploaded(BOT + b"# try %d\n" % i, "refused")
    collect_refused(engine, data_dir)
    with Session(engine) as s:
        left = s.query(Upload).filter(Upload.status == "refused").count()
    assert left == botstore.REFUSED_PER_BOT
    assert sorted(p.name for p in (data_dir / "alicebot").iterdir()) == [shared.name]


def test_a_served_flood_is_told_to_come_back_and_a_dying_check_is_no_500(site, tmp_path):
    url, app = site
    body = """
    import json
    time.sleep(2)
    sys.stdout.write(json.dumps({"ok": False, "reason": "checked slowly"}) + "\\n")
    """
    app.state.archive_checker = ArchiveChecker(
        CheckLimits(concurrent=1, waiting=0, wall_seconds=30), **_entry(tmp_path, body)
    )
    alice = sign_up(url, app, "alice")
    bob = sign_up(url, app, "bob")
    alice.timeout = bob.timeout = httpx.Timeout(60)
    answers: dict[str, httpx.Response] = {}
    first = threading.Thread(
        target=lambda: answers.setdefault("a", upload(alice, "alicebot", "bot.py", BOT))
    )
    first.start()
    time.sleep(1.0)  # alice's check is running
    answers["b"] = upload(bob, "bobbot", "bot.py", BOT)
    first.join(60)
    assert answers["a"].status_code == 400 and "checked slowly" in answers["a"].text
    assert answers["b"].status_code == 503 and "try again" in answers["b"].text
    assert answers["b"].headers.get("retry-after") == "60"
    app.state.archive_checker = ArchiveChecker(
        CheckLimits(wall_seconds=30), **_entry(tmp_path, "raise SystemExit('boom')")
    )
    r = upload(bob, "bobbot", "bot.py", BOT)
    assert r.status_code == 400 and "could not be checked" in r.text, r.text[-300:]
