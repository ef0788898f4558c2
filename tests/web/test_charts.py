"""The leaderboard's SVG charts (arena.web.charts): well-formed, safe with hostile bot names,
geometry that says what the numbers say, and no crash on NaN, infinity or nothing.

Every chart is parsed with ElementTree (a browser parsing inline SVG in HTML is more
lenient: what XML accepts, it accepts too), then walked element by element."""

from __future__ import annotations

import itertools
import math
import random
import re
import xml.etree.ElementTree as ET
from collections.abc import Hashable
from typing import Any

import pytest

from arena.ladder.history import History, RatingPoint
from arena.ladder.ratings import fit_plackett_luce
from arena.ladder.simulate import play_blocks
from arena.web.charts import (
    MAX_HEATMAP,
    MAX_LINES,
    cell_colour,
    common_scale,
    interval_bar,
    rating_chart,
    superiority_heatmap,
    ticks,
)

HOSTILE = [
    "</svg><script>alert(1)</script>",
    '"onload="alert(2)',
    "x' onmouseover='alert(3)",
    "\x1b[2J\x1b]0;owned\x07red\x1b[31m",
    "A" * 500,
    "名前🂡 ünïcødé",
    "\u202eevil\u202c",
    "bad\ufffe\uffffchars\x00",
    "lone\ud800surrogate",
    "&amp;<![CDATA[x]]><!-- c -->",
]

NUMERIC = {"x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r", "width", "height", "points", "d"}
FORBIDDEN_TAGS = {"script", "foreignObject", "iframe", "a", "image", "use", "style", "object"}


def local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def parse(svg: str) -> ET.Element:
    """The chart as a tree, after the checks every chart must pass: one <svg> root with a
    viewBox, role img, an accessible name and a <title>; no script, link, foreign content
    or event attribute anywhere; every coordinate a finite number."""
    root = ET.fromstring(svg)
    assert local(root.tag) == "svg"
    assert re.fullmatch(r"0 0 [\d.]+ [\d.]+", root.get("viewBox", ""))
    assert root.get("role") == "img" and root.get("aria-label")
    assert local(root[0].tag) == "title" and root[0].text
    assert "sans-serif" in root.get("font-family", "")
    for el in root.iter():
        assert local(el.tag) not in FORBIDDEN_TAGS, el.tag
        for name, value in el.attrib.items():
            bare = local(name).lower()
            assert not bare.startswith("on"), name
            assert "href" not in bare and "javascript:" not in value.lower()
            if bare in NUMERIC:
                assert not re.search(r"nan|inf", value, re.I), (name, value)
                for number in re.findall(r"-?[\d.]+", value):
                    assert math.isfinite(float(number))
    return root


def find(root: ET.Element, tag: str, cls: str | None = None) -> list[ET.Element]:
    return [
        el
        for el in root.iter()
        if local(el.tag) == tag and (cls is None or cls in el.get("class", "").split())
    ]


def texts(root: ET.Element) -> str:
    """Every text in the chart (element text and attribute values), as a reader gets it."""
    parts = []
    for el in root.iter():
        parts += [el.text or "", el.tail or "", *el.attrib.values()]
    return "\n".join(parts)


def history_of(final: dict[str, float], steps: int = 5) -> History:
    """Ratings converging on ``final`` over ``steps`` points in time, ±40 intervals."""
    out: History = []
    for k in range(1, steps + 1):
        point = {
            b: RatingPoint(e * k / steps, e * k / steps - 40, e * k / steps + 40, True)
            for b, e in final.items()
        }
        out.append((10 * k, point))
    return out


def visible(el: ET.Element) -> str:
    """An element's own text as drawn: without its tooltip (a <title> child)."""
    return (el.text or "") + "".join(child.tail or "" for child in el)


def legend(root: ET.Element) -> list[str]:
    """The legend's names, whole (from their tooltips), top to bottom."""
    return [el[0].text or "" for el in find(root, "text", "legend")]


