"""The leaderboard explains itself: where a bot is ranked above the next with fewer points a
hand, the row carries a note saying why, with numbers taken from the deal blocks the
ratings were fitted on (``arena.ladder.explain``); ``arena ladder show`` prints it and
``--json`` carries it.  Each ladder here is scripted hand by hand and written through the
store's own write path (``ladderkit``), so every number in a note is known in advance."""

from __future__ import annotations

import json
import math
import random

import pytest
from sqlalchemy.orm import Session

from arena.ladder.duplicate import block_rankings
from arena.ladder.explain import FieldRecord, OrderNote, PairRecord, order_notes
from arena.ladder.leaderboard import leaderboard
from arena.ladder.ratings import Fit, Rating
from arena.ladder.store import open_engine

from ladderkit import (
    AGREEING,
    HOSTILE,
    LADDER,
    agreeing_ladder,
    contest,
    enter,
    margins_ladder,
    play_script,
)
from testkit import arena_main


def rows_of(db: str) -> list[dict]:
    with Session(open_engine(db)) as session:
        return leaderboard(session, LADDER)[1]


def notes_of(rows: list[dict]) -> dict[str, OrderNote]:
    return {r["bot"]: OrderNote.from_json(r["order_note"]) for r in rows if r["order_note"]}


def test_a_bot_that_wins_narrowly_above_one_that_wins_big_is_explained(tmp_path):
    rows = rows_of(margins_ladder(tmp_path))
    assert [r["bot"] for r in rows] == ["winner", "steady", "bigwin", "loser"]
    points = {r["bot"]: r["points_per_hand"] for r in rows}
    assert points == {"winner": 2.0, "steady": -3.25, "bigwin": 6.0, "loser": -4.75}
    notes = notes_of(rows)
    assert list(notes) == ["steady"]  # the one pair whose orders disagree
    note = notes["steady"]
    assert (note.rank, note.upper, note.lower, note.reason) == (2, "steady", "bigwin", "margins")
    # 6 matches × 4 deals; each deal 4 games + 4 card sets, all holding both bots
    assert (note.pair.blocks, note.pair.orders) == (24, 192)
    assert (note.pair.upper_ahead, note.pair.lower_ahead) == (144, 48)
    assert (note.pair.upper_margin, note.pair.lower_margin) == (1.0, 40.0)
    assert (note.upper_points, note.lower_points) == (-3.25, 6.0)
    assert note.text.startswith(
        "steady finished ahead of bigwin in 75% of the 192 hand and card-set orders of the "
        "24 deals they shared, but bigwin won by more when ahead: +40.0 vs +1.0 points a hand"
    )
    steady = next(r for r in rows if r["bot"] == "steady")
    assert note.superiority == steady["superiority"]["bigwin"]
    assert ("cannot tell them apart yet" in note.text) == (not steady["separated_from_next"])


def test_orders_that_agree_with_the_points_get_no_note(tmp_path):
    db = agreeing_ladder(tmp_path)
    seats = AGREEING
    rows = rows_of(db)
    assert [r["bot"] for r in rows] == seats
    assert all(r["order_note"] is None for r in rows)
    shown = arena_main("ladder", "show", "--db", db, "--name", LADDER)
    assert shown.returncode == 0, shown.stderr
    assert "fewer points a hand" not in shown.stdout


def test_a_forfeiting_bot_whose_fallback_scored_is_explained(tmp_path):
    """F forfeits half of every match; its fallback then wins big.  The ratings count those
    hands as last place, the points column counts the fallback's +30s."""
    db, engine = contest(tmp_path)
    seats = ["G", "F", "X", "Y"]
    ids = enter(engine, LADDER, seats)
    deals = [
        {"G": 6, "X": -1, "F": -2, "Y": -3},
        {"X": 6, "F": -1, "Y": -2, "G": -3},
        {"F": 30, "G": 0, "X": -15, "Y": -15},
        {"F": 30, "G": 0, "X": -15, "Y": -15},
    ]
    play_script(engine, LADDER, seats, ids, lambda m, d: deals[d], 3, forfeit=(1, 8))
    rows = rows_of(db)
    assert rows[-1]["bot"] == "F" and rows[-1]["points_per_hand"] == 14.25
    notes = notes_of(rows)
    assert list(notes) == [rows[-2]["bot"]]
    note = notes[rows[-2]["bot"]]
    assert (note.lower, note.reason) == ("F", "forfeits")
    # 3 matches × deals 2 and 3 × 4 rotations forfeited; its own hands: -2 and -1
    assert (note.lower_field.forfeited_hands, note.lower_field.own_hands) == (24, 24)
    assert note.lower_field.own_points == -1.5
    assert note.text.startswith(
        "F's 24 forfeited hands count as last place in the Elo, while the points its fallback "
        "made in them count in pts/hand: in the hands it played itself F made -1.50 a hand"
    )


