"""The leaderboard's charts as SVG markup made on the server: each Elo's 95% interval as a
bar on a scale common to the table, the top bots' rating over time, and the
likelihood-of-superiority matrix as a heat map.

Why on the server and by hand: contest servers are often offline (no CDN), the pages must
work under a Content-Security-Policy that runs no inline script, and the charts draw the
same numbers ``arena ladder show`` and ``arena ladder plot`` print — so they are plain
strings the templates embed with ``|safe``.  That makes this module responsible for what
goes in them: every text a participant chose (bot names) is passed through
:func:`arena.text.printable` (control characters and bidi overrides made visible),
stripped of what XML cannot hold, cut to a length, and escaped for text and attributes
alike.  The markup holds no script, no ``foreignObject``, no event attribute, no link and
no ``id`` (several charts share one page), and every number is formatted from a finite
float: a NaN or infinity is never written, it is drawn as "no value".
"""

from __future__ import annotations

import html
import itertools
import math
import numbers
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, TypeGuard

from ..ladder.history import History, RatingPoint
from ..ladder.ratings import SEPARATED_P
from ..text import printable

__all__ = [
    "MAX_HEATMAP",
    "MAX_LINES",
    "PALETTE",
    "common_scale",
    "interval_bar",
    "rating_chart",
    "superiority_heatmap",
]

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
"""The page's own font stack (``arena.css``): no web font is fetched."""

PALETTE = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#000000",  # black
    "#8C6D1F",  # brown (instead of Okabe–Ito's yellow, unreadable on white)
)
"""Okabe–Ito's colour-blind-safe colours, one per line of the rating chart, in rank order."""

MAX_LINES = len(PALETTE)
"""Bots in the rating chart at most: more lines than distinct colours cannot be told apart."""

MAX_HEATMAP = 30
"""Bots in the superiority heat map at most (the top ones); 900 cells still read."""

MAX_POINTS = 150
"""Points in time drawn per line at most: a long history is thinned evenly (first and last
kept), so a ladder that has stored thousands of snapshots still gives a small page."""

MAX_DOTS = 40
"""Points in time up to which each one gets a dot with a tooltip; past it, the last only."""

_MUTED = "#667085"
_LINE = "#d9dde5"
_FG = "#1d2330"


# ----- making text and numbers safe --------------------------------------------------------
def _xml_char(ch: str) -> bool:
    """Whether XML 1.0 can hold ``ch`` at all (``printable`` keeps U+FFFE, U+FFFF: they are
    unassigned, not controls, and a parser rejects the whole chart for them)."""
    cp = ord(ch)
    return cp in (0x9, 0xA, 0xD) or 0x20 <= cp <= 0xD7FF or 0xE000 <= cp <= 0xFFFD or cp >= 0x10000


def _clean(text: object, limit: int) -> str:
    """``text`` as one safe line of at most ``limit`` characters (ending ``…`` when cut),
    not yet escaped."""
    shown = printable(text, limit)
    return "".join(ch if _xml_char(ch) else "\ufffd" for ch in shown)


def _esc(text: object, limit: int = 80) -> str:
    """``text`` made safe and escaped for both element text and a quoted attribute."""
    return html.escape(_clean(text, limit), quote=True)


def _finite(x: Any) -> TypeGuard[float]:
    """Whether ``x`` is a real number that can be drawn (not None, NaN, infinite, a bool or
    a string); numpy's count too (the leaderboard's rows hold ``numpy.float64``)."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def _n(x: float) -> str:
    """A coordinate: one decimal, never ``-0.0``, never NaN (callers check first)."""
    text = f"{x:.1f}"
    return "0.0" if text == "-0.0" else text


def _elo(x: float) -> str:
    """An Elo as ``arena ladder show`` prints it (``+12``, ``-40``)."""
    text = f"{x:+.0f}"
    return "+0" if text == "-0" else text


def _svg(width: float, height: float, label: str, body: Iterable[str]) -> str:
    """The outer element: fixed viewBox, an accessible name and a tooltip title (``label``
    is already escaped)."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {_n(width)} {_n(height)}" width="{_n(width)}" height="{_n(height)}" '
        f'aria-label="{label}" font-family="{FONT}" font-size="12">'
        f"<title>{label}</title>" + "".join(body) + "</svg>"
    )