# ----- safety ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_are_text_in_every_chart(name: str) -> None:
    final = {name: 120.0, "plain": 0.0, "other": -80.0}
    charts = [
        rating_chart(history_of(final)),
        superiority_heatmap(
            [name, "plain", "other"],
            {
                name: {"plain": 0.9, "other": 0.99},
                "plain": {name: 0.1, "other": 0.7},
                "other": {name: 0.01, "plain": 0.3},
            },
        ),
    ]
    for svg in charts:
        root = parse(svg)
        # the quote that would end an attribute and the bracket that would open a tag are
        # entities: nothing the name holds can become markup (parse() walks the tree too)
        assert "<script" not in svg.lower() and '"onload=' not in svg and "' on" not in svg
        shown = texts(root)
        assert "\x1b" not in shown and "\u202e" not in shown and "\x00" not in shown
        if name.startswith("</svg>"):
            assert "</svg><script>alert(1)</script>" in shown  # as text, whole
            assert "&lt;/svg&gt;&lt;script&gt;" in svg
        if name.startswith("\x1b"):
            assert "\\x1b[2J" in shown  # made visible, as the CLI shows it
        if name.startswith("A"):
            assert "A" * 500 not in shown and "A" * 10 + "…" in shown  # cut, marked
        if name.startswith("名前"):
            assert name in shown
    bar = parse(interval_bar(10, -5, 30, (-100, 100)))
    assert "Elo +10" in bar.get("aria-label", "")


def test_charts_hold_no_id_so_several_share_a_page() -> None:
    rows = [{"elo": 5.0, "elo_low": -20.0, "elo_high": 30.0, "in_field": True}]
    for svg in (
        interval_bar(5, -20, 30, common_scale(rows)),
        rating_chart(history_of({"a": 50, "b": -50})),
        superiority_heatmap(["a", "b"], {"a": {"b": 0.8}, "b": {"a": 0.2}}),
    ):
        assert all("id" not in el.attrib for el in parse(svg).iter())


# ----- the interval bar -----------------------------------------------------------------
def test_the_tick_lies_on_its_bar_and_rows_share_one_scale() -> None:
    rows = [
        {"elo": 150.0, "elo_low": 100.0, "elo_high": 210.0, "in_field": True},
        {"elo": 0.0, "elo_low": -40.0, "elo_high": 45.0, "in_field": True},
        {"elo": -120.0, "elo_low": -200.0, "elo_high": -60.0, "in_field": True},
    ]
    scale = common_scale(rows)
    assert scale[0] <= -200 and scale[1] >= 210 and scale[1] - scale[0] < 600
    ticks_at = []
    for row in rows:
        root = parse(interval_bar(row["elo"], row["elo_low"], row["elo_high"], scale))
        [bar] = find(root, "rect", "interval")
        [tick] = find(root, "rect", "estimate")
        left, right = float(bar.get("x", "")), float(bar.get("x", "")) + float(bar.get("width", ""))
        mid = float(tick.get("x", "")) + float(tick.get("width", "")) / 2
        assert left < mid < right
        ticks_at.append(mid)
        assert "95% interval" in root.get("aria-label", "")
    assert ticks_at[0] > ticks_at[1] > ticks_at[2]  # the higher Elo, the further right
    # one bar's width in pixels per Elo is the same on every row: a common scale
    widths = []
    for row in rows:
        [bar] = find(
            parse(interval_bar(row["elo"], row["elo_low"], row["elo_high"], scale)),
            "rect",
            "interval",
        )
        widths.append(float(bar.get("width", "")) / (row["elo_high"] - row["elo_low"]))
    assert max(widths) - min(widths) < 0.02


def test_a_bot_outside_the_main_field_is_open_ended_and_says_why() -> None:
    rows = [
        {"elo": 40.0, "elo_low": 0.0, "elo_high": 80.0, "in_field": True},
        {"elo": -40.0, "elo_low": -80.0, "elo_high": 0.0, "in_field": True},
        {"elo": -2600.0, "elo_low": -7000.0, "elo_high": 1800.0, "in_field": False},
    ]
    scale = common_scale(rows)
    assert scale[0] >= -100 and scale[1] <= 100  # the ridge's interval is left out
    root = parse(interval_bar(-2600, -7000, 1800, scale, in_field=False))
    assert not find(root, "rect", "interval") and find(root, "line", "unbounded")
    assert find(root, "path", "offscale")  # its Elo is off the scale: an arrow at the edge
    assert "outside the main field" in root.get("aria-label", "")
    # no finite interval at all is drawn the same, in the field or not
    assert find(parse(interval_bar(5, math.nan, math.inf, scale)), "line", "unbounded")


@pytest.mark.parametrize(
    "rows",
    [
        [],
        [{"elo": None, "elo_low": None, "elo_high": None, "in_field": False, "rated": False}],
        [{"elo": 12.0, "elo_low": 12.0, "elo_high": 12.0, "in_field": True}],
        [{"elo": math.nan, "elo_low": -math.inf, "elo_high": math.inf, "in_field": True}],
        [{"elo": 3.0, "elo_low": math.nan, "elo_high": 9.0, "in_field": True}],
    ],
)
def test_common_scale_is_always_a_drawable_range(rows: list[dict[str, Any]]) -> None:
    lo, hi = common_scale(rows)
    assert math.isfinite(lo) and math.isfinite(hi) and hi - lo >= 50


