"""Why a leaderboard row with fewer points a hand is ranked above the next one: one line
per such pair of neighbouring rows, worked out from the very deal blocks the ratings were
fitted on, so that the line is a fact about this ladder and not a generic caveat.

The rank is the Plackett–Luce fit over each block's *orders* (:mod:`.ratings`,
``duplicate.block_rankings``): who finished ahead of whom in every game and with every set
of cards — never by how much.  The points column is the bot's mean points a hand over all
its matches.  The two can disagree, and these are the reasons, checked in this order:

- ``out_of_field``: one of the two has finished ahead of (or behind) part of the field in
  every block so far; its Elo rests on the fit's ridge, not on a finite estimate.
- ``forfeits``: the lower bot forfeited hands: each counts as last place in the ratings,
  but the points its fallback policy made in it count in the points column, and they
  raised it above what the bot's own hands made.
- ``margins``: the upper bot finished ahead of the lower more often in the orders of the
  deals they shared, while the lower bot's wins were bigger.  Big Two pays a hand's winner
  everybody's penalties, so points are heavy-tailed: a bot that finishes ahead often and
  narrowly outranks one that wins seldom but big.
- ``opponents``: points a hand depend on whom a bot played (the groups differ), and the
  fit allows for that; the lower bot met weaker opponents (their mean Elo).
- ``field``: over all its comparisons with everyone it met, the upper bot finished ahead
  more often and the lower bot's wins were bigger.
- ``unsettled``: none of the above shows in the data; the ratings order the pair on the
  whole field's orders, and the line gives their comparison rates.

Whenever the ratings cannot yet separate the two (``Fit.separated``), the line also says
so, with P(upper stronger).  Computed once per fit, in the leaderboard layer
(:func:`attach_order_notes`), and carried in the rows (``order_note``) to the web page, its
JSON API and ``arena ladder show``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from operator import methodcaller
from typing import Any, Literal, TypeVar

import numpy as np

from .ratings import Fit, separated

Key = TypeVar("Key", bound=Hashable)
Blocks = Sequence[Sequence[Mapping[Any, float]]]
BlockSource = Blocks | Callable[[set[Any]], Blocks]
"""The blocks, or a reader of the blocks that seat any of a set of entrants (the ladder's
leaderboard reads them only when a pair disagrees, and only those: a refit of 100,000
matches must not re-read every result)."""
"""The fit's evidence (``leaderboard.rated_blocks``): per block its orders, the games first
(one per rotation), then the card sets; entrant → points a hand, ``-inf`` for a hand a
forfeited seat's fallback played."""

UPPER, LOWER = "\x00upper\x00", "\x00lower\x00"
"""Where the two names go in a note's sentence while it is built (in no text of ours): the
sentence is cut at them before any name is put in, so no name can be mistaken for one."""

Reason = Literal["out_of_field", "forfeits", "margins", "opponents", "field", "unsettled"]


@dataclass(frozen=True)
class PairRecord:
    """Two entrants in the orders of the blocks they both played (each game and card-set
    order holding both: the comparisons the fit itself reads)."""

    blocks: int
    orders: int
    upper_ahead: int
    lower_ahead: int
    upper_margin: float | None
    """Mean points a hand by which the upper bot finished ahead, over the orders it did
    (forfeited hands, whose margin is not a number of points, left out)."""
    lower_margin: float | None


@dataclass(frozen=True)
class FieldRecord:
    """One entrant against everyone it met: every order of every block it played, compared
    with each other entrant in that order."""

    blocks: int
    comparisons: int
    ahead: int
    margin_ahead: float | None
    """Mean points a hand by which it finished ahead, when it did."""
    opponents_elo: float | None
    """Mean Elo of the other entrants of its blocks (per block; main-field bots only: one
    outside it has no finite rating to average)."""
    own_hands: int
    """Games of its rated blocks its own code played (not forfeited)."""
    own_points: float | None
    """Its mean points a hand in those games."""
    forfeited_hands: int


@dataclass(frozen=True)
class NotePart:
    """A piece of a note's line: our words and numbers, or one of the two bots' names as
    written (``bot``): a page shows a name isolated from the words around it (a right-to-left
    override in a name must not turn the rest of the sentence round), a terminal escapes it."""

    text: str
    bot: bool