def _placeholder(message: str, width: float, height: float) -> str:
    """A chart with nothing to draw yet: the reason, centred, in a light frame."""
    body = (
        f'<rect x="0.5" y="0.5" width="{_n(width - 1)}" height="{_n(height - 1)}" '
        f'fill="#fafbfc" stroke="{_LINE}" rx="6"/>'
        f'<text x="{_n(width / 2)}" y="{_n(height / 2)}" text-anchor="middle" '
        f'dominant-baseline="middle" fill="{_MUTED}">{_esc(message)}</text>'
    )
    return _svg(width, height, _esc(message), [body])


def _size(value: Any, default: int, low: int, high: int) -> int:
    """A width or height within reason (a bad one falls back to the default)."""
    if not _finite(value):
        return default
    return int(min(high, max(low, value)))


# ----- nice axis ticks ---------------------------------------------------------------------
def nice_step(span: float, count: int = 5) -> float:
    """A round step (1, 2 or 5 × 10^k) giving about ``count`` ticks over ``span``."""
    if not _finite(span) or span <= 0:
        return 1.0
    raw = span / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    for m, up_to in ((1, 1.5), (2, 3.0), (5, 7.0)):
        if raw <= up_to * power:
            return m * power
    return 10 * power


def ticks(low: float, high: float, count: int = 5, integer: bool = False) -> list[float]:
    """The round values between ``low`` and ``high`` at a :func:`nice_step` (integers only
    with ``integer``: matches are counted)."""
    step = nice_step(high - low, count)
    if integer:
        step = max(1.0, round(step))
    first = math.ceil(low / step - 1e-9) * step
    out: list[float] = []
    v = first
    while v <= high + step * 1e-9 and len(out) < 50:
        out.append(0.0 if abs(v) < step * 1e-9 else v)
        v += step
    return out


def _tick_text(v: float, step: float) -> str:
    """A tick's label with as many decimals as its step needs."""
    decimals = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    text = f"{v:.{decimals}f}"
    return "0" if text.strip("-0.") == "" else text


# ----- the interval bar ---------------------------------------------------------------------
def common_scale(rows: Iterable[Mapping[str, Any]]) -> tuple[float, float]:
    """The Elo range every row's :func:`interval_bar` shares: from the lowest ``elo_low`` to
    the highest ``elo_high`` of the rows in the main field (leaderboard rows: ``elo``,
    ``elo_low``, ``elo_high``, ``in_field``), padded by 5% and rounded out to tens.

    Bots outside the main field are left out: their intervals rest on the ridge, not the
    data, and span thousands of Elo — one such bot would squash every other bar to a dot.
    Their bars are drawn open-ended instead.  With no finite interval at all the point
    estimates are used, and with nothing at all ±100; a single value gets ±50 around it."""
    lows: list[float] = []
    highs: list[float] = []
    points: list[float] = []
    for row in rows:
        elo, low, high = row.get("elo"), row.get("elo_low"), row.get("elo_high")
        if _finite(elo):
            points.append(float(elo))
        if row.get("in_field", True) and _finite(low) and _finite(high):
            lows.append(min(float(low), float(high)))
            highs.append(max(float(low), float(high)))
    if lows:
        lo, hi = min(lows), max(highs)
    elif points:
        lo, hi = min(points), max(points)
    else:
        return (-100.0, 100.0)
    span = hi - lo
    if span < 1e-9:
        lo, hi = lo - 50, hi + 50
    else:
        lo, hi = lo - 0.05 * span, hi + 0.05 * span
    return (math.floor(lo / 10) * 10, math.ceil(hi / 10) * 10)


