"""An upload checked in a short-lived child process, never in the server.

The gate (:func:`arena.web.uploads.check_upload`) parses hostile archives with the standard
library, whose parsers have had quadratic and endless paths on crafted metadata (one
285-byte tar held a server's event loop, every page and, through the interpreter lock, the
player for 6-29 s).  Walking the metadata first (:mod:`arena.web.archive_scan`) closes the
known paths; running the whole check in a child closes the class: whatever the parsers do,
they do it in a process with its own interpreter lock, under

- ``RLIMIT_CPU`` (then ``SIGKILL`` a second later) and a wall-clock deadline after which
  the server kills it;
- ``RLIMIT_AS`` (a bomb's memory is a ``MemoryError`` in the child, not a swapping host);
- ``RLIMIT_FSIZE`` 0 (it can write no file), ``RLIMIT_NOFILE`` small, ``RLIMIT_NPROC`` 0
  (it cannot fork), ``RLIMIT_CORE`` 0;
- ``python -I -B``, an empty environment (no secret of the server's) and ``/`` as its
  folder; the limits are set before any of the arena's code is imported.

The server awaits it without blocking its event loop, at most
:attr:`CheckLimits.concurrent` children at once and :attr:`CheckLimits.waiting` uploads
queued behind them (a flood gets :class:`CheckerBusy`, never a fork bomb).  The child
answers with one JSON line (a :class:`CheckReport`) and the files' bytes after it; a child
that overruns, dies or answers anything else is a refusal with a reason ("the archive took
too long to check"), never a 500, and its answer is verified again (paths, sizes, counts)
before the server keeps anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..bots import MAX_BOT_BYTES, MAX_BOT_FILES, bot_digest
from .uploads import UploadedBot, UploadLimits, UploadRefused, check_paths, check_upload

log = logging.getLogger("arena.web.archive_check")

ENTRY = "arena.web.archive_check:child_main"
KINDS = ("py", "zip", "tar.gz")
_REPORT_CAP = 1 << 20
"""Bytes the child's JSON line may take (a few hundred paths)."""
_STDERR_TAIL = 4096

_PRELUDE = """\
import json, resource, sys
cpu, memory, files = (int(a) for a in sys.argv[1:4])
for what, soft, hard in (
    (resource.RLIMIT_CPU, cpu, cpu + 1),
    (resource.RLIMIT_AS, memory, memory),
    (resource.RLIMIT_FSIZE, 0, 0),
    (resource.RLIMIT_NOFILE, files, files),
    (resource.RLIMIT_NPROC, 0, 0),
    (resource.RLIMIT_CORE, 0, 0),
):
    resource.setrlimit(what, (soft, hard))
sys.path[:0] = json.loads(sys.argv[4])
module, _, function = sys.argv[5].partition(":")
getattr(__import__(module, fromlist=[function]), function)()
"""
"""The child's program: its limits first, then the entry point (``module:function``)."""


class CheckerBusy(Exception):
    """Too many uploads are being checked right now (the server says 503: try again)."""


class CheckerUnavailable(Exception):
    """The server cannot start a checking process (its problem, not the upload's)."""


@dataclass(frozen=True)
class CheckLimits:
    """What one check may spend, and how many run at once (one :class:`ArchiveChecker`
    per server)."""

    cpu_seconds: int = 20
    wall_seconds: float = 60.0
    memory_bytes: int = 1 << 30
    open_files: int = 16
    concurrent: int = 2
    waiting: int = 8