@dataclass(frozen=True)
class OrderNote:
    """Why ``upper`` (rank ``rank``) stands above ``lower`` with fewer points a hand."""

    rank: int
    upper: str
    lower: str
    upper_points: float
    lower_points: float
    reason: Reason
    superiority: float
    """P(upper stronger than lower), from the fit."""
    separated: bool
    pair: PairRecord
    upper_field: FieldRecord
    lower_field: FieldRecord
    text: str
    """The line shown: bot names as written (each screen makes them harmless its way)."""
    parts: list[NotePart]
    """The same line in pieces, each name a piece of its own."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> OrderNote:
        return cls(
            **{
                **data,
                "pair": PairRecord(**data["pair"]),
                "upper_field": FieldRecord(**data["upper_field"]),
                "lower_field": FieldRecord(**data["lower_field"]),
                "parts": [NotePart(**part) for part in data["parts"]],
            }
        )


class _Orders:
    """The orders of the blocks that hold any wanted entrant, as arrays: one row per order,
    its entrants (``ids``, padded with ``pad``) and their points (``vals``, NaN-padded),
    each order's block, and whether it is a game (the first ``rotations`` of its block).
    Built in one pass over the blocks (a ladder of 100,000 matches has 3 million orders:
    counted one by one in Python that took a minute), then counted per entrant by numpy."""

    def __init__(self, blocks: Blocks, rotations: int, wanted: set[Any]) -> None:
        chosen = [b for b in blocks if b and not wanted.isdisjoint(b[0].keys())]
        orders = [o for b in chosen for o in b]
        per_block = np.fromiter(map(len, chosen), np.int64, len(chosen))
        lens = np.fromiter(map(len, orders), np.int64, len(orders))
        total = int(lens.sum())
        keys = list(itertools.chain.from_iterable(orders))
        self.index: dict[Any, int] | None = None  # None: the keys are ints, used as they are
        flat = np.array(keys) if keys else np.zeros(0, np.int64)
        if flat.dtype.kind not in "iu" or flat.ndim != 1:  # names, or anything else
            self.index = {}
            flat = np.fromiter((self.index.setdefault(k, len(self.index)) for k in keys), np.int64)
        flat = flat.astype(np.int64)
        values = itertools.chain.from_iterable(map(methodcaller("values"), orders))
        vals = np.fromiter(values, np.float64, total)
        n, width = len(orders), int(lens.max()) if len(orders) else 1
        self.pad = int(flat.min()) - 1 if total else -1
        row = np.repeat(np.arange(n), lens)
        col = np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens)
        self.ids = np.full((n, width), self.pad, np.int64)
        self.vals = np.full((n, width), np.nan)
        self.ids[row, col], self.vals[row, col] = flat, vals
        self.block = np.repeat(np.arange(len(chosen)), per_block)
        place = np.arange(n) - np.repeat(np.cumsum(per_block) - per_block, per_block)
        self.game, self.first = place < rotations, place == 0
        # the wanted entrants' places, sorted by entrant (then by order): one slice each
        codes = np.array(sorted({self.code(k) for k in wanted}), np.int64)
        theirs = np.flatnonzero(np.isin(flat, codes))
        by_code = theirs[np.argsort(flat[theirs], kind="stable")]
        self._codes, self._rows = flat[by_code], row[by_code]

    def code(self, key: Any) -> int:
        """``key`` as it is in ``ids`` (no entrant's code when it is in no order)."""
        if self.index is None:
            return int(key) if type(key) is int else self.pad
        return self.index.get(key, self.pad)

    def elo_of(self, elo: Mapping[Any, float]) -> Callable[[np.ndarray], np.ndarray]:
        """A lookup: codes → their Elo (NaN for a code with none)."""
        pairs = sorted((self.code(k), e) for k, e in elo.items() if self.code(k) != self.pad)
        known = np.array([c for c, _ in pairs], np.int64)
        rating = np.array([e for _, e in pairs], np.float64)

        def look(codes: np.ndarray) -> np.ndarray:
            if not len(known):
                return np.full(codes.shape, np.nan)
            at = np.clip(np.searchsorted(known, codes), 0, len(known) - 1)
            return np.where(known[at] == codes, rating[at], np.nan)

        return look

    def mine(self, key: Any) -> tuple[np.ndarray, np.ndarray]:
        """The orders holding ``key`` (sorted row numbers) and its points in each."""
        code = self.code(key)
        lo, hi = np.searchsorted(self._codes, [code, code + 1])
        rows = self._rows[lo:hi]
        at = np.argmax(self.ids[rows] == code, axis=1)
        return rows, self.vals[rows, at]


def _field(orders: _Orders, key: Any, elo_of: Callable[[np.ndarray], np.ndarray]) -> FieldRecord:
    rows, mine = orders.mine(key)
    code = orders.code(key)
    ids, vals = orders.ids[rows], orders.vals[rows]
    others = (ids != orders.pad) & (ids != code)
    ahead = others & (mine[:, None] > vals)
    with np.errstate(invalid="ignore"):
        gap = mine[:, None] - vals
    counted = ahead & np.isfinite(mine)[:, None] & np.isfinite(vals)
    games = mine[orders.game[rows]]
    own = games[np.isfinite(games)]
    # opponents: per block, the mean Elo of the others in its first game (every entrant)
    first = ids[orders.first[rows]]
    rated = elo_of(first)
    rated[first == code] = np.nan
    counts = np.sum(~np.isnan(rated), axis=1)
    means = np.nansum(rated, axis=1)[counts > 0] / counts[counts > 0]
    margins = int(counted.sum())
    return FieldRecord(
        blocks=len(np.unique(orders.block[rows])),
        comparisons=int(others.sum()),
        ahead=int(ahead.sum()),
        margin_ahead=float(gap[counted].sum() / margins) if margins else None,
        opponents_elo=float(means.mean()) if len(means) else None,
        own_hands=len(own),
        own_points=float(own.mean()) if len(own) else None,
        forfeited_hands=int(np.sum(np.isneginf(games))),
    )


def _pair(orders: _Orders, a: Any, b: Any) -> PairRecord:
    rows_a, va = orders.mine(a)
    rows_b, vb = orders.mine(b)
    shared, ia, ib = np.intersect1d(rows_a, rows_b, assume_unique=True, return_indices=True)
    va, vb = va[ia], vb[ib]
    finite = np.isfinite(va) & np.isfinite(vb)
    a_ahead, b_ahead = va > vb, vb > va
    a_n, b_n = int(np.sum(a_ahead & finite)), int(np.sum(b_ahead & finite))
    with np.errstate(invalid="ignore"):
        gap = va - vb
    return PairRecord(
        blocks=len(np.unique(orders.block[shared])),
        orders=len(shared),
        upper_ahead=int(a_ahead.sum()),
        lower_ahead=int(b_ahead.sum()),
        upper_margin=float(gap[a_ahead & finite].sum() / a_n) if a_n else None,
        lower_margin=float(-gap[b_ahead & finite].sum() / b_n) if b_n else None,
    )


def _pct(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)}%" if whole else "–"