def _sane_scale(scale: Any) -> tuple[float, float]:
    """``scale`` when it is two finite, distinct numbers; else one that can be drawn."""
    try:
        lo, hi = scale
    except (TypeError, ValueError):
        return (-100.0, 100.0)
    if not (_finite(lo) and _finite(hi)):
        return (-100.0, 100.0)
    lo, hi = float(min(lo, hi)), float(max(lo, hi))
    if hi - lo < 1e-9:
        return (lo - 50, hi + 50)
    return (lo, hi)


def interval_bar(
    elo: float,
    low: float,
    high: float,
    scale: tuple[float, float],
    width: int = 160,
    in_field: bool = True,
) -> str:
    """One leaderboard row's Elo as a small inline chart: its 95% interval as a bar and the
    estimate as a tick, on ``scale`` (:func:`common_scale` of the table, so the rows can be
    compared by eye), with the field mean (Elo 0) as a faint line.

    A bot outside the main field (``in_field`` False, or no finite interval) has no finite
    rating yet: it gets a dashed line over the whole scale and an open tick, with a
    tooltip saying why, never a bar that looks like a measurement.  An estimate off the
    scale is drawn at its edge as an arrow.  A missing or non-finite Elo gives an empty
    bar titled "no rating yet"."""
    width = _size(width, 160, 40, 2000)
    height = 18
    lo, hi = _sane_scale(scale)
    pad = 5.0
    inner = width - 2 * pad
    mid = height / 2

    def x(v: float) -> float:
        return pad + (min(hi, max(lo, v)) - lo) / (hi - lo) * inner

    if not _finite(elo):
        return _svg(
            width,
            height,
            _esc("no rating yet"),
            [
                f'<line x1="{_n(pad)}" y1="{_n(mid)}" x2="{_n(width - pad)}" y2="{_n(mid)}" '
                f'stroke="{_LINE}" stroke-dasharray="2 3"/>'
            ],
        )
    elo = float(elo)
    bounded = bool(in_field) and _finite(low) and _finite(high)
    body: list[str] = []
    if lo < 0 < hi:
        body.append(
            f'<line x1="{_n(x(0))}" y1="1" x2="{_n(x(0))}" y2="{_n(height - 1)}" '
            f'stroke="{_LINE}" stroke-width="1"/>'
        )
    if bounded:
        a, b = sorted((float(low), float(high)))
        label = f"Elo {_elo(elo)}, 95% interval {_elo(a)} to {_elo(b)}"
        x1, x2 = x(a), x(b)
        body.append(
            f'<rect class="interval" x="{_n(x1)}" y="{_n(mid - 4)}" '
            f'width="{_n(max(1.0, x2 - x1))}" height="8" rx="2" fill="#1f6feb" '
            f'fill-opacity="0.28" stroke="#1f6feb" stroke-opacity="0.6"/>'
        )
        for end, edge in ((a, x1), (b, x2)):  # an end cut by the scale gets an arrow
            if end < lo or end > hi:
                body.append(_arrow(edge, mid, -1 if end < lo else 1, "#1f6feb"))
        tick_fill = "#1f6feb"
    else:
        label = (
            f"Elo {_elo(elo)}: outside the main field (always behind or ahead of part of "
            "the field so far), so no finite rating or interval yet"
        )
        body.append(
            f'<line class="unbounded" x1="{_n(pad)}" y1="{_n(mid)}" x2="{_n(width - pad)}" '
            f'y2="{_n(mid)}" stroke="{_MUTED}" stroke-width="1.5" stroke-dasharray="3 3"/>'
        )
        tick_fill = "#ffffff"
    tx = x(elo)
    if elo < lo or elo > hi:
        body.append(_arrow(tx, mid, -1 if elo < lo else 1, _FG, big=True))
    body.append(
        f'<rect class="estimate" x="{_n(tx - 1.5)}" y="{_n(mid - 7)}" width="3" height="14" '
        f'fill="{tick_fill}" stroke="{_FG}" stroke-width="1"/>'
    )
    return _svg(width, height, _esc(label, 200), body)