@dataclass(frozen=True)
class CheckReport:
    """The child's answer: refused with ``reason``, or ok with the kind and each kept
    file's path and length (in the order their bytes follow the line)."""

    ok: bool
    reason: str = ""
    kind: str = ""
    sizes: tuple[tuple[str, int], ...] = ()

    def to_line(self) -> bytes:
        doc = {"ok": self.ok, "reason": self.reason, "kind": self.kind, "sizes": self.sizes}
        return json.dumps(doc, ensure_ascii=True).encode() + b"\n"

    @classmethod
    def from_line(cls, line: bytes) -> CheckReport:
        """The report, or ValueError when the line is anything but one."""
        doc = json.loads(line)
        if not isinstance(doc, dict) or not isinstance(doc.get("ok"), bool):
            raise ValueError("not a report")
        reason, kind, sizes = doc.get("reason", ""), doc.get("kind", ""), doc.get("sizes", [])
        if not (isinstance(reason, str) and isinstance(kind, str) and isinstance(sizes, list)):
            raise ValueError("not a report")
        pairs = []
        for pair in sizes:
            ok = isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)
            if not (ok and type(pair[1]) is int and pair[1] >= 0):
                raise ValueError("not a report")
            pairs.append((pair[0], pair[1]))
        return cls(doc["ok"], reason, kind, tuple(pairs))


def child_main() -> None:
    """The child: one request line (file name, limits) and the upload's bytes on stdin;
    the report and the kept files' bytes on stdout."""
    stdin = sys.stdin.buffer
    request = json.loads(stdin.readline(_REPORT_CAP))
    data = stdin.read()
    body: list[bytes] = []
    try:
        bot = check_upload(request["filename"], data, UploadLimits.from_dict(request["limits"]))
    except UploadRefused as exc:
        report = CheckReport(False, reason=str(exc))
    except MemoryError:
        report = CheckReport(False, reason="the archive needs more memory to check than allowed")
    except RecursionError:
        report = CheckReport(False, reason="the archive is nested too deeply to check")
    else:
        sizes = tuple((path, len(content)) for path, content in bot.files.items())
        report = CheckReport(True, kind=bot.kind, sizes=sizes)
        body = list(bot.files.values())
    out = sys.stdout.buffer
    out.write(report.to_line())
    for chunk in body:
        out.write(chunk)
    out.flush()


def _import_roots() -> list[str]:
    """The folders the child imports the arena and the SDK from: this process's own."""
    import arena
    import bigtwo

    roots = [str(Path(m.__file__ or "").resolve().parent.parent) for m in (arena, bigtwo)]
    return list(dict.fromkeys(roots))


@dataclass
class _Outcome:
    returncode: int | None
    out: bytes
    err: bytes
    timed_out: bool = False
    flooded: bool = False


