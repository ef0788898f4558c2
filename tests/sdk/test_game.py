"""The game state machine: docs/rules.md §1, §4–§8 on explicit hands."""

import random

import pytest
from game_state import snapshot

from bigtwo import PASS, Game, IllegalMoveError, RuleSet, deal, parse_cards

HK = RuleSet.preset("hk")
FAMILY = RuleSet.preset("family")
PUSOY = RuleSet.preset("pusoy")


def strs(moves):
    return sorted(str(m) for m in moves)


# ----- deal and opening ------------------------------------------------------------------
@pytest.mark.parametrize("players, size", [(4, 13), (3, 17), (2, 13)])
def test_deal_sizes_and_reproducibility(players, size):
    rules = HK.replace(players=players)
    hands = deal(rules, seed=11)
    assert [len(h) for h in hands] == [size] * players
    assert len({c for h in hands for c in h}) == size * players
    assert deal(rules, 11) == hands and deal(rules, 11, hand=1) != hands
    assert deal(rules, 12) != hands


@pytest.mark.parametrize("preset", ["hk", "family", "pusoy"])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_opening_lead_holds_the_lowest_card_dealt(preset, players):
    rules = RuleSet.preset(preset).replace(players=players)
    for seed in range(5):
        g = Game(rules, seed=seed)
        dealt = [c for s in range(players) for c in g.hand(s)]
        lowest = min(dealt, key=rules.strength)
        assert g.must_include == lowest and lowest in g.hand(g.turn)
        moves = g.legal_moves()
        assert moves and PASS not in moves
        assert all(lowest in m.cards for m in moves)


def test_opening_lead_refusals_say_why():
    g = Game.from_hands(HK, ["3D 4D 9S", "3C 5D", "3H 6D", "3S 7D"])
    assert g.turn == 0 and str(g.must_include) == "3D"
    before = snapshot(g)
    for move, why in [
        ("4D", "opening lead must include 3D"),
        (PASS, "you lead this trick"),
        ("3C", "you do not hold 3C"),
        ("3D 4D", "not a valid combination"),
        ("3D 3D", "3D twice"),
        ([], "no cards"),
        ("ZZ", "not a card"),
        (42.5, "not a move"),
    ]:
        with pytest.raises(IllegalMoveError) as err:
            g.apply(move)
        assert why in err.value.reason
        assert g.refusal(move) == err.value.reason
        assert snapshot(g) == before  # illegal plays are never applied
    g.apply("3D")
    assert g.turn == 1 and str(g.trick) == "3D"


# ----- tricks ------------------------------------------------------------------------------
def test_trick_flow_without_lock_out():
    g = Game.from_hands(HK, ["3D 9D KD", "4D 8D QD", "5D 7D JD", "6D TD AD"])
    g.apply("3D")
    g.apply(PASS)  # seat 1
    g.apply("7D")  # seat 2
    g.apply(PASS)  # seat 3
    assert g.turn == 0
    g.apply("9D")  # seat 0 plays again after... nobody passed twice yet
    g.apply("QD")  # seat 1 passed before and may play again (no lock-out)
    g.apply(PASS)
    g.apply(PASS)
    assert g.turn == 0 and g.trick is not None
    g.apply(PASS)  # three passes in a row since QD
    assert g.trick is None and g.turn == 1  # seat 1 won the trick and leads
    assert PASS not in g.legal_moves()
    assert [a.lead for a in g.history] == [True] + [False] * 8
    g.apply("4D")
    assert g.history[-1].lead


def test_pass_locks_out_until_the_next_lead():
    g = Game.from_hands(PUSOY, ["3C 9D KD", "4D 8D QD", "5D 7D JD", "6D TD AD"])
    g.apply("3C")
    g.apply(PASS)  # seat 1 is locked out of this trick
    g.apply("7D")
    g.apply("TD")
    g.apply("KD")  # seat 0
    assert g.turn == 2 and g.locked_out == {1}  # seat 1 is skipped
    assert "you do not hold" in g.refusal("QD")
    g.apply(PASS)  # seat 2 locked
    g.apply("AD")  # seat 3
    assert g.turn == 0
    g.apply(PASS)  # seat 0 locked: nobody else can respond, seat 3 wins the trick
    assert g.trick is None and g.turn == 3 and g.locked_out == frozenset()


def test_without_lock_out_a_passer_plays_again():
    g = Game.from_hands(HK, ["3C 9D KD", "4D 8D QD", "5D 7D JD", "6D TD AD"], leader=0)
    g.apply("3C")
    g.apply(PASS)
    g.apply("7D")
    g.apply("TD")
    g.apply("KD")
    assert g.turn == 1 and g.refusal("QD") is not None and g.refusal(PASS) is None


