"""The SDK's wire side: generated code in sync with the .proto, rules over the wire, what a
bot's return value becomes, loading bots, and the runner's command line."""

import subprocess
import sys
from pathlib import Path

import pytest

from bigtwo import PASS, Bot, RuleSet
from bigtwo.client import InvalidReturn, decide, encode_move
from bigtwo.loader import BotLoadError, load_bot_class, split_spec
from bigtwo.v1 import referee_pb2 as pb
from bigtwo.wire import rules_from_pb, rules_to_pb

ROOT = Path(__file__).resolve().parents[2]


def test_generated_code_matches_the_proto():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_proto.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_rule_option_travels_in_match_start():
    from bigtwo import OPTION_NAMES

    assert set(pb.Rules.DESCRIPTOR.fields_by_name) == set(OPTION_NAMES)
    for name in ("hk", "family", "pusoy"):
        rules = RuleSet.preset(name).replace(players=3, revolution=True)
        assert rules_from_pb(pb.Rules.FromString(rules_to_pb(rules).SerializeToString())) == rules


def test_invalid_rules_on_the_wire_are_a_clear_error():
    from bigtwo import RulesError

    with pytest.raises(RulesError, match="match start carries invalid rules"):
        rules_from_pb(pb.Rules(players=9))


def test_encode_move_sends_what_the_bot_returned_without_fixing_it():
    rules = RuleSet.preset("hk")
    assert encode_move(PASS) == (True, [])
    assert encode_move("pass") == (True, [])
    assert encode_move(rules.classify("3D 3C")) == (False, [0, 1])
    assert encode_move("2S 3D") == (False, [51, 0])  # not a combination: still sent as is
    assert encode_move(["3D"]) == (False, [0])
    assert encode_move([]) == (False, [])
    for junk in (None, 3.14, {"a": 1}, ["ZZ"], "nonsense", object()):
        with pytest.raises(InvalidReturn):
            encode_move(junk)


class Boom(Bot):
    def act(self, observation):
        raise ValueError("kaput")


class Junk(Bot):
    def act(self, observation):
        return None


def test_decide_reports_bot_errors_instead_of_dying():
    action = decide(Boom(), 7, None)
    assert action.turn_id == 7 and action.error == pb.BOT_ERROR_EXCEPTION
    assert "ValueError: kaput" in action.error_detail
    action = decide(Junk(), 8, None)
    assert action.error == pb.BOT_ERROR_INVALID_RETURN and "None" in action.error_detail


def test_loader_finds_bots_and_names_what_is_wrong(tmp_path):
    assert load_bot_class(str(ROOT / "sample_bots" / "greedy")).__name__ == "GreedyBot"
    assert split_spec("a/b.py:Cls") == ("a/b.py", "Cls")
    assert split_spec("a/b.py") == ("a/b.py", None)
    two = tmp_path / "two.py"
    two.write_text("from bigtwo import Bot\nclass A(Bot): pass\nclass B(Bot): pass\n")
    with pytest.raises(BotLoadError, match="exactly one Bot subclass, found A, B"):
        load_bot_class(str(two))
    assert load_bot_class(f"{two}:B").__name__ == "B"
    with pytest.raises(BotLoadError, match="no Bot subclass named 'C'"):
        load_bot_class(f"{two}:C")
    broken = tmp_path / "broken.py"
    broken.write_text("import no_such_module_here\n")
    with pytest.raises(BotLoadError, match="importing it failed"):
        load_bot_class(str(broken))
    with pytest.raises(BotLoadError, match="no such file"):
        load_bot_class(str(tmp_path / "missing.py"))
    with pytest.raises(BotLoadError, match=r"has no bot\.py"):
        load_bot_class(str(tmp_path))


def creds(address):
    return ["--address", address, "--match-id", "m", "--seat", "0", "--token", "t"]


def run_bot(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "bigtwo.run", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_runner_command_line_errors(tmp_path):
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    proc = run_bot(str(ROOT / "sample_bots" / "random"), env=env)
    assert proc.returncode == 2 and "missing --address, --match-id, --seat, --token" in proc.stderr
    proc = run_bot(str(tmp_path / "nope.py"), *creds("unix:///x"), env=env)
    assert proc.returncode == 2 and "no such file" in proc.stderr
    sock = tmp_path / "none.sock"
    proc = run_bot(str(ROOT / "sample_bots" / "random"), *creds(f"unix://{sock}"), env=env)
    assert proc.returncode == 1 and "UNAVAILABLE" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run_bot("--help")
    assert proc.returncode == 0 and "ARENA_ADDRESS" in proc.stdout