class ArchiveChecker:
    """Checks uploads in child processes; one per server (``app.state.archive_checker``)."""

    def __init__(
        self,
        limits: CheckLimits | None = None,
        entry: str = ENTRY,
        path: Sequence[str] | None = None,
    ) -> None:
        self.limits = limits or CheckLimits()
        self.entry = entry
        self.path = list(path) if path is not None else _import_roots()
        self._inflight = 0
        self._slots: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    @contextlib.asynccontextmanager
    async def _slot(self) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots[0] is not loop:
            self._slots = (loop, asyncio.Semaphore(self.limits.concurrent))
        async with self._slots[1]:
            yield

    async def check(self, filename: str, data: bytes, limits: UploadLimits) -> UploadedBot:
        """The upload as a bot's files, or :class:`UploadRefused` saying why;
        :class:`CheckerBusy` when too many are waiting already."""
        if len(data) > limits.max_packed:
            return check_upload(filename, data, limits)  # refused on its length alone
        if self._inflight >= self.limits.concurrent + self.limits.waiting:
            raise CheckerBusy("the server is checking many uploads: try again in a minute")
        self._inflight += 1
        try:
            async with self._slot():
                outcome = await self._run(filename, data, limits)
        finally:
            self._inflight -= 1
        return await asyncio.to_thread(self._verdict, outcome, limits)

    async def _run(self, filename: str, data: bytes, limits: UploadLimits) -> _Outcome:
        lim = self.limits
        argv = [
            sys.executable, "-I", "-B", "-c", _PRELUDE,
            str(lim.cpu_seconds), str(lim.memory_bytes), str(lim.open_files),
            json.dumps(self.path), self.entry,
        ]  # fmt: skip
        request = json.dumps({"filename": filename, "limits": limits.to_dict()}).encode()
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={"LC_ALL": "C.UTF-8"},
                cwd="/",
                start_new_session=True,
            )
        except OSError as exc:
            raise CheckerUnavailable(f"cannot start the upload check: {exc}") from exc
        assert proc.stdin and proc.stdout and proc.stderr
        stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr
        cap = _REPORT_CAP + min(limits.max_unpacked, MAX_BOT_BYTES)
        out, err = bytearray(), bytearray()
        outcome = _Outcome(None, b"", b"")

        async def feed() -> None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                stdin.write(request + b"\n")
                stdin.write(data)
                await stdin.drain()
            stdin.close()

        async def collect() -> None:
            while chunk := await stdout.read(1 << 16):
                out.extend(chunk)
                if len(out) > cap:
                    outcome.flooded = True
                    proc.kill()
                    return

        async def tail() -> None:
            while chunk := await stderr.read(1 << 14):
                err.extend(chunk)
                del err[:-_STDERR_TAIL]

        try:
            async with asyncio.timeout(lim.wall_seconds):
                await asyncio.gather(feed(), collect(), tail())
                await proc.wait()
        except TimeoutError:
            outcome.timed_out = True
        finally:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        outcome.returncode = proc.returncode
        outcome.out, outcome.err = bytes(out), bytes(err)
        return outcome

    def _verdict(self, outcome: _Outcome, limits: UploadLimits) -> UploadedBot:
        """The bot the child reported, verified; UploadRefused for anything else."""
        killed = outcome.returncode in (-signal.SIGXCPU, -signal.SIGKILL)
        if outcome.timed_out or (killed and not outcome.flooded):
            why = (
                f"over {self.limits.wall_seconds:g} s"
                if outcome.timed_out
                else f"over {self.limits.cpu_seconds} s of CPU"
            )
            raise UploadRefused(f"the archive took too long to check ({why})")

        def broken(why: str) -> UploadRefused:
            log.warning(
                "the upload check failed (%s, exit status %s): %s",
                why, outcome.returncode, outcome.err.decode("utf-8", "replace")[-1000:],
            )  # fmt: skip
            return UploadRefused(f"the archive could not be checked ({why})")

        if outcome.flooded:
            raise broken("its checker answered too much")
        line, _, body = outcome.out.partition(b"\n")
        stopped = f"its checker stopped, exit status {outcome.returncode}"
        try:
            report = CheckReport.from_line(line)
        except ValueError:
            raise broken(stopped) from None
        if outcome.returncode != 0:
            raise broken(stopped)
        if not report.ok:
            reason = report.reason
            if not reason or not reason.isprintable() or len(reason) > 500:
                raise broken("its checker gave no readable reason")
            raise UploadRefused(reason)
        return _bot_of(report, body, limits, broken)


def _bot_of(report: CheckReport, body: bytes, limits: UploadLimits, broken: Any) -> UploadedBot:
    """The files a child reported, after the gate's own cheap checks on its answer (what
    it says it kept must be what the gate keeps: names, counts, sizes)."""
    total = sum(n for _, n in report.sizes)
    if report.kind not in KINDS or not report.sizes:
        raise broken("its checker's report is malformed")
    if len(report.sizes) > min(limits.max_files, MAX_BOT_FILES):
        raise broken("its checker kept more files than allowed")
    if total > min(limits.max_unpacked, MAX_BOT_BYTES) or total != len(body):
        raise broken("its checker's report does not match its files")
    try:
        paths = check_paths([tuple(p.split("/")) for p, _ in report.sizes])
    except UploadRefused:
        raise broken("its checker kept a name the gate refuses") from None
    if "bot.py" not in paths or paths != [p for p, _ in report.sizes]:
        raise broken("its checker's report is malformed")
    files: dict[str, bytes] = {}
    at = 0
    for path, n in report.sizes:
        files[path] = body[at : at + n]
        at += n
    return UploadedBot(files, report.kind, bot_digest(files))


def archive_checker(state: Any) -> ArchiveChecker:
    """The server's checker (made on first use; a test may set its own first)."""
    checker = getattr(state, "archive_checker", None)
    if checker is None:
        checker = state.archive_checker = ArchiveChecker()
    assert isinstance(checker, ArchiveChecker)
    return checker
