"""What ``arena replay`` shows: a match record, checked event by event by the engine
(:func:`arena.record.replay`), drawn as ``arena demo`` draws its match
(:class:`arena.demo.DemoPrinter`) but with the bots' names — the header, each deal, each
move, trick and hand result — plus the referee's faults where they happened, and, with
``--step``, a prompt after every move.

Every field of a record is someone else's text (a record can be hostile): what this module
shows of it goes through :func:`arena.text.printable` and into :class:`rich.text.Text`
(never markup).  The cards, moves and scores it draws are the engine's, which agreed with
the record before anything was drawn."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeGuard

from rich.console import Console
from rich.text import Text

from bigtwo import PRESETS, Game, RuleSet

from .demo import DemoPrinter, standings_table
from .record import Replay, replay, replay_events
from .text import printable

STEP_PROMPT = "Enter next move · n next hand · c to the end · q quit · ? help › "
STEP_HELP = (
    "  Enter   show the next move",
    "  n       the rest of this hand without stopping",
    "  c       the rest of the record without stopping",
    "  q       quit: say what was checked so far (exit 0)",
    "  ?       this help",
    "  Ctrl-D (end of input) stops like q; Ctrl-C interrupts (exit 130)",
)


class StopReplay(Exception):
    """The person stepping through the record stopped it (``q`` or end of input)."""


def rules_summary(rules: RuleSet) -> str:
    """``hk`` for a preset, else the nearest preset and the options that differ:
    ``hk with match_end=hands, match_end_value=2``."""
    if rules.preset_name:
        return f"{rules.preset_name} (preset)"
    mine = rules.to_dict()

    def changes(name: str) -> list[str]:
        base = RuleSet.preset(name).to_dict()
        return [f"{k}={_value(v)}" for k, v in mine.items() if base[k] != v]

    nearest = min(PRESETS, key=lambda name: len(changes(name)))
    return f"{nearest} with {', '.join(changes(nearest))}"


def _value(v: Any) -> str:
    return ("on" if v else "off") if isinstance(v, bool) else str(v)


def _seat_names(header: dict[str, Any], players: int) -> list[str]:
    """Each seat's bot as the header names it; ``?`` where it does not."""
    names = ["?"] * players
    seats = header.get("seats")
    for i, entry in enumerate(seats if isinstance(seats, list) else []):
        if i < players and isinstance(entry, dict) and "bot" in entry:
            names[i] = printable(entry["bot"], 24)
    return names


def _is_seat(value: Any, players: int) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < players


class ReplayPrinter(DemoPrinter):
    """The demo's printer; each move line also shows the referee's turn id and whether the
    referee played it (a fault's default action, or a forfeited seat)."""

    event: dict[str, Any] | None = None  # the record's turn event being shown

    def move_text(self, game: Game, action: Any) -> Text:
        line = super().move_text(game, action)
        ev = self.event or {}
        turn = Text(f"{printable(ev.get('turn'), 24):>4}", style="dim")
        out = Text.assemble(turn, line)
        if ev.get("by_referee"):
            out.append("   (played by the referee)", style="yellow")
        return out


