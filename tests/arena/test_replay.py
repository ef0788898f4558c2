"""`arena replay` as a bot author uses it (issue 9): a real match recorded by `arena match`,
replayed by the real command — what it shows (names, deals, moves, tricks, faults, hand
results), `--step` driven through real stdin (keys, end of input, Ctrl-C), and a hostile
record whose words reach the terminal harmless.  A replay that reads no stdin and sets no
terminal runs ``arena.cli.main`` in the test process (``testkit.arena_main``)."""

import json
import os
import re
import select
import signal
import subprocess
import time
import unicodedata
from functools import partial

import pytest

from bigtwo import parse_cards

from testkit import arena as run_arena
from testkit import arena_command, arena_main  # arena_main: replay without --step

arena = partial(run_arena, stdin="", timeout=120)  # `--step` reads stdin: empty, or typed
PROMPT = "Enter next move · n next hand · c to the end · q quit · ? help ›"
SGR = re.compile(r"\x1b\[[0-9;]*m")
FLAKY = '''
from bigtwo import Bot


class Flaky(Bot):
    """Raises in act() twice, then plays its weakest legal move."""

    calls = 0

    def act(self, observation):
        self.calls += 1
        if self.calls <= 2:
            raise RuntimeError("flaky on purpose")
        return observation.legal_moves[0]
'''