@pytest.mark.parametrize(
    "args",
    [
        (math.nan, -10.0, 10.0, (-100.0, 100.0)),
        (math.inf, -10.0, 10.0, (-100.0, 100.0)),
        (5.0, -10.0, 10.0, (math.nan, math.inf)),
        (5.0, -10.0, 10.0, (7.0, 7.0)),
        (5.0, 10.0, -10.0, (100.0, -100.0)),  # reversed: put right
        (None, None, None, (-100.0, 100.0)),
    ],
)
def test_the_interval_bar_survives_bad_numbers(args: tuple[Any, ...]) -> None:
    root = parse(interval_bar(*args))
    if args[0] is None or not math.isfinite(args[0]):
        assert root.get("aria-label") == "no rating yet"


def test_numpy_numbers_are_numbers() -> None:
    """The leaderboard's rows hold numpy floats (the fit's), a snapshot's plain ones."""
    import numpy as np

    rows = [
        {"elo": np.float64(30.5), "elo_low": np.float32(-4), "elo_high": np.float64(61)},
        {"elo": np.float32(-30), "elo_low": np.float64(-70), "elo_high": np.int64(5)},
    ]
    scale = common_scale(rows)
    assert scale[0] <= -70 and scale[1] >= 61
    low: Any = np.float32(-4)  # not a float to a type checker; a number all the same
    root = parse(interval_bar(np.float64(30.5), low, np.float64(61), scale))
    assert find(root, "rect", "interval")
    history: History = [
        (np.int64(5), {"a": RatingPoint(np.float64(3), np.float64(-9), np.float64(15), True)})
    ]  # type: ignore[list-item]
    assert find(parse(rating_chart(history)), "circle")
    heat = parse(superiority_heatmap(["a", "b"], {"a": {"b": np.float64(0.8)}}))
    assert "0.80" in texts(heat)


# ----- the rating over time -------------------------------------------------------------
def test_a_higher_rating_is_drawn_higher_and_later_further_right() -> None:
    root = parse(rating_chart(history_of({"top": 200, "mid": 20, "low": -150})))
    dots = [
        (float(c.get("data-elo", "")), float(c.get("cy", "")), float(c.get("cx", "")))
        for c in find(root, "circle")
    ]
    assert len(dots) == 15
    by_elo = sorted(dots)
    for (e0, y0, _), (e1, y1, _) in itertools.pairwise(by_elo):
        assert e1 == e0 or y1 < y0  # svg y grows downwards
    [series] = [g for g in find(root, "g", "series") if g.get("data-rank") == "1"]
    xs = [float(c.get("cx", "")) for c in find(series, "circle")]
    assert xs == sorted(xs) and len(set(xs)) == 5
    assert legend(root) == ["top", "mid", "low"]
    assert len(find(root, "polygon", "band")) == 3
    assert not find(parse(rating_chart(history_of({"a": 1, "b": 2}), bands=False)), "polygon")


def test_the_top_bots_by_latest_rating_at_most_eight_unless_named() -> None:
    final = {f"bot{i:02d}": 300 - 37.0 * i for i in range(12)}
    history = history_of(final)
    history[-1][1]["bot11"] = RatingPoint(999.0, 900.0, 1100.0, True)  # the last point decides
    root = parse(rating_chart(history))
    names = legend(root)
    assert (
        len(names) == MAX_LINES
        and names[0] == "bot11"
        and names[1:] == [f"bot{i:02d}" for i in range(7)]
    )
    assert "top 8 of 12 bots" in texts(root)
    named = parse(rating_chart(history, bots=["bot05", "nobody", "bot01"]))
    assert legend(named) == ["bot05", "bot01"]
    assert len(find(named, "g", "series")) == 2


def test_a_rating_outside_the_main_field_does_not_flatten_the_others() -> None:
    history = history_of({"a": 60, "b": -60})
    for _, point in history:
        point["crasher"] = RatingPoint(-3000.0, -9000.0, 3000.0, False)
    root = parse(rating_chart(history))
    labels = [
        float(t.text)
        for t in find(root, "text")
        if t.text and re.fullmatch(r"-?\d+", t.text) and t.get("text-anchor") == "end"
    ]
    assert labels and min(labels) > -300 and max(labels) < 300  # the y ticks
    crasher = next(g for g in find(root, "g", "series") if g.get("data-rank") == "3")
    dots = find(crasher, "circle")
    assert all(c.get("fill") == "#ffffff" for c in dots)  # open: no finite rating
    assert "outside the main field" in (dots[0][0].text or "")
    assert "no finite rating yet" in texts(root)


