"""Four sample bots as real processes over a real gRPC Unix socket play full matches under
every preset; the record replays and re-validates with the engine."""

import json

import pytest

from arena.record import RecordError, replay

from .conftest import play


@pytest.mark.parametrize("preset", ["hk", "family", "pusoy"])
def test_sample_bots_play_full_matches_and_the_record_replays(preset, record_file):
    result = play(
        ["random", "greedy", "heuristic", "greedy"], preset, hands=3, seed=4, record=record_file
    )
    assert result["match_over"] and len(result["hands"]) == 3
    assert result["sandbox"] == "process"
    for seat in result["seats"]:
        assert seat["faults"] == [] and not seat["forfeit"]
    rep = replay(record_file)
    assert rep.complete and rep.turns > 20
    assert list(rep.game.scores) == [s["score"] for s in result["seats"]]
    events = [json.loads(line) for line in record_file.read_text().splitlines()]
    kinds = {e["type"] for e in events}
    assert kinds == {"match", "deal", "turn", "hand_end", "match_end"}
    assert (
        events[0]["rules"]["scoring"] == {"hk": "hk", "family": "family", "pusoy": "pusoy"}[preset]
    )


def test_a_tampered_record_is_caught(record_file, tmp_path):
    play(["greedy", "greedy", "greedy", "greedy"], "hk", hands=1, seed=2, record=record_file)
    lines = record_file.read_text().splitlines()
    turn_lines = [i for i, line in enumerate(lines) if '"type":"turn"' in line]
    i = turn_lines[0]
    ev = json.loads(lines[i])
    ev["move"] = "2S"  # nobody leads the 2 of spades in place of the 3 of diamonds
    lines[i] = json.dumps(ev)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordError, match=f"bad.jsonl:{i + 1}"):
        replay(bad)


def test_three_and_two_player_matches(record_file):
    from bigtwo import RuleSet

    three = play(
        ["heuristic", "greedy", "random"],
        RuleSet.preset("pusoy").replace(players=3),
        hands=2,
        record=record_file,
    )
    assert len(three["seats"]) == 3 and replay(record_file).complete
    two = play(["heuristic", "greedy"], RuleSet.preset("hk").replace(players=2), hands=2)
    assert len(two["seats"]) == 2


def test_inproc_sandbox_still_speaks_grpc():
    result = play(["greedy", "heuristic", "random", "greedy"], "family", hands=2, sandbox="inproc")
    assert result["sandbox"] == "inproc" and len(result["hands"]) == 2
