"""``bigtwo.judge``: one verdict for one answer, and the strikes and forfeits it costs —
the one judge of the referee, ``play_local`` and the Gymnasium environment."""

from pathlib import Path

import pytest

from bigtwo import PASS, Game, RuleSet
from bigtwo.judge import (
    ERROR_EXCEPTION,
    ERROR_INVALID_RETURN,
    ERROR_NONE,
    Answer,
    Standing,
    Verdict,
    judge,
)
from bigtwo.v1 import referee_pb2 as pb

ROOT = Path(__file__).resolve().parents[2]


def opening() -> Game:
    """hk, the opening lead: the seat to move must lead the 3 of diamonds."""
    return Game.from_hands(RuleSet.preset("hk"), ["3D 4D 5C", "3C 6D", "3H 7D", "3S 8D"])


def test_the_error_codes_are_the_protocols():
    assert (ERROR_NONE, ERROR_EXCEPTION, ERROR_INVALID_RETURN) == (
        pb.BOT_ERROR_NONE,
        pb.BOT_ERROR_EXCEPTION,
        pb.BOT_ERROR_INVALID_RETURN,
    )


@pytest.mark.parametrize(
    ("answer", "kind", "detail"),
    [
        (Answer.raised("ValueError: kaput"), "crash", "the bot's act() raised: ValueError: kaput"),
        (Answer.of(3.5), "illegal", "the bot returned no play: act() returned 3.5, which is"),
        (Answer(error=7), "protocol", "unknown error code 7"),
        (Answer(passes=True, cards=(0,)), "protocol", "an action that both passes and plays"),
        (Answer(cards=(0, 52)), "protocol", "card id 52 is not in 0..51"),
        (Answer(cards=(-1,)), "protocol", "card id -1 is not in 0..51"),
        (Answer.of(PASS), "illegal", "pass: "),
        (Answer.of("4D"), "illegal", "4D: "),
        (Answer.of("3D 4D"), "illegal", "3D 4D: "),
    ],
)
def test_a_fault_has_its_kind_and_reason(answer, kind, detail):
    g = opening()
    before = (g.turn, len(g.history), g.hands)
    verdict = judge(g, answer)
    assert verdict.move is None and verdict.fault == kind
    assert verdict.detail.startswith(detail), verdict.detail
    assert (g.turn, len(g.history), g.hands) == before  # judging changes nothing


def test_a_legal_answer_is_the_engines_move():
    g = opening()
    lead = g.legal_moves()[0]
    assert judge(g, Answer.of(lead)) == Verdict(lead)
    assert judge(g, Answer.of(lead)).move is lead  # a combination of these rules, as it is
    assert judge(g, Answer(cards=(0,))).move == lead  # card ids, as over the wire
    other = RuleSet.preset("pusoy").classify("3D")  # another rule set's: judged again
    assert judge(g, Answer.of(other)).move == lead
    g.apply(lead)
    assert judge(g, Answer.of("pass")).move is PASS


def test_strikes_forfeit_at_max_strikes_and_a_bot_gone_forfeits_at_once():
    st = Standing(max_strikes=2)
    assert st.charge("illegal", hand=0) and (st.strikes, st.forfeited) == (1, False)
    assert st.charge("timeout", hand=1) and (st.strikes, st.forfeited) == (2, True)
    assert st.forfeit_hand == 1 and not st.gone
    st.charge("crash", hand=2)
    assert st.forfeit_hand == 1  # the hand in which the fallback first took over
    gone = Standing(max_strikes=3)
    assert not gone.charge("disconnect", hand=4)
    assert (gone.strikes, gone.forfeited, gone.gone, gone.forfeit_hand) == (0, True, True, 4)
    crashed = Standing(max_strikes=3)
    assert not crashed.charge("crash", hand=0, gone=True) and crashed.forfeited
    with pytest.raises(ValueError, match="max_strikes must be at least 1"):
        Standing(0)


def test_the_referees_moves_for_a_faulty_and_a_forfeited_seat():
    g = opening()
    st = Standing(1)
    assert st.referee_move(g) == g.legal_moves()[0]  # leading: no pass, the first play
    g.apply(g.legal_moves()[0])
    assert st.referee_move(g) is PASS  # the default action passes when it may
    st.charge("illegal", hand=0)
    assert st.referee_move(g) == g.legal_moves()[0] is not PASS  # the fallback plays


def test_the_fault_texts_live_in_the_judge_alone():
    """The referee, play_local and the environment judge with bigtwo.judge: none of them
    words a verdict of its own (the class of bug: two judges drifting apart)."""
    texts = ("the bot returned no play", "unknown error code", "both passes and plays")
    homes = {
        text: sorted(
            str(p.relative_to(ROOT))
            for folder in ("arena", "sdk/bigtwo")
            for p in (ROOT / folder).rglob("*.py")
            if text in p.read_text()
        )
        for text in texts
    }
    # the public record reads the verdicts' opening words to choose a public reason
    words, reader = "sdk/bigtwo/judge.py", "arena/public_record.py"
    assert all(set(found) <= {words, reader} and words in found for found in homes.values()), homes