def test_retired_bots_are_dashed() -> None:
    root = parse(rating_chart(history_of({"gone": 10, "here": -10}), retired={"gone"}))
    [gone] = [g for g in find(root, "g", "series") if g.get("data-rank") == "1"]
    assert find(gone, "path")[0].get("stroke-dasharray")
    assert "(retired)" in texts(root)


@pytest.mark.parametrize(
    "history",
    [
        [],
        [(10, {})],
        [(10, {"a": RatingPoint(math.nan, math.nan, math.nan, True)})],
        [(math.nan, {"a": RatingPoint(1.0, 0.0, 2.0, True)})],
    ],
)
def test_nothing_to_draw_says_so(history: Any) -> None:
    root = parse(rating_chart(history))
    assert "no rated matches yet" in texts(root)


def test_bad_numbers_in_a_history_are_skipped_not_drawn() -> None:
    history: History = [
        (
            10,
            {"a": RatingPoint(50.0, 10.0, 90.0, True), "b": RatingPoint(math.inf, 0.0, 1.0, True)},
        ),
        (
            20,
            {
                "a": RatingPoint(math.nan, 0.0, 1.0, True),
                "b": RatingPoint(-20.0, math.nan, 5.0, True),
            },
        ),
        (
            30,
            {"a": RatingPoint(60.0, 20.0, 100.0, True), "b": RatingPoint(-30.0, -70.0, 10.0, True)},
        ),
    ]
    root = parse(rating_chart(history))
    assert len(find(root, "circle")) == 4
    single = parse(
        rating_chart(
            [
                (
                    7,
                    {
                        "a": RatingPoint(5.0, 0.0, 10.0, True),
                        "b": RatingPoint(-5.0, -10.0, 0.0, True),
                    },
                )
            ]
        )
    )
    assert len(find(single, "circle")) == 2


def test_a_long_history_is_thinned() -> None:
    history = [
        (
            n,
            {
                "a": RatingPoint(float(n % 7), -5.0, 5.0, True),
                "b": RatingPoint(0.0, -5.0, 5.0, True),
            },
        )
        for n in range(1, 2001)
    ]
    svg = rating_chart(history)
    root = parse(svg)
    assert len(find(root, "circle")) == 2  # the last point of each line only
    for path in find(root, "path"):
        assert path.get("d", "").count("M") <= 150
    assert len(svg) < 40_000


def test_nice_ticks() -> None:
    for low, high in ((-137, 212), (-3.2, 4.9), (0.001, 0.0042), (-5000, 12)):
        found = ticks(low, high)
        step = (found[-1] - found[0]) / (len(found) - 1)
        assert 3 <= len(found) <= 8 and low <= found[0] and found[-1] <= high
        assert f"{step:.3e}"[:5] in ("1.000", "2.000", "5.000")
    assert ticks(-137, 212, 4) == [-100, 0, 100, 200]
    assert ticks(0, 1, integer=True) == [0, 1]
    assert ticks(3, 97, 6, integer=True) == [20, 40, 60, 80]


# ----- the superiority heat map ---------------------------------------------------------
def test_the_colour_scale_diverges_from_a_neutral_half() -> None:
    def rgb(c: str) -> tuple[int, int, int]:
        return int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)

    high, low, even = rgb(cell_colour(0.9)), rgb(cell_colour(0.1)), rgb(cell_colour(0.5))
    assert high != low and len(set(even)) == 1 and even[0] > 240  # neutral: a light grey
    assert high[2] > high[0] and low[0] > low[2]  # stronger blue, weaker red
    assert sum(rgb(cell_colour(0.99))) < sum(high)  # surer, darker
    assert cell_colour(math.nan) != even