def test_bots_that_met_different_opponents_are_explained(tmp_path):
    """Two groups sharing one bot (M): S1 plays the strong group, B the weak one, and the
    two never share a deal."""
    db, engine = contest(tmp_path)
    ids = enter(engine, LADDER, ["A", "B", "M", "S1", "S2", "W1", "W2"])
    strong = [
        {"A": 3, "S1": -1, "M": -1, "S2": -1},
        {"S1": 3, "A": -1, "M": -1, "S2": -1},
        {"S2": 3, "A": -1, "M": -1, "S1": -1},
        {"A": 6, "S1": -1, "M": -2, "S2": -3},
    ]
    weak = [
        {"B": 6, "M": -1, "W1": -2, "W2": -3},
        {"M": 6, "B": -1, "W1": -2, "W2": -3},
        {"B": 6, "W1": -1, "M": -2, "W2": -3},
        {"W1": 6, "M": -1, "B": -2, "W2": -3},
    ]
    play_script(engine, LADDER, ["A", "M", "S1", "S2"], ids, lambda m, d: strong[d], 3)
    play_script(engine, LADDER, ["B", "M", "W1", "W2"], ids, lambda m, d: weak[d], 3)
    rows = rows_of(db)
    elo = {r["bot"]: r["elo"] for r in rows if r["in_field"]}
    assert "W2" not in elo  # always last: no finite rating, left out of the opponents' mean
    note = notes_of(rows)["S1"]
    assert (note.lower, note.reason, note.pair.orders) == ("B", "opponents", 0)
    fit_elo = {r["bot"]: r["elo"] for r in rows}
    mean_s1 = (fit_elo["A"] + fit_elo["M"] + fit_elo["S2"]) / 3
    mean_b = (fit_elo["M"] + fit_elo["W1"]) / 2
    assert note.upper_field.opponents_elo == pytest.approx(mean_s1, abs=0.2)
    assert note.lower_field.opponents_elo == pytest.approx(mean_b, abs=0.2)
    assert note.text.startswith(
        f"B met weaker opponents (mean Elo {mean_b:+.0f}, S1's {mean_s1:+.0f}): points a "
        "hand depend on whom a bot plays, the Elo allows for it; S1 and B never played the "
        "same deal"
    )


def test_a_bot_outside_the_main_field_is_explained(tmp_path):
    """L finishes last in every deal it plays, losing little; W2, always behind someone in
    the other group but sometimes ahead, loses more: L ranks below with more points."""
    db, engine = contest(tmp_path)
    ids = enter(engine, LADDER, ["A", "M", "S", "L", "B", "W1", "W2"])
    calm = [{"A": 3, "M": 0, "S": -1, "L": -2}, {"S": 3, "A": 0, "M": -1, "L": -2}]
    wild = [
        {"B": 30, "M": -5, "W1": -10, "W2": -15},
        {"W2": 10, "W1": -2, "M": -3, "B": -5},
        {"M": 30, "W1": -5, "B": -10, "W2": -15},
    ]
    play_script(engine, LADDER, ["A", "M", "S", "L"], ids, lambda m, d: calm[d % 2], 3)
    play_script(engine, LADDER, ["B", "M", "W1", "W2"], ids, lambda m, d: wild[d % 3], 3, deals=3)
    rows = rows_of(db)
    assert rows[-1]["bot"] == "L" and not rows[-1]["in_field"]
    note = notes_of(rows)[rows[-2]["bot"]]
    assert (note.lower, note.reason) == ("L", "out_of_field")
    assert note.text.startswith(
        "L's Elo is not finite yet: it has finished behind part of the field in every deal so far"
    )


def test_ladder_show_prints_the_note_and_its_json_carries_it(tmp_path):
    db = margins_ladder(tmp_path)
    shown = arena_main("ladder", "show", "--db", db, "--name", LADDER)
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())  # rich wraps long lines
    assert (
        "#2 above #3 with fewer points a hand: steady finished ahead of bigwin in 75% of the "
        "192 hand and card-set orders of the 24 deals they shared, but bigwin won by more when "
        "ahead: +40.0 vs +1.0 points a hand" in text
    )
    assert text.count("fewer points a hand:") == 1
    rows = json.loads(arena_main("ladder", "show", "--db", db, "--name", LADDER, "--json").stdout)
    assert [bool(r["order_note"]) for r in rows] == [False, True, False, False]
    assert OrderNote.from_json(rows[1]["order_note"]).pair.upper_ahead == 144


def test_hostile_names_in_a_note_are_shown_as_text_on_the_terminal(tmp_path):
    db = margins_ladder(tmp_path, HOSTILE)
    shown = arena_main("ladder", "show", "--db", db, "--name", LADDER)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    line = next(ln for ln in out.splitlines() if "fewer points a hand:" in ln)
    assert "<b>st</b>\\x1b[31m\\x1b]0;owned\\x07[blink]x[/blink] finished ahead of" in line