def events(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_events(path, evs):
    path.write_text("".join(json.dumps(e) + "\n" for e in evs))


def turn_lines(out):
    """The lines of moves: the referee's turn id, then the mover."""
    return [line for line in out.splitlines() if re.match(r"^\s*\d+\s+\S.* \(seat \d\) ", line)]


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    path = tmp_path_factory.mktemp("replay") / "m.jsonl"
    proc = arena(
        "match", "random", "greedy", "heuristic", "random", "--sandbox", "inproc",
        "--record", str(path), "--seed", "1", "--hands", "2",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return path


@pytest.fixture(scope="module")
def faulty_record(tmp_path_factory):
    folder = tmp_path_factory.mktemp("faulty")
    bot = folder / "flaky.py"
    bot.write_text(FLAKY)
    path = folder / "f.jsonl"
    proc = arena(
        "match", str(bot), "greedy", "heuristic", "random", "--sandbox", "inproc",
        "--record", str(path), "--seed", "1", "--hands", "1", "--max-strikes", "2",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return path


def test_replay_shows_the_match_as_a_bot_author_needs_it(record):
    proc = arena_main("replay", str(record))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    evs = events(record)
    header = evs[0]
    names = [s["bot"] for s in header["seats"]]
    assert names == ["random#1", "greedy", "heuristic", "random#2"]
    # the header: match id, rules, seed, every seat's bot
    assert f"Match {header['match_id']}" in out
    assert "rules   hk with match_end=hands, match_end_value=2" in out
    assert "deals   from seed 1" in out
    for seat, name in enumerate(names):
        assert f"{name} (seat {seat})" in out
    # every deal: each seat's 13 cards, weakest first, after the bot's name; hands from 1
    deals = [e for e in evs if e["type"] == "deal"]
    assert len(deals) == 2 and "Hand 1" in out and "Hand 2" in out
    for deal in deals:
        for seat, cards in enumerate(deal["hands"]):
            shown = " ".join(c.symbol for c in parse_cards(cards))
            assert re.search(rf"{re.escape(names[seat])} \(seat {seat}\): {shown}$", out, re.M)
    # every move, by name, with the referee's turn id; passes; trick winners
    turns = [e for e in evs if e["type"] == "turn"]
    lines = turn_lines(out)
    assert len(lines) == len(turns)
    for ev, line in zip(turns, lines, strict=True):
        assert line.split()[0] == str(ev["turn"])
        assert f"{names[ev['seat']]} (seat {ev['seat']})" in line
    assert "passes" in out and "— out!" in out
    assert "— trick won by " in out and ", who leads next" in out
    # each hand's result: winner by name, cards left, points, running totals
    for end in (e for e in evs if e["type"] == "hand_end"):
        winner = end["winner"]
        assert f"Hand {end['hand'] + 1}: {names[winner]} (seat {winner}) wins" in out
        for seat, name in enumerate(names):
            cells = [
                f"{name} (seat {seat})",
                str(end["cards_left"][seat]),
                str(end["penalties"][seat]),
                f"{end['scores'][seat]:+d}",
                f"{end['cumulative'][seat]:+d}",
            ]
            row = r" │\s+".join(re.escape(c) for c in cells) + " │"
            assert re.search(row, out), row
    assert "Final standings" in out
    assert "all legal; record complete" in out.replace("\n", " ")


def test_quiet_only_checks(record):
    proc = arena_main("replay", "--quiet", str(record))
    assert proc.returncode == 0, proc.stderr
    assert "all legal; record complete" in proc.stdout.replace("\n", " ")
    assert "Hand 1" not in proc.stdout and not turn_lines(proc.stdout)


def test_step_enter_then_q_stops_cleanly_and_says_what_was_checked(record):
    proc = arena("replay", "--step", str(record), stdin="\n" * 3 + "q\n")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert len(turn_lines(out)) == 4 and out.count(PROMPT) == 4
    flat = " ".join(out.split())
    assert "replay stopped (q pressed) after hand 1, turn 4: 4 moves in 0 complete hands" in flat
    assert "all legal so far" in flat
    assert "record complete" not in flat and proc.stderr == ""


def test_step_end_of_input_is_a_clean_stop_not_a_failed_check(record):
    proc = arena("replay", "--step", str(record), stdin="\n\n")  # then Ctrl-D
    assert proc.returncode == 0, proc.stderr
    assert len(turn_lines(proc.stdout)) == 3
    flat = " ".join(proc.stdout.split())
    assert "replay stopped (end of input) after hand 1, turn 3: 3 moves" in flat
    assert "Traceback" not in proc.stderr and "error" not in proc.stderr


def test_step_n_goes_on_to_the_next_hand(record):
    first_of_hand_2 = next(e for e in events(record) if e["type"] == "turn" and e["hand"] == 1)
    proc = arena("replay", "--step", str(record), stdin="n\nq\n")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.count(PROMPT) == 2 and "Hand 1: " in out and "Hand 2" in out
    flat = " ".join(out.split())
    assert f"after hand 2, turn {first_of_hand_2['turn']}:" in flat
    assert "in 1 complete hand checked" in flat


def test_step_help_and_unknown_keys(record):
    proc = arena("replay", "--step", str(record), stdin="?\nzz\nc\n")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.count("Enter   show the next move") == 2 and "unknown key 'zz'" in out
    assert "q       quit" in out and "Ctrl-D (end of input) stops like q" in out
    # `c` runs to the end without stopping again
    assert out.count(PROMPT) == 3 and "all legal; record complete" in out.replace("\n", " ")


def test_step_ctrl_c_is_exit_130_with_one_line(record):
    proc = subprocess.Popen(
        arena_command("replay", "--step", str(record)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        seen = b""
        deadline = time.monotonic() + 60
        while PROMPT.encode() not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 1)
            if ready:
                seen += os.read(proc.stdout.fileno(), 4096)
        assert PROMPT.encode() in seen, seen
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert err.decode().strip() == "error: interrupted"


def test_step_and_quiet_together_are_refused(record):
    proc = arena_main("replay", "--step", "--quiet", str(record))
    assert proc.returncode == 2 and "--step" in proc.stderr and "Traceback" not in proc.stderr


def test_a_missing_record_is_one_line(tmp_path):
    proc = arena_main("replay", str(tmp_path / "absent.jsonl"))
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "No such file" in proc.stderr


def test_a_bad_move_still_fails_the_check_after_what_was_shown(record, tmp_path):
    evs = events(record)
    turns = [i for i, e in enumerate(evs) if e["type"] == "turn"]
    evs[turns[5]]["move"] = "2S 2H"
    bad = tmp_path / "bad.jsonl"
    write_events(bad, evs)
    proc = arena_main("replay", str(bad))
    assert proc.returncode == 1 and f"bad.jsonl:{turns[5] + 1}: " in proc.stderr
    assert len(turn_lines(proc.stdout)) == 5 and "Traceback" not in proc.stderr


def test_faults_are_shown_where_they_happened(faulty_record):
    proc = arena("replay", str(faulty_record), env={**os.environ, "COLUMNS": "300"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if "⚠ fault flaky (seat 0): crash" in line)
    fault = lines[first]
    assert "(hand 1, turn 1): the bot's act() raised: RuntimeError: flaky on purpose" in fault
    assert fault.endswith("[strike 1 of 2]")
    after = lines[first:]
    move = next(line for line in after if re.match(r"^\s*1\s+flaky \(seat 0\) leads", line))
    assert "(played by the referee)" in move
    assert "the seat forfeits: the referee plays it from now on" in proc.stdout
    assert "[strike 2 of 2]" in proc.stdout
    assert "2 faults, all legal" in proc.stdout.replace("\n", " ")


def test_a_record_with_its_own_deals(record, tmp_path):
    """Duplicate play writes its deals; the header comes before any game exists."""
    evs = events(record)
    first_end = next(i for i, e in enumerate(evs) if e["type"] == "hand_end")
    evs = evs[: first_end + 1]
    evs[0]["deals"] = "explicit"
    own = tmp_path / "own.jsonl"
    write_events(own, evs)
    proc = arena_main("replay", str(own))
    assert proc.returncode == 0, proc.stderr
    assert "deals   from the record" in proc.stdout and "random#1 (seat 0)" in proc.stdout
    assert "record INCOMPLETE" in proc.stdout.replace("\n", " ")


def _unsafe(ch):
    return unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp") and ch != "\u200d"


def _hostile(probe):
    """Clears the screen, reverses the text; short enough to be shown whole."""
    return f"\x1b[2J\u202e{probe}"


@pytest.mark.parametrize("colour", [False, True], ids=["plain", "colour"])
def test_a_hostile_record_reaches_no_terminal(record, tmp_path, colour):
    """Every field of a record is someone else's text: shown with its controls made
    visible, and its markup as written."""
    osc = "\x1b]0;pwned\x07\x9b[blink]{}[/blink]\r\x08"  # longer than some fields show
    evs = events(record)
    header = evs[0]
    header["match_id"] = _hostile("IDPROBE")
    header["seats"][1]["bot"] = _hostile("NAMEPROBE")
    header["seats"][2]["bot"] = osc.format("CUTPROBE")
    header["time_control"]["move_ms"] = osc.format("CLOCKPROBE")
    header["sandbox"]["name"] = _hostile("BOXPROBE")
    header["started_at"] = 1e300
    first_turn = next(i for i, e in enumerate(evs) if e["type"] == "turn")
    evs[first_turn]["turn"] = _hostile("TURNPROBE")
    evs.insert(
        first_turn,
        {
            "type": "fault",
            "seat": 1,
            "kind": _hostile("KINDPROBE"),
            "hand": 0,
            "turn": _hostile("FTURNPROBE"),
            "detail": osc.format("DETAILPROBE"),
            "strike": True,
            "strikes": osc.format("STRIKEPROBE"),
            "forfeited": True,
        },
    )
    evs.insert(first_turn, {"type": "fault", "seat": osc.format("SEAT"), "hand": "x"})
    evs.insert(first_turn, {"type": _hostile("TYPEPROBE")})
    shown = tmp_path / "r\x1b[2J\u202e[blink]FILEPROBE[bold].jsonl"
    write_events(shown, evs)
    env = {**os.environ, "COLUMNS": "300"}
    if colour:
        env["FORCE_COLOR"] = "1"
    proc = arena("replay", str(shown), env=env)
    assert proc.returncode == 0, proc.stderr
    out = SGR.sub("", proc.stdout) if colour else proc.stdout
    for probe in ("IDPROBE", "NAMEPROBE", "BOXPROBE", "TURNPROBE", "KINDPROBE", "FTURNPROBE"):
        assert f"\\x1b[2J\\u202e{probe}" in out, probe
    assert "\\x1b[2J\\u202eTYPEPROBE" in out
    assert "\\x1b]0;pwned\\x07\\x9b[blink]DETAILPROBE[/blink]\\r\\x08" in out
    assert "NAMEPROBE (seat 1) leads" in out or "NAMEPROBE (seat 1) plays" in out
    assert "[blink]FILEPROBE[bold]" in out and "\\x1b]0;pwned" in out
    assert not any(_unsafe(c) for c in out.replace("\n", "")), repr(out)
    assert not any(_unsafe(c) for c in proc.stderr.replace("\n", "")), repr(proc.stderr)
    if colour:
        assert "\x1b[" in proc.stdout  # colour was on: only SGR sequences were removed