def _arrow(x: float, y: float, direction: int, colour: str, big: bool = False) -> str:
    """A small triangle at ``x`` pointing left (−1) or right (+1): the value goes on past
    the edge of the scale."""
    size = 5.0 if big else 4.0
    tip = x + direction * size
    return (
        f'<path class="offscale" d="M{_n(tip)},{_n(y)} L{_n(x)},{_n(y - size)} '
        f'L{_n(x)},{_n(y + size)} Z" fill="{colour}"/>'
    )


# ----- the rating over time -----------------------------------------------------------------
Point = RatingPoint
"""A point as drawn: its interval NaN where it has no finite one."""


def _thin(history: History, most: int) -> History:
    """At most ``most`` points in time, evenly spread, first and last kept."""
    if len(history) <= most:
        return history
    picks = sorted({round(i * (len(history) - 1) / (most - 1)) for i in range(most)})
    return [history[i] for i in picks]


def _usable(point: Any) -> Point | None:
    """A history value as drawn (its interval NaN outside the main field), or None when it
    is no rating or its Elo is not a finite number (such a point is skipped, never drawn
    at 0)."""
    if not isinstance(point, RatingPoint):
        return None
    elo, low, high, in_field = point.elo, point.low, point.high, point.in_field
    if not _finite(elo):
        return None
    bounded = bool(in_field) and _finite(low) and _finite(high)
    if bounded:
        low, high = sorted((float(low), float(high)))
    return RatingPoint(
        float(elo),
        float(low) if bounded else math.nan,
        float(high) if bounded else math.nan,
        bounded,
    )


def _pick_bots(history: History, bots: Sequence[str] | None) -> tuple[list[str], int]:
    """The bots to draw and how many there are in all: those asked for (in that order,
    unknown ones dropped), else the top by latest rating — a bot missing from the last
    point in time (retired, or gone from the snapshots) ranks after those in it, by its
    last rating."""
    last: dict[str, tuple[bool, float]] = {}
    for k, (_, point) in enumerate(reversed(history)):  # newest first: latest value wins
        for b, value in point.items():
            if b in last:
                continue
            v = _usable(value)
            if v is not None:
                last[b] = (k == 0, v.elo)
    if bots is not None:
        chosen = [b for b in dict.fromkeys(bots) if b in last]
        return chosen[:MAX_LINES], len(chosen)
    ranked = sorted(last, key=lambda b: (not last[b][0], -last[b][1], b))
    return ranked[:MAX_LINES], len(ranked)