# ----- the counting itself, against its definition ------------------------------------------
def _reference_pair(blocks: list, a: object, b: object) -> PairRecord:
    """A PairRecord by its definition, one order at a time."""
    shared = [blk for blk in blocks if a in blk[0] and b in blk[0]]
    both = [o for blk in shared for o in blk if a in o and b in o]
    up = [o[a] - o[b] for o in both if o[a] > o[b]]
    down = [o[b] - o[a] for o in both if o[b] > o[a]]
    fin_up, fin_down = [x for x in up if math.isfinite(x)], [x for x in down if math.isfinite(x)]
    return PairRecord(
        blocks=len(shared),
        orders=len(both),
        upper_ahead=len(up),
        lower_ahead=len(down),
        upper_margin=sum(fin_up) / len(fin_up) if fin_up else None,
        lower_margin=sum(fin_down) / len(fin_down) if fin_down else None,
    )


def _reference_field(blocks: list, rotations: int, k: object, elo: dict) -> FieldRecord:
    """A FieldRecord by its definition, one comparison at a time."""
    mine = [blk for blk in blocks if k in blk[0]]
    comparisons = ahead = 0
    margins: list[float] = []
    opponents: list[float] = []
    own: list[float] = []
    forfeited = 0
    for blk in mine:
        rated = [elo[o] for o in blk[0] if o != k and o in elo]
        if rated:
            opponents.append(sum(rated) / len(rated))
        for game in blk[:rotations]:
            if math.isfinite(game[k]):
                own.append(game[k])
            else:
                forfeited += 1
        for order in blk:
            if k not in order:
                continue
            for other, w in order.items():
                if other == k:
                    continue
                comparisons += 1
                if order[k] > w:
                    ahead += 1
                    if math.isfinite(order[k]) and math.isfinite(w):
                        margins.append(order[k] - w)
    return FieldRecord(
        blocks=len(mine),
        comparisons=comparisons,
        ahead=ahead,
        margin_ahead=sum(margins) / len(margins) if margins else None,
        opponents_elo=sum(opponents) / len(opponents) if opponents else None,
        own_hands=len(own),
        own_points=sum(own) / len(own) if own else None,
        forfeited_hands=forfeited,
    )


def _close(x: object, y: object) -> bool:
    """Two records equal field by field, floats to 1e-9."""
    for name, a in vars(x).items():
        b = getattr(y, name)
        if isinstance(a, float) or isinstance(b, float):
            if a is None or b is None or not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9):
                return False
        elif a != b:
            return False
    return True


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("named", [False, True])
def test_the_counts_in_a_note_are_their_definition(seed: int, named: bool) -> None:
    """Random blocks — tables with a repeated entrant (three in an order), forfeited hands
    (-inf), ties — keyed by version ids or by names: every note's records are what counting
    one comparison at a time gives."""
    rng = random.Random(seed)
    bots = [f"bot {i}" if named else 100 + i for i in range(9)]
    blocks = []
    for _ in range(60):
        seats = [rng.choice(bots) for _ in range(4)]
        while len(set(seats)) < 2:
            seats = [rng.choice(bots) for _ in range(4)]
        scores = [[float(rng.choice([-3, -1, 0, 2, 5, 20])) for _ in seats] for _ in range(4)]
        dead = rng.choice([None, None, 0, 1, 2, 3])
        for r in range(4):
            if dead is not None and r >= 2:
                scores[r][dead] = float("-inf")
        blocks.append(block_rankings(seats, scores, 4))
    present = sorted({k for blk in blocks for k in blk[0]}, key=str)
    in_field = {k: rng.random() < 0.8 for k in present}
    elo = {k: rng.uniform(-200, 200) for k in present}
    fit = Fit(
        [Rating(k, elo[k], elo[k] - 50, elo[k] + 50, 25.0, in_field[k]) for k in present],
        {a: {b: 0.5 for b in present} for a in present},
    )
    # every neighbour disagrees: points rise down the table
    rows = [
        {"bot": str(k), "rank": i + 1, "rated": True, "points_per_hand": float(i),
         "in_field": in_field[k], "elo": elo[k]}
        for i, k in enumerate(present)
    ]  # fmt: skip
    notes = order_notes(rows, blocks, 4, {str(k): k for k in present}, fit)
    assert sorted(notes) == list(range(len(present) - 1))
    field_elo = {k: e for k, e in elo.items() if in_field[k]}
    for i, note in notes.items():
        a, b = present[i], present[i + 1]
        assert _close(note.pair, _reference_pair(blocks, a, b)), (note.pair, a, b)
        assert _close(note.upper_field, _reference_field(blocks, 4, a, field_elo))
        assert _close(note.lower_field, _reference_field(blocks, 4, b, field_elo))
        assert note.text == "".join(p.text for p in note.parts)
        assert [p.text for p in note.parts if p.bot] and all(
            p.text in (str(a), str(b)) for p in note.parts if p.bot
        )