def test_follow_refusals_say_why():
    g = Game.from_hands(HK, ["3D 9D 9S", "4D 4S 8D", "5D 7D JD", "6D TD AD"])
    g.apply("3D")
    for move, why in [("4D 4S", "the trick is singles"), ("8D", None)]:
        assert g.refusal(move) == why or why in g.refusal(move)
    g.apply("8D")
    assert "does not beat 8D" in g.refusal("7D")
    assert g.refusal("JD") is None and g.refusal(PASS) is None


def test_hand_ends_the_moment_a_player_is_out_and_winner_leads_next():
    g = Game.from_hands(HK, ["3D 4D", "5D 6D 7D", "8D 9D TD", "JD QD KD"], seed=3)
    g.apply("3D")
    g.apply("5D")
    g.apply("8D")
    g.apply("JD")
    g.apply(PASS)
    g.apply(PASS)
    g.apply(PASS)
    assert g.turn == 3
    g.apply("QD")
    g.apply(PASS)
    g.apply(PASS)
    g.apply(PASS)
    g.apply("KD")  # seat 3 is out in the middle of nowhere: hand over
    assert g.hand_over and g.winner == 3 and g.legal_moves() == []
    with pytest.raises(IllegalMoveError, match="hand is over"):
        g.apply(PASS)
    g.next_hand()
    assert g.hand_no == 1 and g.turn == 3 and g.must_include is None
    assert [len(h) for h in g.hands] == [13] * 4


def test_every_hand_opening_rule():
    rules = HK.replace(opening="card-holder-every-hand")
    g = Game(rules, seed=5)
    rng = random.Random(1)
    while not g.hand_over:
        g.apply(rng.choice(g.legal_moves()))
    g.next_hand()
    assert str(g.must_include) == "3D" and "3D" in map(str, g.hand(g.turn))


# ----- special rules -----------------------------------------------------------------------
def test_alert_rule_when_leading():
    g = Game.from_hands(FAMILY, ["3D 5S 9H KC", "4D", "6D 7D", "8D 9D"], leader=0)
    moves = g.legal_moves()
    singles = [m for m in moves if m.kind == "single"]
    assert strs(singles) == ["KC"]  # seat 1 holds one card: a single must be my strongest
    assert "alert rule" in g.refusal("3D")
    assert g.refusal("KC") is None


def test_alert_rule_when_following_forbids_passing_if_strongest_beats():
    g = Game.from_hands(FAMILY, ["3D 4C", "5S 9H KC", "QD", "8D 9D"], leader=0)
    g.apply("3D")
    assert strs(g.legal_moves()) == ["KC"]
    assert "alert rule" in g.refusal(PASS)
    assert "alert rule" in g.refusal("5S")
    g.apply("KC")
    assert g.turn == 2


def test_alert_rule_passing_allowed_when_strongest_cannot_beat():
    g = Game.from_hands(FAMILY, ["2S 4C", "5S 9H KC", "QD", "8D 9D"], leader=0)
    g.apply("2S")
    assert g.legal_moves() == [PASS]


def test_no_alert_rule_in_hk():
    g = Game.from_hands(HK, ["3D 5S 9H KC", "4D", "6D 7D", "8D 9D"], leader=0)
    assert len([m for m in g.legal_moves() if m.kind == "single"]) == 4


def test_no_pass_first_trick():
    rules = HK.replace(no_pass_first_trick=True)
    g = Game.from_hands(rules, ["3D 4C", "5S 9H 6C", "3C", "8D 9D"])
    g.apply("3D")
    assert PASS not in g.legal_moves()
    assert "no_pass_first_trick" in g.refusal(PASS)
    g.apply("9H")
    assert g.legal_moves() == [PASS]  # seat 2 holds nothing that beats: may pass
    g.apply(PASS)
    g.apply(PASS)
    g.apply(PASS)
    assert not g.first_trick and g.turn == 1
    g.apply("5S")
    assert PASS in g.legal_moves()  # later tricks: passing is free again