def _because(
    up: dict[str, Any],
    low: dict[str, Any],
    pair: PairRecord,
    fu: FieldRecord,
    fl: FieldRecord,
    field: tuple[float, float],
) -> tuple[Reason, str]:
    """The reason and its clause, from the first rule the data meets (module docstring);
    ``field``: the lowest and highest Elo in the main field.  Comparisons are made on the
    numbers as the line shows them (a margin to 0.1, an Elo to 1), so that no line says
    "more" of two equal numbers."""
    a, b = UPPER, LOWER  # the names go in afterwards (``OrderNote.parts``)
    out = [r for r in (up, low) if not r.get("in_field", True)]
    if out:
        where = {
            "behind" if r["elo"] < field[0] else "ahead of" if r["elo"] > field[1] else "?"
            for r in out
        }
        side = where.pop() if len(where) == 1 and "?" not in where else "ahead of (or behind)"
        return (
            "out_of_field",
            f"{' and '.join(a if r is up else b for r in out)}'s Elo is not finite yet: "
            f"{'they have' if len(out) > 1 else 'it has'} finished {side} part of the field "
            "in every deal so far",
        )
    if fl.forfeited_hands and fl.own_points is not None and fl.own_points < low["points_per_hand"]:
        n = fl.forfeited_hands
        return (
            "forfeits",
            f"{b}'s {n} forfeited hand{'s count' if n != 1 else ' counts'} as last place in "
            "the Elo, "
            f"while the points its fallback made in them count in pts/hand: in the hands it "
            f"played itself {b} made {fl.own_points:+.2f} a hand",
        )
    met = (
        f"{_pct(pair.upper_ahead, pair.orders)} of the {pair.orders} hand and card-set orders "
        f"of the {pair.blocks} deal{'s' if pair.blocks != 1 else ''} they shared"
    )
    if (
        pair.orders
        and pair.upper_ahead > pair.lower_ahead
        and round(pair.lower_margin or 0.0, 1) > round(pair.upper_margin or 0.0, 1)
    ):
        return (
            "margins",
            f"{a} finished ahead of {b} in {met}, but {b} won by more when ahead: "
            f"{pair.lower_margin or 0.0:+.1f} vs {pair.upper_margin or 0.0:+.1f} points a hand "
            "(the Elo counts who finishes ahead, not by how much)",
        )
    head = f"; head to head {a} finished ahead in {met}" if pair.orders else ""
    if not pair.orders:
        head = f"; {a} and {b} never played the same deal"
    if (
        fl.opponents_elo is not None
        and fu.opponents_elo is not None
        and round(fl.opponents_elo) < round(fu.opponents_elo)
    ):
        return (
            "opponents",
            f"{b} met weaker opponents (mean Elo {fl.opponents_elo:+.0f}, {a}'s "
            f"{fu.opponents_elo:+.0f}): points a hand depend on whom a bot plays, the Elo "
            f"allows for it{head}",
        )
    rates = (
        f"against everyone they met {a} finished ahead in "
        f"{_pct(fu.ahead, fu.comparisons)} of its comparisons, {b} in "
        f"{_pct(fl.ahead, fl.comparisons)}"
    )
    if (
        fu.comparisons
        and fl.comparisons
        and fu.ahead * fl.comparisons > fl.ahead * fu.comparisons
        and round(fl.margin_ahead or 0.0, 1) > round(fu.margin_ahead or 0.0, 1)
    ):
        return (
            "field",
            f"{rates}, but {b} won by more when ahead: {fl.margin_ahead or 0.0:+.1f} vs "
            f"{fu.margin_ahead or 0.0:+.1f} points a hand (the Elo counts who finishes ahead, "
            f"not by how much){head}",
        )
    return "unsettled", f"the Elo weighs every order of the whole field: {rates}{head}"


