"""The Play page's tables: one person against bots, refereed like any match.

A :class:`Table` runs :func:`arena.match.run_match` in the web server's event loop with the
person's seat as a ``remote`` seat whose client is a :class:`arena.web.human.HumanSeat` in
this process.  The bots run in the server's sandbox like ladder bots, so legality, time
control (the person's own: a minute a move by default), faults, scores and the record are
the referee's.  The table keeps every update the page is sent, in order, so a page that
reloads (or a second tab) rebuilds the same state by reading them again; it adds what the
person may know but the seat's stream does not carry: whose turn is next and who is locked
out (from a shadow of the public game), every hand's cards at hand end (from the referee's
own result, given to ``on_hand_end``), the replay's address at match end.

A page that goes away for good (no connection for the person's move time) is a seat that
leaves: its stream is closed, the referee records a disconnect, and the fallback plays the
seat to the end, as for a bot that disconnects.  Finished matches are stored (``HumanGame``)
to be replayed; they are not ladder matches and no rating reads them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bigtwo import PASS, Game, RuleSet
from bigtwo.answers import encode_move
from bigtwo.cards import CARDS
from bigtwo.jsontext import loads_bounded
from bigtwo.record import RecordError, compress, read_events

from ..bots import BotSpec, is_sample_bot, resolve, sample_names
from ..match import run_match
from ..referee.results import MatchResult
from ..referee.time_control import TimeControl
from ..text import printable
from .human import HumanSeat, epoch_ms
from .table_budget import Held, PlayLimits, decide

log = logging.getLogger("arena.web.tables")

HUMAN_MOVE_MS = 60_000
"""A person's time for a move (docs/web.md, Play): a bot has a second, a person a minute."""
HUMAN_STRIKES = 3
"""Time-outs in a match that forfeit the seat, as for a bot: the fallback plays it out."""
MAX_REQUEST_CHARS = 2000
"""A page's request is a few cards: anything longer is not one."""
SAMPLE_STRENGTH = ("heuristic", "expert", "greedy", "random")
"""The sample bots, strongest first, as a ladder of them ranks them (hk, 8 matches: the
heuristic 134 Elo, the expert 48, greedy −38, random −144): the default opponents and the
hint bots' order."""


def sample_bots_by_strength() -> list[str]:
    names = sample_names()
    known = [n for n in SAMPLE_STRENGTH if n in names]
    return known + sorted(n for n in names if n not in known)


def default_opponents(players: int) -> list[str]:
    """One sample bot per other seat, strongest first (the last one again when there are
    more seats than sample bots): who a person plays when they name nobody."""
    names = sample_bots_by_strength()[: players - 1]
    while len(names) < players - 1:
        names.append(names[-1])
    return names


@dataclass(frozen=True)
class TableSetup:
    """What a person asked for: the rules, their seat, one opponent per other seat."""

    rules: RuleSet
    seat: int
    opponents: tuple[BotSpec, ...]
    person: str = "you"
    move_ms: int = HUMAN_MOVE_MS

    def __post_init__(self) -> None:
        players = self.rules.players
        if not 0 <= self.seat < players:
            raise ValueError(f"seat must be 0–{players - 1} for {players} players")
        if len(self.opponents) != players - 1:
            raise ValueError(f"{players} players need {players - 1} opponents")
        if not 1000 <= self.move_ms <= 3_600_000:
            raise ValueError("a person's move time must be 1 s to 1 h")

    def bots(self) -> list[BotSpec]:
        """Every seat's spec, the person's a remote seat."""
        person = BotSpec(self.person, None, remote=True)
        others = list(self.opponents)
        return [*others[: self.seat], person, *others[self.seat :]]


