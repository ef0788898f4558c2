"""Running one match: a referee server on a Unix socket in a private folder, one sandboxed
bot per seat, and whatever happens (normal end, forfeits, an exception, Ctrl-C) every bot
stopped and the folder removed."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bigtwo import RuleSet

from .bots import BotSpec, unique_names
from .record import RecordWriter
from .referee.service import RefereeServer
from .referee.session import MatchSession, SeatSpec, TimeControl
from .sandbox import make_sandbox
from .sandbox.base import BotHandle, Credentials


async def run_match(
    bots: list[BotSpec],
    rules: RuleSet,
    seed: int | str,
    time_control: TimeControl | None = None,
    sandbox: str = "process",
    record_path: Path | None = None,
    on_hand_end: Callable[[MatchSession, Any], None] | None = None,
    listen_tcp: str | None = None,
    on_remote: Callable[[Credentials, str], None] | None = None,
    limits: dict[str, Any] | None = None,
    deals: list[list[list[int]]] | None = None,
) -> dict[str, Any]:
    """Play one match; returns the result summary (see MatchSession.summary).

    Remote seats (``BotSpec.remote``) need ``listen_tcp``; ``on_remote(credentials, name)``
    is told how each may connect, and should show it to whoever starts that bot."""
    if any(b.remote for b in bots) and not listen_tcp:
        raise ValueError("a remote seat needs a TCP address to listen on (--listen HOST:PORT)")
    names = unique_names(bots)
    workdir = tempfile.mkdtemp(prefix="arena-")
    writer = RecordWriter(record_path) if record_path else None
    server = RefereeServer(max_streams=4 * len(bots) + 4)
    handles: list[BotHandle] = []
    watchers: list[asyncio.Task] = []
    try:
        # one socket per seat, each in its own folder: a container sees only its own
        socket_dirs = [Path(workdir) / f"sock{i}" for i in range(len(bots))]
        addresses = []
        # gRPC listens only here, in a folder no sandbox mounts; each seat's socket is a
        # gate that accepts one connection and relays it here (see arena.referee.gate)
        server.listen_private(Path(workdir) / "referee")
        for d in socket_dirs:
            d.mkdir(mode=0o755)
            addresses.append(server.listen_seat(d))
        tcp_address = server.listen_tcp(listen_tcp) if listen_tcp else None
        box = make_sandbox(sandbox, **(limits or {}))
        await box.prepare([b for b in bots if not b.remote])
        session = MatchSession(
            rules,
            [SeatSpec(n) for n in names],
            seed,
            time_control,
            record=writer,
            sandbox=box.describe(),
            deals=deals,
            on_hand_end=on_hand_end,
        )
        server.add(session)
        await server.start()
        launched = time.perf_counter()
        for i, bot in enumerate(bots):
            token = session.seats[i].spec.token
            if bot.remote:
                assert tcp_address is not None
                if on_remote:
                    on_remote(Credentials(tcp_address, session.match_id, i, token), bot.name)
                continue
            creds = Credentials(addresses[i], session.match_id, i, token)
            handle = await box.start(bot, creds, workdir)
            handles.append(handle)
            session.seats[i].exit_grace_s = box.exit_grace_s

            async def watch(i: int = i, handle: BotHandle = handle) -> None:
                how, failed = await handle.wait()
                session.process_exited(i, how, failed)

            watchers.append(asyncio.create_task(watch()))
        summary = await session.run()
        summary["sandbox"] = box.name
        summary["sandbox_limits"] = box.describe()["limits"]
        connected = [s.connected_at for s in session.seats if s.connected_at is not None]
        if len(connected) == len(session.seats):  # launch of the first bot → last Hello
            summary["seats_ready_s"] = round(max(connected) - launched, 3)
        return summary
    finally:
        server.release_reserve()  # descriptors for stopping bots, whatever filled the table
        for t in watchers:
            t.cancel()
        for h in handles:
            with contextlib.suppress(Exception):
                await h.stop()
        with contextlib.suppress(Exception):
            await server.stop(0.2)
        if writer:
            writer.close()
        shutil.rmtree(workdir, ignore_errors=True)
