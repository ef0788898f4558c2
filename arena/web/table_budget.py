"""How many Play tables the server holds, and whose: quotas as budgets, not request counts.

A Play table is a match whose bots run in the server's sandbox while a person thinks, so
what a table costs is what its bots may take: each bot seat's memory limit (the sandbox's
own: 1 GiB a bot in the process sandbox, 256 MiB in Docker), held for as long as the table
lives.  Counting tables alone let 20 tables × 3 bots × 1 GiB be promised on a 24 GiB
machine, and let ten accounts hold all twenty.  So:

- **A memory budget.**  Every live table's bot seats count their memory limit against a
  budget: by default half the machine's memory (``MemTotal``, or the cgroup's limit when
  lower), set by ``ARENA_PLAY_MEMORY`` (``"40%"`` or MiB) or the ``play_memory_mb`` setting.
  A table that would pass it is refused with the numbers.  The default budget always holds
  at least one four-player table, so ``arena play`` works on a small machine.
- **A table cap** (``max_live``, 20): sockets, tasks and the referee's own work are not
  free even for in-process bots.
- **Per account** at most ``per_account`` (2) live tables, **per address** at most
  ``per_address`` (6: a classroom behind one router still plays, one visitor with many
  accounts does not take the server).
- **Idle tables reclaimed.**  A table whose person made no move for ``idle_s`` (10 min) is
  ended when someone wants a table (a page gone for the move time already hands the seat to
  the referee's fallback, which plays it out; a person who stays but never moves runs into
  the referee's strikes — this catches the rest, e.g. a long configured move time).
- **Fair when full.**  Each table loads the server by the larger of its share of the memory
  budget and its share of the table cap.  With ``n`` accounts holding or asking for tables,
  each account's fair share is ``1/n``.  When a newcomer's table does not fit and the
  newcomer would stay within its share, the longest-idle tables of accounts holding more
  than their share make room — but never an account's last table: the person playing one
  game is never the one thrown out.  So ten accounts holding two tables each cannot keep an
  eleventh out, and the one who lost a table cannot take it straight back (it now holds
  its share).

The decision is a pure function of what is live (:func:`decide`), so it is tested and read
without a server.
"""

from __future__ import annotations

import inspect
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("arena.web.table_budget")

DEFAULT_FRACTION = 0.5
"""The share of the machine's memory Play tables' bots may be promised by default: the
other half is the web server's, the ladder's matches' and the system's."""
INPROC_SEAT_MB = 64
"""What an in-process bot (``--sandbox inproc``, tests and ``arena play``) is counted at: it
has no limit of its own, and a sample bot needs a few MiB."""
MAX_SEATS = 3
"""The most bot seats a table has (four players, one of them the person)."""


def machine_memory_mb() -> int:
    """The memory this server may use, in MiB: ``MemTotal`` from ``/proc/meminfo`` (else the
    page count times the page size), or the cgroup's memory limit when that is lower (a
    server in a container sees the host's ``MemTotal``)."""
    total = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                total = int(line.split()[1]) // 1024
                break
    except (OSError, ValueError, IndexError):
        pass
    if not total:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
        except (ValueError, OSError, AttributeError):
            total = 4096
    for limit_file in (
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ):
        try:
            text = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) // 2**20 < total:
            total = int(text) // 2**20
    return total


def seat_memory_mb(sandbox: str) -> int:
    """The memory limit the sandbox gives one bot (its default, as a Play table runs it).
    ``auto`` may be either backend, so it counts the larger."""
    from ..sandbox.containers import ContainerLimits
    from ..sandbox.process import ProcessSandbox

    docker = ContainerLimits().memory_mb
    process = int(inspect.signature(ProcessSandbox.__init__).parameters["memory_mb"].default)
    return {"docker": docker, "process": process, "inproc": INPROC_SEAT_MB}.get(
        sandbox, max(docker, process)
    )


def parse_budget(text: str, total_mb: int) -> int:
    """``"40%"`` of the machine's memory, or a number of MiB."""
    text = text.strip()
    try:
        if text.endswith("%"):
            fraction = float(text[:-1]) / 100
            if not 0 < fraction <= 1:
                raise ValueError
            return int(total_mb * fraction)
        value = int(text)
        if value <= 0:
            raise ValueError
        return value
    except ValueError:
        raise ValueError(
            f"ARENA_PLAY_MEMORY={text!r}: give a share of memory ('40%') or MiB ('8192')"
        ) from None