def test_bombs_anywhere():
    rules = HK.replace(bombs="anywhere")
    hands = ["3D 2S", "5D 5C 5H 5S 4D 9C", "6D 6C 6H 6S 7C 8C", "8D 9D TD JD QD KC"]
    g = Game.from_hands(rules, hands)
    g.apply("3D")
    assert "5D 5C 5H 5S 4D" in {str(m) for m in g.legal_moves()} or any(
        m.kind == "five" for m in g.legal_moves()
    )
    g.apply("4D 5D 5C 5H 5S")
    assert g.trick.kind == "five"
    follow = g.legal_moves()
    assert all(m.kind == "five" or m is PASS for m in follow)
    assert any(m.category.name == "FOUR_OF_A_KIND" for m in follow if m is not PASS)
    g.apply("6D 6C 6H 6S 7C")
    g.apply("8D 9D TD JD QD")  # straight flush beats the four
    plain = Game.from_hands(HK, hands)
    plain.apply("3D")
    assert all(m.kind == "single" or m is PASS for m in plain.legal_moves())
    assert "the trick is singles" in plain.refusal("4D 5D 5C 5H 5S")


def test_revolution_flips_rank_order_and_back():
    rules = HK.replace(revolution=True)
    hands = ["3D 3C 3H 3S 9C 4D 2D", "5D 5C 5H 5S 4C 2S 7S", "6D 7C", "8D TD"]
    g = Game.from_hands(rules, hands)
    g.apply("3D 3C 3H 3S 9C")
    assert g.reversed
    assert g.legal_moves() == [PASS]  # the four 5s are lower than the four 3s now
    assert "does not beat" in g.refusal("5D 5C 5H 5S 4C")
    for _ in range(3):
        g.apply(PASS)
    g.apply("4D")
    assert strs(g.legal_moves()) == ["4C", "pass"]  # 4C (same rank, higher suit); 2S is lowest
    g.apply("4C")
    g.apply(PASS)
    g.apply(PASS)
    assert strs(g.legal_moves()) == ["pass"]  # 2D is the lowest card while reversed
    g.apply(PASS)
    g.apply("5D 5C 5H 5S 7S")
    assert not g.reversed  # a second four flips it back


def test_revolution_off_keeps_order():
    g = Game.from_hands(HK, ["3D 3C 3H 3S 9C 4D", "5D 5C 5H 5S 4C 2S", "6D 7C", "8D TD"])
    g.apply("3D 3C 3H 3S 9C")
    assert not g.reversed
    assert strs(g.legal_moves()) == ["4C 5D 5C 5H 5S", "5D 5C 5H 5S 2S", "pass"]


def test_lone_two_must_hand_the_lead_on():
    rules = HK.replace(no_lone_two_finish=True)
    g = Game.from_hands(rules, ["2S", "3D 4D", "5D 6D", "7D 8D"], leader=0)
    assert g.legal_moves() == [PASS]
    assert "no_lone_two_finish" in g.refusal("2S")
    g.apply(PASS)
    assert g.turn == 1 and g.trick is None and g.history[-1].lead
    assert PASS not in g.legal_moves()
    g.apply("3D")
    g.apply(PASS)
    g.apply(PASS)
    g.apply("2S")  # following with the last 2 is allowed
    assert g.hand_over and g.winner == 0
    plain = Game.from_hands(HK, ["2S", "3D 4D", "5D 6D", "7D 8D"], leader=0)
    assert strs(plain.legal_moves()) == ["2S"]


def test_lone_two_rule_is_lifted_when_every_seat_holds_a_lone_two():
    rules = HK.replace(no_lone_two_finish=True)
    g = Game.from_hands(rules, ["2S", "2D", "2C", "2H"], leader=1)
    assert strs(g.legal_moves()) == ["2D"]


# The lead handed on under no_lone_two_finish is free (docs/rules.md §4.10: "the next seat in
# turn leads anything"), even when the seat handing it on held the opening card: the
# opening-card requirement goes with the lead (issue 9: seat 1 was left with no move).
LONE_TWO_OPENINGS = ["card-holder-first-hand", "card-holder-every-hand"]


@pytest.mark.parametrize("opening", LONE_TWO_OPENINGS)
def test_lead_handed_on_by_the_opening_card_holder_is_free_two_players(opening):
    rules = HK.replace(players=2, no_lone_two_finish=True, opening=opening)
    g = Game.from_hands(rules, ["2D", "2C 2H"])
    assert g.turn == 0 and str(g.must_include) == "2D"  # lowest card dealt, lone 2
    assert g.legal_moves() == [PASS]
    g.apply(PASS)
    assert g.turn == 1 and g.trick is None and g.must_include is None
    assert strs(g.legal_moves()) == ["2C", "2C 2H", "2H"]
    assert g.refusal(PASS) is not None  # a leader holding more than a lone 2 may not pass
    g.apply("2C 2H")
    assert g.hand_over and g.winner == 1


