"""Four sample bots as real processes over a real gRPC Unix socket play full matches under
every preset; the record replays and re-validates with the engine."""

import json
import secrets
from pathlib import Path

import pytest

from arena.record import RecordError, replay
from arena.sandbox.containers import docker_client

from .conftest import play
from testkit import arena, need_docker


@pytest.mark.parametrize("preset", ["hk", "family", "pusoy"])
async def test_sample_bots_play_full_matches_and_the_record_replays(preset, record_file):
    result = await play(
        ["random", "greedy", "heuristic", "greedy"], preset, hands=3, seed=4, record=record_file
    )
    assert result.match_over and len(result.hands) == 3
    assert result.sandbox == "process"
    for seat in result.seats:
        assert seat.faults == () and not seat.forfeit
    rep = replay(record_file)
    assert rep.complete and rep.turns > 20
    assert list(rep.game.scores) == [s.score for s in result.seats]
    events = [json.loads(line) for line in record_file.read_text().splitlines()]
    kinds = {e["type"] for e in events}
    assert kinds == {"match", "deal", "turn", "hand_end", "match_end"}
    assert (
        events[0]["rules"]["scoring"] == {"hk": "hk", "family": "family", "pusoy": "pusoy"}[preset]
    )


async def test_a_tampered_record_is_caught(record_file, tmp_path):
    await play(["greedy", "greedy", "greedy", "greedy"], "hk", hands=1, seed=2, record=record_file)
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


async def test_three_and_two_player_matches(record_file):
    from bigtwo import RuleSet

    three = await play(
        ["heuristic", "greedy", "random"],
        RuleSet.preset("pusoy").replace(players=3),
        hands=2,
        record=record_file,
    )
    assert len(three.seats) == 3 and replay(record_file).complete
    two = await play(["heuristic", "greedy"], RuleSet.preset("hk").replace(players=2), hands=2)
    assert len(two.seats) == 2


async def test_inproc_sandbox_still_speaks_grpc():
    result = await play(
        ["greedy", "heuristic", "random", "greedy"], "family", hands=2, sandbox="inproc"
    )
    assert result.sandbox == "inproc" and len(result.hands) == 2


@pytest.mark.docker
def test_docker_match_builds_every_bot_image_automatically(tmp_path):
    """The issue's command: sample bots and a bot file with a class name, in containers."""
    need_docker()
    client = docker_client(timeout=60)
    mine = tmp_path / "my_bot.py"
    mine.write_text(
        "from bigtwo import PASS, Bot\n\n\nclass Helper(Bot):\n    pass\n\n\n"
        "class MyBot(Bot):\n    def act(self, observation):\n"
        "        return observation.legal_moves[-1]\n"
        f"# {secrets.token_hex(8)}: new code, so its image is built in this test\n"
    )
    root = Path(__file__).resolve().parents[2]
    samples = [str(root / "sample_bots" / n) for n in ("random", "greedy", "heuristic")]
    proc = arena(
        "match", "--sandbox", "docker", "--hands", "2", "--json", *samples, f"{mine}:MyBot",
        timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["sandbox"] == "docker" and len(result["hands"]) == 2
    assert [s["bot"] for s in result["seats"]][3] == "my_bot:MyBot"
    # said on stderr while it happens (the first hand's line came after a silent build)
    said = proc.stderr.splitlines()
    assert (
        said[0]
        == "starting 4 bots in the docker sandbox; the table begins when the first hand ends"
    )
    assert "building the image of my_bot:MyBot (its code is new to this engine)…" in said
    assert any(line.startswith("built the image of my_bot:MyBot in ") for line in said)
    assert all(s["faults"] == [] for s in result["seats"])
    # the engine's one listing call (the SDK's list() inspects every image after it: with
    # the many bot images a test machine gathers, one of those calls timed out under load)
    tags = {
        t
        for image in client.api.images(filters={"label": "org.bigtwo-arena.managed=1"})
        for t in image.get("RepoTags") or []
    }
    assert any(t.startswith("bigtwo-bot/my_bot") for t in tags)


async def test_duplicate_deals_rotate_the_hands_and_replay(record_file):
    """Each deal is played in every seat rotation as an independent hand; the record
    replays from the recorded deals."""
    from arena.ladder.duplicate import rotated_deals
    from arena.match import run_match
    from arena.referee.time_control import TimeControl
    from bigtwo import RuleSet

    from .conftest import bot

    rules = RuleSet.preset("hk")
    deals = rotated_deals(rules, [11, 12], rotations=4)
    assert len(deals) == 8
    for r in range(4):  # rotation r: seat s holds hand (s + r) % 4 of the deal
        assert deals[r][0] == deals[0][r]
    result = await run_match(
        [bot("greedy"), bot("heuristic"), bot("random"), bot("greedy")],
        rules,
        5,
        TimeControl(),
        "inproc",
        record_file,
        deals=deals,
    )
    assert len(result.hands) == 8 and result.rules["match_end"] == "hands"
    events = [json.loads(line) for line in record_file.read_text().splitlines()]
    dealt = [e for e in events if e["type"] == "deal"]
    recorded = [[sorted(map(_card_id, h)) for h in e["hands"]] for e in dealt]
    assert recorded == [[sorted(h) for h in d] for d in deals]
    for e in dealt:  # every hand opens like a first hand: the 3♦ holder leads
        assert "3D" in e["hands"][e["leader"]]
    rep = replay(record_file)
    assert rep.complete and rep.turns > 40


def _card_id(text):
    from bigtwo import Card

    return int(Card(text))