class ReplayView:
    """Called with every checked event of a record (``on_event`` of
    :func:`arena.record.replay`); draws it and, with ``step``, waits for a key after each
    move.  ``read_line`` reads one answer ('' at end of input, as ``readline`` does)."""

    def __init__(
        self,
        console: Console,
        name: str,
        step: bool = False,
        read_line: Callable[[], str] = sys.stdin.readline,
        echoes: bool | None = None,
    ) -> None:
        self.console = console
        self.name = name  # the record's, as shown: a file's path or "ladder 'x' match 42"
        self.read_line = read_line
        # a terminal echoes the Enter that ends an answer; piped input does not
        self.echoes = sys.stdin.isatty() if echoes is None else echoes
        self.stepping = step  # stop after each move
        self.skip_hand = False  # `n`: stepping resumes at the next deal
        self.printer: ReplayPrinter | None = None
        self.header: dict[str, Any] = {}
        self.players = 0
        self.moves = 0
        self.hands = 0
        self.faults = 0
        self.forfeited: set[str] = set()
        self.where = "the header"

    # ----- events ----------------------------------------------------------------------
    def __call__(self, kind: Any, game: Game | None, ev: dict[str, Any]) -> None:
        handler = {
            "match": self._on_match,
            "deal": self._on_deal,
            "turn": self._on_turn,
            "fault": self._on_fault,
            "hand_end": self._on_hand_end,
            "match_end": self._on_match_end,
        }.get(kind if isinstance(kind, str) else "")
        if handler is None:
            self._say(f"  (an event of type {printable(kind, 40)}: not checked, not shown)")
        else:
            handler(game, ev)

    def _say(self, text: str, style: str = "dim") -> None:
        self.console.print(Text(text, style=style))

    def _on_match(self, game: Game | None, header: dict[str, Any]) -> None:
        if self.printer is not None:  # a later segment: fresh bot instances, same seats
            segment = printable(header.get("segment", "?"), 12)
            self._say(
                f"— segment {segment}: fresh bot instances, match "
                f"{printable(header.get('match_id'), 40)}"
            )
            return
        rules = game.rules if game is not None else RuleSet.from_dict(header["rules"])
        self.header = header
        self.players = rules.players
        names = _seat_names(header, rules.players)
        self.printer = ReplayPrinter(self.console, rules, names=names)
        c = self.console
        c.print(
            Text.assemble(
                ("Match ", "bold"),
                (printable(header.get("match_id", "?"), 40), "bold"),
                f"  (record {printable(self.name, 200)})",
            )
        )
        deals = (
            "from the record (duplicate play: each deal as written)"
            if header.get("deals") == "explicit"
            else f"from seed {printable(header.get('seed'), 60)}"
        )
        rows = [("rules", rules_summary(rules)), ("deals", deals)]
        tc = header.get("time_control")
        if isinstance(tc, dict):
            rows.append(
                (
                    "clock",
                    f"{printable(tc.get('move_ms'), 12)} ms a move, "
                    f"{printable(tc.get('bank_ms'), 12)} ms bank per seat, "
                    f"forfeit at {printable(tc.get('max_strikes'), 12)} strikes",
                )
            )
        sandbox = header.get("sandbox")
        if isinstance(sandbox, dict):
            rows.append(("sandbox", printable(sandbox.get("name"), 40)))
        started = _when(header.get("started_at"))
        if started:
            rows.append(("started", started))
        for label, value in rows:
            c.print(Text.assemble((f"  {label:<8}", "dim"), value))
        for s in range(rules.players):
            c.print(
                Text.assemble(("  bots    " if s == 0 else " " * 10, "dim"), self.printer.who(s))
            )

    def _on_deal(self, game: Game | None, ev: dict[str, Any]) -> None:
        assert game is not None and self.printer is not None
        self.skip_hand = False
        self.printer("deal", game, None)

    def _on_turn(self, game: Game | None, ev: dict[str, Any]) -> None:
        assert game is not None and self.printer is not None
        self.printer.event = ev
        self.printer("move", game, game.history[-1])
        self.moves += 1
        self.where = f"hand {game.hand_no + 1}, turn {printable(ev.get('turn'), 24)}"
        if self.stepping and not self.skip_hand:
            self._ask()

    def _on_fault(self, game: Game | None, ev: dict[str, Any]) -> None:
        self.faults += 1
        seat = ev.get("seat")
        who = self.printer.who(seat) if self.printer and _is_seat(seat, self.players) else None
        where = []
        hand, turn = ev.get("hand"), ev.get("turn")
        if isinstance(hand, int) and not isinstance(hand, bool):
            where.append(f"hand {hand + 1}")
        if turn is not None:
            where.append(f"turn {printable(turn, 24)}")
        line = Text("  ⚠ fault ", style="bold red")
        line.append(who or f"seat {printable(seat, 12)}")
        line.append(f": {printable(ev.get('kind'), 24)}", style="red")
        if where:
            line.append(f" ({', '.join(where)})")
        # the detail (the bot's own words) where the record has it: a local match's record,
        # or a ladder's for its operator; a public record has the referee's reason only
        said = ev["detail"] if "detail" in ev else ev.get("reason", "")
        line.append(f": {printable(said, 500)}")
        if ev.get("strike"):
            tc = self.header.get("time_control")
            limit = tc.get("max_strikes") if isinstance(tc, dict) else None
            of = "" if limit is None else f" of {printable(limit, 12)}"
            line.append(f"  [strike {printable(ev.get('strikes'), 12)}{of}]", style="yellow")
        self.console.print(line)
        if ev.get("forfeited") is True and (key := printable(seat, 12)) not in self.forfeited:
            self.forfeited.add(key)
            self._say("    the seat forfeits: the referee plays it from now on", "yellow")

    def _on_hand_end(self, game: Game | None, ev: dict[str, Any]) -> None:
        assert game is not None and self.printer is not None
        self.hands += 1
        self.printer("hand", game, game.results[-1])

    def _on_match_end(self, game: Game | None, ev: dict[str, Any]) -> None:
        assert game is not None and self.printer is not None
        self.console.print(standings_table(game, self.printer.names))

    # ----- --step ----------------------------------------------------------------------
    def _ask(self) -> None:
        while True:
            self.console.print(Text(STEP_PROMPT, style="dim"), end="")
            self.console.file.flush()  # a pipe buffers what has no newline yet
            try:
                answer = self.read_line()
            except KeyboardInterrupt:
                self.console.print()  # end the prompt's line
                raise
            if not answer:  # end of input (Ctrl-D)
                self.console.print()
                raise StopReplay("end of input")
            if not self.echoes:
                self.console.print()
            key = answer.strip().lower()
            if key == "":
                return
            if key == "n":
                self.skip_hand = True
                return
            if key == "c":
                self.stepping = False
                return
            if key == "q":
                raise StopReplay("q pressed")
            if key not in ("?", "h", "help"):
                self._say(f"  unknown key {printable(key, 20)!r}", "yellow")
            for line in STEP_HELP:
                self._say(line, "")


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def _when(stamp: Any) -> str | None:
    if isinstance(stamp, bool) or not isinstance(stamp, int | float):
        return None
    try:
        return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return None