@dataclass(frozen=True)
class PlayLimits:
    """The Play tables' budget (see the module's doc)."""

    budget_mb: int
    seat_mb: int
    max_live: int = 20
    per_account: int = 2
    per_address: int = 6
    idle_s: float = 600.0
    enforce_seat_mb: bool = False
    """Pass ``seat_mb`` to the sandbox (when it was set rather than read from it), so what a
    seat is counted at is what it is held to."""

    @classmethod
    def from_settings(cls, extra: dict[str, Any], sandbox: str) -> PlayLimits:
        """From ``WebConfig.extra`` (``play_memory_mb``, ``play_seat_mb``, ``play_max_live``,
        ``play_per_account``, ``play_per_address``, ``play_idle_s``), then the
        ``ARENA_PLAY_MEMORY`` environment variable, then the defaults."""
        seat = int(extra.get("play_seat_mb") or seat_memory_mb(sandbox))
        if extra.get("play_memory_mb"):
            budget = int(extra["play_memory_mb"])
        else:
            total = machine_memory_mb()
            text = os.environ.get("ARENA_PLAY_MEMORY", "").strip()
            budget = int(total * DEFAULT_FRACTION)
            if text:
                try:
                    budget = parse_budget(text, total)
                except ValueError as exc:  # a server still starts, and says why
                    log.warning("%s; using the default, %d MiB", exc, budget)
            budget = max(budget, MAX_SEATS * seat)  # one table of four always fits
        return cls(
            budget_mb=budget,
            seat_mb=seat,
            max_live=int(extra.get("play_max_live", 20)),
            per_account=int(extra.get("play_per_account", 2)),
            per_address=int(extra.get("play_per_address", 6)),
            idle_s=float(extra.get("play_idle_s", 600.0)),
            enforce_seat_mb=bool(extra.get("play_seat_mb")),
        )

    def load(self, cost_mb: int) -> float:
        """A table's share of the server: the larger of its share of the memory budget and
        its share of the table cap."""
        return max(cost_mb / self.budget_mb, 1 / self.max_live)


@dataclass(frozen=True)
class Held:
    """A live table as the budget sees it."""

    table_id: str
    owner: int | None
    address: str
    cost_mb: int
    idle_s: float


@dataclass(frozen=True)
class Verdict:
    """What opening a table takes: the tables to end first (each with the reason its page
    is given), or why it is refused."""

    reclaim: tuple[tuple[str, str], ...] = ()
    refusal: str | None = None


def decide(
    limits: PlayLimits, held: list[Held], owner: int | None, address: str, cost_mb: int
) -> Verdict:
    """May ``owner`` (None: ``arena play``'s local person) at ``address`` open a table of
    ``cost_mb``, given the live tables ``held``?"""
    reclaim: list[tuple[str, str]] = []
    live = []
    for h in held:
        if h.idle_s >= limits.idle_s:
            minutes = max(1, round(limits.idle_s / 60))
            reclaim.append((h.table_id, f"this table was idle (no move for {minutes} min)"))
        else:
            live.append(h)
    if owner is not None:
        mine = sum(h.owner == owner for h in live)
        if mine >= limits.per_account:
            return Verdict(
                tuple(reclaim),
                f"you already play {limits.per_account} games: finish or leave one first",
            )
        if sum(h.address == address for h in live) >= limits.per_address:
            return Verdict(
                tuple(reclaim),
                f"{limits.per_address} games are already being played from your address "
                "(its limit): finish one first",
            )

    def refusal(tables: list[Held]) -> str | None:
        used = sum(h.cost_mb for h in tables)
        if used + cost_mb > limits.budget_mb:
            return (
                f"the server's memory for Play tables is taken ({used} of {limits.budget_mb}"
                f" MiB promised; this table's bots need {cost_mb} MiB): try again soon or "
                "choose fewer players"
            )
        if len(tables) + 1 > limits.max_live:
            return f"the server is busy ({limits.max_live} games): try again soon"
        return None

    why = refusal(live)
    if why is None:
        return Verdict(tuple(reclaim))
    if owner is None:
        return Verdict(tuple(reclaim), why)
    # fair when full: room from the longest-idle tables of accounts over their share
    share = 1 / len({h.owner for h in live} | {owner})
    if (
        sum(limits.load(h.cost_mb) for h in live if h.owner == owner) + limits.load(cost_mb)
        > share + 1e-9
    ):
        return Verdict(tuple(reclaim), why)
    room = list(live)
    made: list[tuple[str, str]] = []
    for victim in sorted(live, key=lambda h: -h.idle_s):
        theirs = [h for h in room if h.owner == victim.owner]
        over = sum(limits.load(h.cost_mb) for h in theirs) > share + 1e-9
        if victim.owner is None or len(theirs) < 2 or not over:
            continue
        room.remove(victim)
        made.append((victim.table_id, "this table was closed to make room for another player"))
        if refusal(room) is None:
            return Verdict(tuple(reclaim + made))
    return Verdict(tuple(reclaim), why)