@dataclass
class Table:
    """One person's match.  ``log``: every update sent to the page so far; ``listeners``:
    the connected pages' queues."""

    id: str
    owner: int | None
    setup: TableSetup
    address: str = ""
    """Where the person opened it from (``security.client_address``): a cap per address."""
    last_move: float = field(default_factory=time.monotonic)
    """When the person last moved (or the table opened): how idle it is."""
    memory_mb: int = 0
    """What its bot seats may take, counted against the server's budget."""
    limits: dict[str, Any] | None = None
    """The sandbox's limits for its bots (None: the sandbox's own)."""
    seed: str = field(default_factory=lambda: secrets.token_hex(16))
    status: str = "starting"  # starting → playing → over | failed | interrupted
    log: list[dict[str, Any]] = field(default_factory=list)
    listeners: set[asyncio.Queue[dict[str, Any]]] = field(default_factory=set)
    replay_url: str = ""
    person: HumanSeat = field(init=False)
    names: list[str] = field(default_factory=list)
    _task: asyncio.Task[None] | None = None
    _seat_task: asyncio.Task[Any] | None = None
    _leave: asyncio.Task[None] | None = None
    _shadow: Game | None = None
    _reveals: dict[int, list[list[str]]] = field(default_factory=dict)
    _held: list[dict[str, Any]] = field(default_factory=list)  # the match's end, until stored
    _reclaimed: str = ""

    def __post_init__(self) -> None:
        self.person = HumanSeat(self.setup.person)
        self.replay_url = f"/play/{self.id}/replay"

    # ----- the match ------------------------------------------------------------------
    def start(self, tables: Tables) -> None:
        self._task = asyncio.create_task(self._run(tables), name=f"table {self.id}")

    async def _run(self, tables: Tables) -> None:
        setup = self.setup
        human_tc = TimeControl(
            move_ms=setup.move_ms,
            bank_ms=0,
            startup_ms=tables.time_control.startup_ms,
            max_strikes=HUMAN_STRIKES,
        )
        forward = asyncio.create_task(self._forward())

        def seated(creds: Any, _name: str) -> None:
            self._seat_task = asyncio.create_task(self.person.play(creds))

        def reveal(_session: Any, result: Any) -> None:
            self._reveals[result.hand] = [[str(c) for c in cs] for cs in result.remaining]

        summary: MatchResult | None = None
        with tempfile.TemporaryDirectory(prefix="arena-play-") as tmp:
            record = Path(tmp) / "match.jsonl"
            try:
                self._shadow = Game(setup.rules, seed=self.seed)
                self.status = "playing"
                summary = await run_match(
                    setup.bots(),
                    setup.rules,
                    self.seed,
                    tables.time_control,
                    tables.sandbox,
                    record_path=record,
                    on_hand_end=reveal,
                    listen_tcp="127.0.0.1:0",
                    on_remote=seated,
                    all_must_start=True,
                    seat_time={setup.seat: human_tc},
                    limits=self.limits,
                )
            except asyncio.CancelledError:  # the server stops, or the table is reclaimed
                self.status = "interrupted"
                with contextlib.suppress(Exception):
                    tables.store_end(self, None, b"")
                if self._reclaimed:
                    self._publish({"type": "closed"})
                raise
            except Exception as exc:  # the server's sandbox or a bot: the page is told
                log.exception("table %s failed", self.id)
                self.status = "failed"
                self._publish({"type": "error", "why": printable(f"{exc}", 300)})
            finally:
                seat_task = self._seat_task
                if seat_task is not None and self.status != "interrupted":
                    # the seat reads the match's end after the referee has sent it
                    with contextlib.suppress(BaseException):
                        await asyncio.wait({seat_task}, timeout=5)
                if seat_task is not None:
                    seat_task.cancel()
            try:
                events = [event for _, event in read_events(record)]
            except RecordError:  # none written (the match never started)
                events = []
        if summary is not None and summary.aborted:
            self.status = "failed"
            self._publish({"type": "error", "why": printable(summary.aborted, 300)})
        elif summary is not None:
            self.status = "over"
        with contextlib.suppress(Exception):
            await asyncio.to_thread(tables.store_end, self, summary, compress(events))
        # the match's end reaches the page once its replay is there to be opened
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(forward, 5)
        if not forward.done():
            forward.cancel()
        if not self._held and self.status == "over" and summary is not None:
            # the seat left before the end (its page closed): the end is the referee's
            seats = summary.seats
            self._held.append(
                {
                    "type": "match_end",
                    "scores": [s.score for s in seats],
                    "places": [s.place for s in seats],
                    "forfeited": [s.forfeit for s in seats],
                    "replay_url": self.replay_url,
                }
            )
        for update in self._held:
            self._publish(update)
        self._publish({"type": "closed"})

    async def _forward(self) -> None:
        """The seat's updates, with what the person may also know, to the log and pages."""
        while True:
            update = await self.person.updates.get()
            kind = update["type"]
            if kind == "closed":
                return
            self._enrich(update)
            if kind == "match_end":
                update["replay_url"] = self.replay_url
                self._held.append(update)  # sent once the record is stored
                return
            self._publish(update)

    def _enrich(self, update: dict[str, Any]) -> None:
        kind = update["type"]
        if kind == "match_start":
            self.names = list(update["names"])
            return
        g = self._shadow
        if kind == "hand_start" and g is not None:
            if g.hand_over:
                g.next_hand()
            if [str(c) for c in g.hand(self.setup.seat)] != update["cards"]:
                log.warning("table %s: shadow game diverged at hand start", self.id)
                self._shadow = None
        elif kind == "move" and g is not None:
            try:
                g.apply(PASS if update["cards"] is None else g.rules.classify(update["cards"]))
            except Exception:
                log.warning("table %s: shadow game refused a move", self.id)
                self._shadow = None
                return
            update["next"] = -1 if g.hand_over else g.turn
            update["locked_out"] = sorted(g.locked_out)
        elif kind == "hand_end":
            hands = self._reveals.get(update["hand"])
            if hands is None and g is not None and g.results:
                hands = [[str(c) for c in cs] for cs in g.results[-1].remaining]
            update["hands"] = hands

    def _publish(self, update: dict[str, Any]) -> None:
        self.log.append(update)
        for queue in self.listeners:
            queue.put_nowait(update)

    # ----- pages ----------------------------------------------------------------------
    def attach(self) -> tuple[list[dict[str, Any]], asyncio.Queue[dict[str, Any]]]:
        """A page connects: everything so far, and its queue of what comes next (taken in
        one step, so nothing falls between)."""
        if self._leave is not None:
            self._leave.cancel()
            self._leave = None
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.listeners.add(queue)
        return list(self.log), queue

    def detach(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        """A page goes.  With no page left for the person's move time, the person has left:
        the seat's stream closes and the referee handles it as a bot's disconnect."""
        self.listeners.discard(queue)
        if not self.listeners and self.status in ("starting", "playing") and self._leave is None:
            self._leave = asyncio.create_task(self._left_after(self.setup.move_ms / 1000))

    async def _left_after(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        if not self.listeners and self._seat_task is not None and not self._seat_task.done():
            log.info("table %s: the person left; the fallback plays their seat", self.id)
            self._publish({"type": "left"})
            self._seat_task.cancel()

    def hello(self) -> dict[str, Any]:
        return {
            "type": "hello",
            "now": epoch_ms(),
            "seat": self.setup.seat,
            "names": self.names or [b.name for b in self.setup.bots()],
            "status": self.status,
        }

    async def request(self, text: str, hint_bots: list[str]) -> dict[str, Any]:
        """One request from the page (hostile like anything a client sends): a play, a
        pass, a check of a selection, a hint.  Returns the reply."""
        if len(text) > MAX_REQUEST_CHARS:
            return {"type": "error", "why": "request too long"}
        try:
            msg = loads_bounded(text)  # deep nesting too: a ValueError, not a crash
        except ValueError:
            return {"type": "error", "why": "not JSON"}
        if not isinstance(msg, dict):
            return {"type": "error", "why": "a request is a JSON object"}
        kind, ident = msg.get("type"), msg.get("id")
        ident = ident if isinstance(ident, int) and not isinstance(ident, bool) else None
        cards = msg.get("cards", [])
        if (
            not isinstance(cards, list)
            or len(cards) > 20
            or not all(isinstance(c, str) and len(c) <= 3 for c in cards)
        ):
            return {"type": "error", "why": "cards must be a list of card texts such as 9D"}
        if kind in ("play", "pass"):
            turn_id = msg.get("turn_id")
            if not isinstance(turn_id, int) or isinstance(turn_id, bool):
                return {"type": "error", "why": "turn_id must be a whole number"}
            why = await self.person.answer(turn_id, "pass" if kind == "pass" else cards)
            if why:
                return {"type": "refused", "turn_id": turn_id, "why": why}
            self.last_move = time.monotonic()
            return {"type": "sent", "turn_id": turn_id}
        if kind == "check":
            return {"type": "check", "cards": cards, "id": ident} | self.person.check(cards)
        if kind == "hint":
            return {"type": "hint", "id": ident} | await self._hint(msg.get("bot"), hint_bots)
        return {"type": "error", "why": "unknown request"}

    async def _hint(self, name: Any, allowed: list[str]) -> dict[str, Any]:
        """What a sample bot would play here (our own code, on the person's own
        observation: it sees nothing the person does not), computed in the hint pool's
        processes (``arena.web.hints``), never in this server's interpreter."""
        from .hints import POOL, HintBusy

        if not isinstance(name, str) or name not in allowed:
            return {"bot": None, "cards": None, "label": "", "why": "choose a sample bot"}
        obs = self.person.observation()
        if obs is None:
            return {"bot": name, "cards": None, "label": "", "why": "wait for your turn"}
        spec = resolve(name)
        if not is_sample_bot(spec):
            return {"bot": None, "cards": None, "label": "", "why": "not a sample bot"}
        try:
            move = await POOL.ask(spec.runner_spec, obs)
        except HintBusy as exc:
            return {"bot": name, "cards": None, "label": "", "why": str(exc)}
        except TimeoutError:
            return {"bot": name, "cards": None, "label": "", "why": f"{name} took too long"}
        except Exception as exc:
            return {"bot": name, "cards": None, "label": "", "why": f"{name} failed: {exc}"}
        try:
            is_pass, ids = encode_move(move)  # read as the client reads a bot's answer
        except Exception:
            return {"bot": name, "cards": None, "label": "", "why": f"{name} had no answer"}
        if is_pass:
            return {"bot": name, "cards": None, "label": "pass", "why": None}
        combo = obs.rules.classify([CARDS[i] for i in ids])
        if combo is None:
            return {"bot": name, "cards": None, "label": "", "why": f"{name} had no answer"}
        return {
            "bot": name,
            "cards": [str(c) for c in combo.cards],
            "label": combo.describe(),
            "why": None,
        }

    def reclaim(self, why: str) -> None:
        """End the table now to free what it holds (see ``table_budget``): its page is told
        why, the game is stored as interrupted, its bots are stopped."""
        if self._reclaimed or self.status not in ("starting", "playing"):
            return
        self._reclaimed = why
        self.status = "interrupted"  # no longer live, from now on (its bots stop meanwhile)
        log.info("table %s reclaimed: %s", self.id, why)
        self._publish({"type": "error", "why": why})
        for task in (self._leave, self._task):
            if task is not None and not task.done():
                task.cancel()

    async def stop(self) -> None:
        for task in (self._leave, self._task):
            if task is not None and not task.done():
                task.cancel()
        if self._task is not None:
            with contextlib.suppress(BaseException):
                await self._task


class TableLimit(ValueError):
    """No new table now (too many live ones); the message says why."""


@dataclass
class Tables:
    """The server's live tables.  ``store_start``/``store_end`` keep each game in the
    database (given by the app, so this module needs no session).  Which tables may open is
    a budget (``limits``, see :mod:`arena.web.table_budget`): memory promised to bots,
    tables per account and per address, idle tables reclaimed, fair when full."""

    sandbox: str
    time_control: TimeControl
    store_start: Callable[[Table], None]
    store_end: Callable[[Table, MatchResult | None, bytes], None]
    limits: PlayLimits | None = None
    live: dict[str, Table] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.limits is None:
            self.limits = PlayLimits.from_settings({}, self.sandbox)

    @property
    def max_live(self) -> int:
        assert self.limits is not None
        return self.limits.max_live

    def open(
        self, owner: int | None, setup: TableSetup, table_id: str | None = None, address: str = ""
    ) -> Table:
        """A new table, or :class:`TableLimit` saying why not.  Tables the budget reclaims
        to make room (idle ones, or an over-share account's longest-idle) end first."""
        limits = self.limits
        assert limits is not None
        self._forget_finished()
        cost = (setup.rules.players - 1) * limits.seat_mb
        moment = time.monotonic()
        playing = [t for t in self.live.values() if t.status in ("starting", "playing")]
        held = [
            Held(t.id, t.owner, t.address, t.memory_mb, moment - t.last_move)
            for t in playing
            if not t._reclaimed
        ]
        verdict = decide(limits, held, owner, address, cost)
        for victim, why in verdict.reclaim:
            self.live[victim].reclaim(why)
        if verdict.refusal is not None:
            raise TableLimit(verdict.refusal)
        table = Table(
            table_id or secrets.token_urlsafe(18),
            owner,
            setup,
            address=address,
            memory_mb=cost,
            limits={"memory_mb": limits.seat_mb} if limits.enforce_seat_mb else None,
        )
        self.store_start(table)
        self.live[table.id] = table
        table.start(self)
        return table

    def end_for(self, owner: int, why: str) -> None:
        """End every live table of an account (its password was reset: whoever held the
        account keeps no seat)."""
        for table in list(self.live.values()):
            if table.owner == owner:
                table.reclaim(why)

    def get(self, table_id: str) -> Table | None:
        return self.live.get(table_id)

    def _forget_finished(self) -> None:
        """Finished tables stay for their pages a while (the page may still be reading);
        past the limit the oldest finished ones go (their games are stored)."""
        done = [k for k, t in self.live.items() if t.status in ("over", "failed", "interrupted")]
        for key in done[: max(0, len(done) - self.max_live)]:
            del self.live[key]

    async def close(self) -> None:
        await asyncio.gather(*(t.stop() for t in self.live.values()), return_exceptions=True)