def rating_chart(
    history: History,
    bots: list[str] | None = None,
    width: int = 720,
    height: int = 320,
    bands: bool = True,
    retired: Collection[str] = (),
) -> str:
    """The top bots' Elo over time, as ``arena ladder plot`` draws it: one line per bot
    (at most :data:`MAX_LINES`: ``bots`` in that order, else the top by latest rating),
    its 95% interval as a light band where it has one, x the number of finished matches,
    y the Elo (field mean 0, drawn as a line), round ticks, a legend (names cut to fit,
    the whole name as a tooltip), retired bots dashed.

    ``history`` is :data:`arena.ladder.queries.History` (``rating_history``).  The y range
    is set by ratings in the main field: a point outside it (no finite rating, its Elo
    resting on the ridge at thousands) is drawn as an open circle, clamped to the edge
    when off the range, joined by a dotted segment — so one such bot never flattens every
    other line.  Each point has a tooltip with its numbers.  Nothing to draw gives a
    small chart saying "no rated matches yet"."""
    width = _size(width, 720, 240, 4000)
    height = _size(height, 320, 120, 3000)
    clean: History = []
    for n, point in history or []:
        if _finite(n) and isinstance(point, Mapping):
            clean.append((int(n), point))
    clean.sort(key=lambda item: item[0])
    chosen, total = _pick_bots(clean, bots)
    if not chosen:
        return _placeholder("no rated matches yet", width, min(height, 120))
    clean = _thin(clean, MAX_POINTS)
    series: dict[str, list[tuple[int, Point]]] = {}
    for b in chosen:
        series[b] = []
        for n, point in clean:
            v = _usable(point.get(b))
            if v is not None:
                series[b].append((n, v))

    # the ranges: x over the points in time drawn, y over the main field's values
    xs = [n for pts in series.values() for n, _ in pts]
    x_lo, x_hi = float(min(xs)), float(max(xs))
    if x_hi - x_lo < 1:
        x_lo, x_hi = max(0.0, x_lo - 1), x_hi + 1
    ys = [v.elo for pts in series.values() for _, v in pts if v.in_field]
    if not ys:  # nobody in the main field: show what there is
        ys = [v.elo for pts in series.values() for _, v in pts]
    y_lo, y_hi = min([*ys, 0.0]), max([*ys, 0.0])
    if bands:  # the bands too, but an early, very wide one is cut at the frame
        margin = max(50.0, 0.5 * (y_hi - y_lo))
        floor, ceiling = y_lo - margin, y_hi + margin
        for pts in series.values():
            for _, v in pts:
                if v.in_field:
                    y_lo = min(y_lo, max(v.low, floor))
                    y_hi = max(y_hi, min(v.high, ceiling))
    span = y_hi - y_lo
    if span < 1e-9:
        y_lo, y_hi = y_lo - 50, y_hi + 50
    else:
        y_lo, y_hi = y_lo - 0.06 * span, y_hi + 0.06 * span

    legend_w = min(200.0, width * 0.3)
    left, right, top, bottom = 52.0, legend_w + 16, 14.0, 40.0
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(n: float) -> float:
        return left + (n - x_lo) / (x_hi - x_lo) * plot_w

    def py(v: float) -> float:
        v = min(y_hi, max(y_lo, v))
        return top + (y_hi - v) / (y_hi - y_lo) * plot_h

    body: list[str] = [
        f'<rect x="{_n(left)}" y="{_n(top)}" width="{_n(plot_w)}" height="{_n(plot_h)}" '
        f'fill="#ffffff" stroke="{_LINE}"/>'
    ]
    # grid and ticks
    y_step = nice_step(y_hi - y_lo, 5)
    for tick in ticks(y_lo, y_hi, 5):
        y = py(tick)
        body.append(
            f'<line x1="{_n(left)}" y1="{_n(y)}" x2="{_n(left + plot_w)}" y2="{_n(y)}" '
            f'stroke="{"#9aa3b2" if tick == 0 else _LINE}" stroke-width="1"/>'
            f'<text x="{_n(left - 6)}" y="{_n(y)}" text-anchor="end" '
            f'dominant-baseline="middle" fill="{_MUTED}">{_tick_text(tick, y_step)}</text>'
        )
    x_step = max(1.0, round(nice_step(x_hi - x_lo, 6)))
    for tick in ticks(x_lo, x_hi, 6, integer=True):
        x = px(tick)
        body.append(
            f'<line x1="{_n(x)}" y1="{_n(top + plot_h)}" x2="{_n(x)}" y2="{_n(top + plot_h + 4)}" '
            f'stroke="{_MUTED}"/>'
            f'<text x="{_n(x)}" y="{_n(top + plot_h + 16)}" text-anchor="middle" '
            f'fill="{_MUTED}">{_tick_text(tick, x_step)}</text>'
        )
    body.append(
        f'<text x="{_n(left + plot_w / 2)}" y="{_n(height - 6)}" text-anchor="middle" '
        f'fill="{_MUTED}">matches finished</text>'
        f'<text x="12" y="{_n(top + plot_h / 2)}" text-anchor="middle" fill="{_MUTED}" '
        f'transform="rotate(-90 12 {_n(top + plot_h / 2)})">Elo (field mean 0)</text>'
    )
    # bands first (under every line), then lines and points
    for i, b in enumerate(chosen):
        colour = PALETTE[i % len(PALETTE)]
        if bands:
            for run in _runs([(n, v) for n, v in series[b]], lambda v: v.in_field):
                if len(run) < 2:
                    continue
                upper = " ".join(f"{_n(px(n))},{_n(py(v.high))}" for n, v in run)
                lower = " ".join(f"{_n(px(n))},{_n(py(v.low))}" for n, v in reversed(run))
                body.append(
                    f'<polygon class="band" points="{upper} {lower}" fill="{colour}" '
                    f'fill-opacity="0.12" stroke="none"/>'
                )
    for i, b in enumerate(chosen):
        colour = PALETTE[i % len(PALETTE)]
        dash = ' stroke-dasharray="6 4"' if b in retired else ""
        name = _esc(b, 60)
        pts = series[b]
        solid: list[str] = []
        dotted: list[str] = []
        for (n0, v0), (n1, v1) in itertools.pairwise(pts):
            seg = f"M{_n(px(n0))},{_n(py(v0.elo))} L{_n(px(n1))},{_n(py(v1.elo))}"
            (solid if v0.in_field and v1.in_field else dotted).append(seg)
        body.append(f'<g class="series" data-rank="{i + 1}">')
        if solid:
            body.append(
                f'<path d="{" ".join(solid)}" fill="none" stroke="{colour}" '
                f'stroke-width="2" stroke-linejoin="round"{dash}/>'
            )
        if dotted:
            body.append(
                f'<path d="{" ".join(dotted)}" fill="none" stroke="{colour}" '
                f'stroke-width="1.5" stroke-dasharray="1 3"/>'
            )
        # a dot with its numbers at every point in time, or at the last only when there
        # are many (each dot costs ~200 bytes of page; the line shows the shape)
        for n, v in pts if len(pts) <= MAX_DOTS else pts[-1:]:
            elo, low, high, bounded = v.elo, v.low, v.high, v.in_field
            cx, cy = px(n), py(elo)
            if bounded:
                tip = f"{name}: Elo {_elo(elo)} ({_elo(low)} to {_elo(high)}) after {n} matches"
                fill = colour
            else:
                tip = (
                    f"{name}: Elo {_elo(elo)} after {n} matches, outside the main field "
                    "(no finite rating yet)"
                )
                fill = "#ffffff"
            body.append(
                f'<circle cx="{_n(cx)}" cy="{_n(cy)}" r="3" fill="{fill}" stroke="{colour}" '
                f'stroke-width="1.5" data-elo="{_n(elo)}"><title>{tip}</title></circle>'
            )
        body.append("</g>")
    # the legend
    lx = width - legend_w
    chars = max(6, int((legend_w - 30) / 8.0))  # 12px type: about 8px for a wide letter
    for i, b in enumerate(chosen):
        colour = PALETTE[i % len(PALETTE)]
        y = top + 8 + i * 18
        dash = ' stroke-dasharray="4 3"' if b in retired else ""
        note = " (retired)" if b in retired else ""
        body.append(
            f'<line x1="{_n(lx)}" y1="{_n(y)}" x2="{_n(lx + 18)}" y2="{_n(y)}" '
            f'stroke="{colour}" stroke-width="2.5"{dash}/>'
            f'<text class="legend" x="{_n(lx + 24)}" y="{_n(y)}" dominant-baseline="middle" '
            f'fill="{_FG}"><title>{_esc(b, 200)}{note}</title>{_esc(b, chars)}</text>'
        )
    if total > len(chosen):
        y = top + 8 + len(chosen) * 18
        body.append(
            f'<text x="{_n(lx)}" y="{_n(y)}" dominant-baseline="middle" fill="{_MUTED}" '
            f'font-size="11">top {len(chosen)} of {total} bots</text>'
        )
    notes = ["band: 95% interval"] if bands else []
    if any(not v.in_field for pts in series.values() for _, v in pts):
        notes.insert(0, "open dot: no finite rating yet")
    for k, note in enumerate(reversed(notes)):
        body.append(
            f'<text x="{_n(lx)}" y="{_n(top + plot_h - 16 * k)}" fill="{_MUTED}" '
            f'font-size="11">{note}</text>'
        )
    label = _esc(
        f"Elo over time of the top {len(chosen)} bots, from {int(x_lo)} to {int(x_hi)} "
        "matches finished",
        200,
    )
    return _svg(width, height, label, body)