@pytest.mark.parametrize("opening", LONE_TWO_OPENINGS)
def test_lead_handed_on_twice_then_coming_round_again_three_players(opening):
    rules = HK.replace(players=3, no_lone_two_finish=True, opening=opening)
    g = Game.from_hands(rules, ["2D", "2C", "2H 2S"])
    assert g.turn == 0 and str(g.must_include) == "2D"
    g.apply(PASS)  # seat 0: lone 2, hands the lead on
    assert g.turn == 1 and g.must_include is None
    assert g.legal_moves() == [PASS]  # seat 1: lone 2 too, hands it on again
    g.apply(PASS)
    assert g.turn == 2 and strs(g.legal_moves()) == ["2H", "2H 2S", "2S"]
    g.apply("2H")
    g.apply(PASS)
    g.apply(PASS)
    # the lead is back at seat 2, now holding a lone 2S: every seat holds a lone 2, so the
    # rule is lifted rather than handing the lead round for ever
    assert g.turn == 2 and g.trick is None and g.lone_two_lifted
    assert strs(g.legal_moves()) == ["2S"]
    g.apply("2S")
    assert g.hand_over and g.winner == 2


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("opening", LONE_TWO_OPENINGS)
def test_every_seat_a_lone_two_at_the_opening_leads_the_opening_card(players, opening):
    rules = HK.replace(players=players, no_lone_two_finish=True, opening=opening)
    g = Game.from_hands(rules, ["2D", "2C", "2H", "2S"][:players])
    assert g.lone_two_lifted and strs(g.legal_moves()) == ["2D"]
    g.apply("2D")
    assert g.hand_over and g.winner == 0


def test_lone_two_leaders_in_a_row_four_players():
    rules = HK.replace(no_lone_two_finish=True)
    g = Game.from_hands(rules, ["2D", "2C", "3D 4D", "5D"], leader=0)
    g.apply(PASS)
    g.apply(PASS)
    assert g.turn == 2 and strs(g.legal_moves()) == ["3D", "4D"]


@pytest.mark.parametrize(
    "opening, independent",
    [("card-holder-every-hand", False), ("card-holder-first-hand", True)],
)
def test_lead_handed_on_by_the_opening_card_holder_in_a_later_hand(opening, independent):
    rules = HK.replace(players=3, no_lone_two_finish=True, opening=opening, match_end_value=5)
    g = Game.from_hands(rules, ["3D", "4D", "5D"])
    g.apply("3D")
    assert g.hand_over and not g.match_over
    g.next_hand(["2C 2S", "2D", "2H"], independent=independent)
    assert g.turn == 1 and str(g.must_include) == "2D"
    g.apply(PASS)
    assert g.must_include is None
    assert g.turn == 2 and g.legal_moves() == [PASS]
    g.apply(PASS)
    assert g.turn == 0 and strs(g.legal_moves()) == ["2C", "2C 2S", "2S"]


# ----- scoring ------------------------------------------------------------------------------
SCORING_HANDS = [
    "3D",
    "4D 4C 4H 4S 5D 5C 5H 5S",  # 8 cards
    "6D 6C 6H 6S 7D 7C 7H 7S 8D 8C",  # 10 cards
    "9D 9C 9H 9S TD TC TH TS JD JC JH JS QD",  # 13 cards
]


def finished(rules, hands=SCORING_HANDS):
    g = Game.from_hands(rules, hands)
    g.apply(str(g.must_include))
    assert g.hand_over and g.winner == 0
    return g.results[-1]


@pytest.mark.parametrize(
    "scoring, penalties, scores",
    [
        ("hk", (0, 16, 30, 52), (98, -16, -30, -52)),
        ("flat", (0, 8, 10, 13), (31, -8, -10, -13)),
        ("family", (0, 8, 20, 39), (0, -8, -20, -39)),
        ("pusoy", (0, 8, 20, 39), (67, -8, -20, -39)),
    ],
)
def test_scoring_tables(scoring, penalties, scores):
    match_end = "threshold" if scoring == "family" else "hands"
    rules = HK.replace(scoring=scoring, match_end=match_end)
    result = finished(rules)
    assert result.cards_left == (0, 8, 10, 13)
    assert result.penalties == penalties and result.scores == scores
    assert result.cumulative == scores


def test_hk_multiplier_boundaries():
    from bigtwo.scoring import base_penalty

    assert [base_penalty("hk", n) for n in (1, 7, 8, 9, 10, 12, 13, 17)] == [
        1,
        7,
        16,
        18,
        30,
        36,
        52,
        68,
    ]
    assert [base_penalty("family", n) for n in (1, 9, 10, 12, 13)] == [1, 9, 20, 24, 39]


