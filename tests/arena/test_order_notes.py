"""The leaderboard explains itself: where a bot is ranked above the next with fewer points a
hand, the row carries a note saying why, with numbers taken from the deal blocks the
ratings were fitted on (``arena.ladder.explain``); ``arena ladder show`` prints it and
``--json`` carries it.  Each ladder here is scripted hand by hand and written through the
store's own write path (``ladderkit``), so every number in a note is known in advance."""

from __future__ import annotations

import json

import pytest
from sqlalchemy.orm import Session

from arena.ladder.explain import OrderNote
from arena.ladder.leaderboard import leaderboard
from arena.ladder.store import open_engine

from ladderkit import HOSTILE, LADDER, contest, enter, margins_ladder, play_script
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
    db, engine = contest(tmp_path)
    seats = ["first", "second", "third", "fourth"]
    ids = enter(engine, LADDER, seats)
    deals = [
        {"first": 6, "second": -1, "third": -2, "fourth": -3},
        {"second": 6, "first": -1, "third": -2, "fourth": -3},
        {"first": 8, "third": -2, "second": -3, "fourth": -3},
    ]
    play_script(engine, LADDER, seats, ids, lambda m, d: deals[d % 3], 4, deals=3)
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