def _runs(pts: list[tuple[int, Point]], keep: Any) -> list[list[tuple[int, Point]]]:
    """The stretches of consecutive points for which ``keep(value)`` holds."""
    out: list[list[tuple[int, Point]]] = []
    current: list[tuple[int, Point]] = []
    for n, v in pts:
        if keep(v):
            current.append((n, v))
        elif current:
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


# ----- the superiority heat map -------------------------------------------------------------
def _blend(a: tuple[int, int, int], b: tuple[int, int, int], t: float) -> str:
    r, g, bl = (round(x + (y - x) * t) for x, y in zip(a, b, strict=True))
    return f"#{r:02x}{g:02x}{bl:02x}"


_NEUTRAL = (247, 247, 247)
_STRONGER = (33, 102, 172)  # ColorBrewer RdBu's blue: P near 1, the row bot stronger
_WEAKER = (178, 24, 43)  # and its red: P near 0


def cell_colour(p: float) -> str:
    """A probability on a diverging scale: 0.5 neutral grey-white, towards 1 blue, towards
    0 red (ColorBrewer's RdBu, readable with the common colour-vision deficiencies)."""
    if not _finite(p):
        return "#e4e7ec"
    p = min(1.0, max(0.0, float(p)))
    t = abs(p - 0.5) * 2
    return _blend(_NEUTRAL, _STRONGER if p > 0.5 else _WEAKER, t)