def test_pusoy_bonuses_for_highest_card_and_all_four_twos():
    result = finished(PUSOY, ["3C", "4D 7D", "2C 2S 2H 2D 5D", "6D 6C"])
    assert result.penalties == (0, 2, 5 + 1 + 4, 2)
    result = finished(PUSOY, ["3C", "2D 7D", "2C 2S 2H 5D", "6D 6C"])
    assert result.penalties == (0, 2 + 1, 4, 2)
    assert sum(result.scores) == 0


def test_twos_double_penalty():
    rules = HK.replace(twos_double_penalty=True)
    result = finished(rules, ["3D", "2D 4D", "5C 6C", "7C 8C"])
    assert result.penalties == (0, 4, 2, 2) and result.scores == (8, -4, -2, -2)


def test_teams_losing_team_pays_the_sum_of_its_penalties():
    rules = HK.replace(teams=True)
    result = finished(rules)
    assert result.winning_team == (0, 2)
    assert result.penalties == (0, 16, 0, 52)
    assert result.scores == (68, -68, 68, -68)


# ----- matches --------------------------------------------------------------------------------
def play_match(rules, seed, move_seed=0):
    g = Game(rules, seed=seed)
    rng = random.Random(move_seed)
    g.play_out(lambda game: rng.choice(game.legal_moves()))
    return g


def test_fixed_hands_match():
    g = play_match(PUSOY.replace(match_end_value=3), seed=1)
    assert g.match_over and len(g.results) == 3
    with pytest.raises(IllegalMoveError, match="match is over"):
        g.next_hand()
    for prev, nxt in zip(g.results, g.results[1:], strict=False):
        assert [p + s for p, s in zip(prev.cumulative, nxt.scores, strict=True)] == list(
            nxt.cumulative
        )


def test_target_and_threshold_end_matches():
    g = play_match(HK.replace(match_end_value=30), seed=2)
    assert max(g.scores) >= 30 and all(max(r.cumulative) < 30 for r in g.results[:-1])
    f = play_match(FAMILY.replace(match_end_value=40), seed=2)
    assert max(f.penalty_totals) > 40
    assert f.places()[f.scores.index(max(f.scores))] == 1


def test_places_share_ties():
    g = Game(HK, seed=0)
    g.scores = [5, 5, -3, -7]
    assert g.places() == [1, 1, 3, 4]


def test_seed_determines_the_match():
    a, b = play_match(HK, 9, 4), play_match(HK, 9, 4)
    assert [str(x.move) for x in a.history] == [str(x.move) for x in b.history]
    assert a.scores == b.scores


def test_next_hand_requires_a_finished_hand():
    g = Game(HK, seed=0)
    with pytest.raises(IllegalMoveError, match="still being played"):
        g.next_hand()


@pytest.mark.parametrize(
    "hands, message",
    [
        (["3D", "4D", "5D"], "3 hands given for 4 players"),
        (["3D", "3D", "5D", "6D"], "dealt twice"),
        (["3D", "", "5D", "6D"], "no cards"),
    ],
)
def test_explicit_hands_are_checked(hands, message):
    with pytest.raises(ValueError, match=message):
        Game.from_hands(HK, hands)


# ----- observations ------------------------------------------------------------------------------
def test_observation_holds_only_what_the_seat_may_know():
    g = Game(HK, seed=4)
    rng = random.Random(3)
    for _ in range(9):
        g.apply(rng.choice(g.legal_moves()))
    me = (g.turn + 1) % 4
    obs = g.observation(me)
    assert obs.hand == g.hand(me) and obs.legal_moves == () and not obs.is_my_turn
    mine = g.observation(g.turn)
    assert mine.is_my_turn and list(mine.legal_moves) == g.legal_moves()
    others = {c for s in range(4) if s != me for c in g.hand(s)}
    text = repr(obs)
    for c in others:
        assert f"Card('{c}')" not in text.replace(repr(obs.history), "")
    unseen = obs.unseen_cards()
    assert set(unseen) == others
    assert len(obs.played_cards()) == 52 - sum(g.counts)
    assert obs.describe(PASS) == "pass" and obs.describe("9D 9S") == "pair of 9s (9D 9S)"


def test_observation_results_hide_other_seats_remaining_cards():
    g = Game.from_hands(HK, ["3D", "4D 5D", "6D 7D", "8D 9D"])
    g.apply("3D")
    obs = g.observation(1)
    assert obs.results[0].remaining[1] == tuple(parse_cards("4D 5D"))
    assert obs.results[0].remaining[2] == () and obs.results[0].cards_left == (0, 2, 2, 2)