def test_the_heat_map_prints_each_value_with_the_diagonal_blank() -> None:
    labels = ["a", "b", "c"]
    matrix = {
        "a": {"b": 0.98, "c": 0.9996},
        "b": {"a": 0.02, "c": 0.5},
        "c": {"a": 0.0004, "b": 0.5},
    }
    root = parse(superiority_heatmap(labels, matrix))
    cells = {
        (int(g.get("data-row", "")), int(g.get("data-col", ""))): g for g in find(root, "g", "cell")
    }
    assert len(cells) == 6 and (0, 0) not in cells
    printed = {k: find(g, "text")[0].text for k, g in cells.items()}
    assert printed[(0, 1)] == "0.98" and printed[(1, 0)] == "0.02"
    assert printed[(0, 2)] == ">.99" and printed[(2, 0)] == "<.01"
    assert find(cells[(0, 1)], "rect")[0].get("fill") == cell_colour(0.98)
    assert find(cells[(1, 2)], "rect")[0].get("fill") == cell_colour(0.5)
    assert find(cells[(0, 1)], "text")[0].get("font-weight") == "700"  # separated
    assert find(cells[(1, 2)], "text")[0].get("font-weight") is None
    assert "P(a stronger than b) = 0.980 (separated)" in (cells[(0, 1)][0].text or "")
    assert [visible(t) for t in find(root, "text", "row-label")] == labels


def test_long_names_are_cut_with_the_whole_name_in_a_tooltip() -> None:
    name = "very-long-bot-name-" * 10
    root = parse(superiority_heatmap([name, "b"], {name: {"b": 0.6}, "b": {name: 0.4}}))
    label = find(root, "text", "row-label")[0]
    assert visible(label).endswith("…") and len(visible(label)) <= 22
    assert label[0].text is not None and label[0].text.startswith(name[:150])


def test_missing_or_bad_values_are_grey_dashes() -> None:
    root = parse(superiority_heatmap(["a", "b", "c"], {"a": {"b": math.nan}, "b": {"a": math.inf}}))
    cells = find(root, "g", "cell")
    assert len(cells) == 6
    assert all(find(g, "text")[0].text == "–" for g in cells)


def test_past_thirty_bots_only_the_top_thirty_and_the_caption_says_so() -> None:
    names = [f"bot{i}" for i in range(35)]
    matrix = {
        a: {b: 0.5 + (j - i) / 80 for j, b in enumerate(names) if b != a}
        for i, a in enumerate(names)
    }
    big = parse(superiority_heatmap(names, matrix))
    assert len(find(big, "text", "row-label")) == MAX_HEATMAP
    assert len(find(big, "g", "cell")) == MAX_HEATMAP * (MAX_HEATMAP - 1)
    assert "only the top 30 of 35 bots are shown" in texts(big)
    small = parse(superiority_heatmap(names[:4], matrix))
    size = lambda root: float(find(root, "text", "row-label")[0].get("font-size", ""))  # noqa: E731
    assert size(big) < size(small)
    assert "only the top" not in texts(small)


@pytest.mark.parametrize("labels", [[], ["alone"]])
def test_a_heat_map_needs_two_bots(labels: list[str]) -> None:
    assert "two rated bots" in texts(parse(superiority_heatmap(labels, {})))


# ----- from real ratings ----------------------------------------------------------------
def test_charts_of_a_real_fit_agree_with_its_ranking() -> None:
    """Ratings fitted by the ladder's own Plackett–Luce on simulated duplicate deals: the
    legend is the fit's order, the heat map's values its superiority matrix, and every
    row's bar on the common scale."""
    rng = random.Random(5)
    elos: dict[Hashable, float] = {f"b{i}": 200 - 40.0 * i for i in range(10)}
    blocks = play_blocks(elos, 240, rng)
    history: History = []
    for n in range(10, len(blocks) + 1, 10):
        fit = fit_plackett_luce(blocks[:n])
        history.append(
            (n, {r.bot: RatingPoint(r.elo, r.low, r.high, r.in_field) for r in fit.ratings})
        )
    fit = fit_plackett_luce(blocks)
    order = [r.bot for r in fit.ratings]
    assert legend(parse(rating_chart(history))) == order[:MAX_LINES]
    heat = parse(superiority_heatmap(order, fit.superiority))
    top = next(
        g for g in find(heat, "g", "cell") if (g.get("data-row"), g.get("data-col")) == ("0", "1")
    )
    assert find(top, "rect")[0].get("fill") == cell_colour(fit.superiority[order[0]][order[1]])
    rows = [
        {"elo": r.elo, "elo_low": r.low, "elo_high": r.high, "in_field": r.in_field}
        for r in fit.ratings
    ]
    scale = common_scale(rows)
    for r in fit.ratings:
        parse(interval_bar(r.elo, r.low, r.high, scale, in_field=r.in_field))
        assert scale[0] <= r.low and r.high <= scale[1]