def _cell_text(p: float) -> str:
    """Two decimals; never "1.00" or "0.00" (a normal approximation is never certain, even
    when the float rounds to 1)."""
    if p >= 0.995:
        return ">.99"
    if p < 0.005:
        return "<.01"
    return f"{p:.2f}"


def _tip_text(p: float) -> str:
    """As ``arena ladder show --matrix`` prints it."""
    return ">0.999" if p >= 0.9995 else "<0.001" if p < 0.0005 else f"{p:.3f}"


def superiority_heatmap(labels: list[str], matrix: dict[str, dict[str, float]]) -> str:
    """The likelihood of superiority, P(row bot stronger than column bot), as
    ``arena ladder show --matrix`` prints it: ``labels`` in rank order, ``matrix`` as the
    leaderboard rows' ``superiority`` fields (``{row["bot"]: row["superiority"]}``).

    Each cell coloured on a diverging scale (0.5 neutral) with its value printed, bold
    when the pair is separated (P ≥ ``SEPARATED_P``, the leaderboard's "next" criterion);
    the diagonal blank; a missing or non-finite value grey with a dash.  Names are cut to
    fit (the whole name as a tooltip).  Cells and type shrink with the number of bots; past
    :data:`MAX_HEATMAP` only the top ones are drawn and the caption says so."""
    names = [str(b) for b in dict.fromkeys(labels or [])]
    total = len(names)
    if total < 2:
        return _placeholder("no superiority matrix yet: it needs two rated bots", 420, 80)
    names = names[:MAX_HEATMAP]
    n = len(names)
    cell = 44.0 if n <= 8 else max(24.0, 44.0 - (n - 8) * 1.0)
    font = 12.0 if n <= 8 else max(8.5, 12.0 - (n - 8) * 0.18)
    chars = 22 if n <= 12 else 16
    label_w = min(chars, max(len(_clean(b, chars)) for b in names)) * font * 0.62 + 10
    left = label_w + 22  # the rank numbers too
    top = label_w * 0.72 + 16  # column names at −45°
    caption_h = 40.0
    width = left + n * cell + label_w * 0.72 + 8  # the last column's name leans right
    height = top + n * cell + caption_h
    body: list[str] = []
    for i, b in enumerate(names):
        cx = left + i * cell + cell / 2
        y = top + i * cell + cell / 2
        full = _esc(b, 200)
        short = _esc(b, chars)
        body.append(
            f'<text class="row-label" x="{_n(left - 6)}" y="{_n(y)}" text-anchor="end" '
            f'dominant-baseline="middle" font-size="{_n(font)}" fill="{_FG}">'
            f"<title>{full}</title>{short}</text>"
            f'<text x="4" y="{_n(y)}" dominant-baseline="middle" font-size="{_n(font)}" '
            f'fill="{_MUTED}">{i + 1}</text>'
            f'<text class="col-label" x="{_n(cx)}" y="{_n(top - 6)}" font-size="{_n(font)}" '
            f'fill="{_FG}" transform="rotate(-45 {_n(cx)} {_n(top - 6)})">'
            f"<title>{full}</title>{short}</text>"
        )
    for i, a in enumerate(names):
        row = matrix.get(a, {}) if isinstance(matrix, Mapping) else {}
        row = row if isinstance(row, Mapping) else {}
        for j, b in enumerate(names):
            x, y = left + j * cell, top + i * cell
            if i == j:
                body.append(
                    f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(cell)}" height="{_n(cell)}" '
                    f'fill="#ffffff" stroke="{_LINE}"/>'
                )
                continue
            p = row.get(b)
            if _finite(p):
                p = min(1.0, max(0.0, float(p)))
                fill, text = cell_colour(p), html.escape(_cell_text(p))
                strong = abs(p - 0.5) * 2 > 0.55
                sep = max(p, 1 - p) >= SEPARATED_P
                tip = html.escape(
                    f"P({_clean(a, 40)} stronger than {_clean(b, 40)}) = {_tip_text(p)}"
                    + (" (separated)" if sep else "")
                )
                weight = ' font-weight="700"' if sep else ""
                ink = "#ffffff" if strong else _FG
            else:
                fill, text, tip, weight, ink = (
                    cell_colour(math.nan),
                    "–",
                    html.escape(f"no estimate for {_clean(a, 40)} against {_clean(b, 40)}"),
                    "",
                    _MUTED,
                )
            body.append(
                f'<g class="cell" data-row="{i}" data-col="{j}"><title>{tip}</title>'
                f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(cell)}" height="{_n(cell)}" '
                f'fill="{fill}" stroke="#ffffff"/>'
                f'<text x="{_n(x + cell / 2)}" y="{_n(y + cell / 2)}" text-anchor="middle" '
                f'dominant-baseline="central" font-size="{_n(font)}" fill="{ink}"{weight}>'
                f"{text}</text></g>"
            )
    caption = f"P(row stronger than column); bold: separated (P ≥ {SEPARATED_P})"
    body.append(
        f'<text x="4" y="{_n(top + n * cell + 18)}" font-size="11" fill="{_MUTED}">'
        f"{_esc(caption, 200)}</text>"
    )
    if total > n:
        body.append(
            f'<text class="cut" x="4" y="{_n(top + n * cell + 34)}" font-size="11" '
            f'fill="{_MUTED}">only the top {n} of {total} bots are shown</text>'
        )
    label = _esc(f"Likelihood of superiority between the top {n} bots", 200)
    return _svg(width, height, label, body)