def show_replay(
    path: Path | str,
    console: Console,
    step: bool = False,
    quiet: bool = False,
    read_line: Callable[[], str] = sys.stdin.readline,
    events: Iterable[tuple[int, dict[str, Any]]] | None = None,
) -> Replay | None:
    """Replay ``path`` through the engine, drawing it (unless ``quiet``), and end with one
    line saying what was checked.  Returns the replay, or None when the person stepping
    stopped it (what was checked until then is reported).

    ``events``: the record already read (a ladder's, from its database), ``path`` then
    only its name in what is shown and in errors.

    Raises :class:`arena.record.RecordError` at the first disagreement; KeyboardInterrupt
    passes through."""
    name = printable(path, 200)
    view = ReplayView(console, name, step=step, read_line=read_line)
    on_event = None if quiet else view
    try:
        if events is None:
            rep = replay(Path(path), on_event=on_event)
        else:
            rep = replay_events(events, name, on_event=on_event)
    except StopReplay as stop:
        console.print(
            Text(
                f"{name}: replay stopped ({stop}) after {view.where}: "
                f"{_count(view.moves, 'move')} in {_count(view.hands, 'complete hand')} "
                f"checked, {_count(view.faults, 'fault')}, all legal so far"
            )
        )
        return None
    state = "complete" if rep.complete else "INCOMPLETE (the match did not finish)"
    assert rep.game is not None
    console.print(
        Text(
            f"{name}: {rep.turns} moves in {len(rep.game.results)} hands, "
            f"{len(rep.faults)} faults, all legal; record {state}; "
            f"scores {list(rep.game.scores)}"
        )
    )
    return rep