def order_notes(
    rows: Sequence[dict[str, Any]],
    blocks: BlockSource,
    rotations: int,
    keys: Mapping[str, Key],
    fit: Fit[Key],
) -> dict[int, OrderNote]:
    """For each pair of neighbouring rated rows (in the order given) whose points a hand,
    as shown (two decimals), put the lower row ahead: the note, by the upper row's index in
    ``rows``.  ``keys``: a row's bot label → its key in ``blocks`` and ``fit``."""
    rated = [(i, r) for i, r in enumerate(rows) if r.get("rated")]
    pairs = []
    for (i, up), (_, low) in itertools.pairwise(rated):
        pu, pl = up.get("points_per_hand"), low.get("points_per_hand")
        if pu is None or pl is None or round(pu, 2) >= round(pl, 2):
            continue
        if up["bot"] in keys and low["bot"] in keys:
            pairs.append((i, up, low))
    if not pairs:
        return {}
    in_field = {r.bot: r.elo for r in fit.ratings if r.in_field}
    field = (min(in_field.values(), default=0.0), max(in_field.values(), default=0.0))
    wanted = {keys[r["bot"]] for _, up, low in pairs for r in (up, low)}
    orders = _Orders(blocks(wanted) if callable(blocks) else blocks, rotations, wanted)
    elo_of = orders.elo_of(in_field)
    records = {k: _field(orders, k, elo_of) for k in wanted}
    notes = {}
    for i, up, low in pairs:
        a, b = keys[up["bot"]], keys[low["bot"]]
        pair = _pair(orders, a, b)
        fu, fl = records[a], records[b]
        reason, why = _because(up, low, pair, fu, fl, field)
        p = fit.superiority[a][b]
        apart = separated(p)
        if not apart:
            why += f"; the ratings cannot tell them apart yet (P({UPPER} stronger) = {p:.2f})"
        names: dict[str, str] = {UPPER: up["bot"], LOWER: low["bot"]}
        parts = [
            NotePart(names.get(piece, piece), piece in names)
            for piece in re.split(f"({re.escape(UPPER)}|{re.escape(LOWER)})", why + ".")
            if piece
        ]
        notes[i] = OrderNote(
            rank=int(up["rank"]),
            upper=up["bot"],
            lower=low["bot"],
            upper_points=float(up["points_per_hand"]),
            lower_points=float(low["points_per_hand"]),
            reason=reason,
            superiority=round(p, 4),
            separated=apart,
            pair=pair,
            upper_field=fu,
            lower_field=fl,
            text="".join(part.text for part in parts),  # never capitalised: a name may lead
            parts=parts,
        )
    return notes


def attach_order_notes(
    rows: list[dict[str, Any]],
    blocks: BlockSource,
    rotations: int,
    keys: Mapping[str, Key],
    fit: Fit[Key] | None,
) -> None:
    """Set every row's ``order_note``: :func:`order_notes`' note as JSON on the upper row of
    a pair whose orders disagree, None elsewhere (the rows travel as JSON: stored fits, the
    API, ``ladder show --json``)."""
    notes = order_notes(rows, blocks, rotations, keys, fit) if fit is not None else {}
    for i, row in enumerate(rows):
        note = notes.get(i)
        row["order_note"] = note.to_json() if note else None
