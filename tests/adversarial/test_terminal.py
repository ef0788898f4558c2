"""A bot's words never steer the operator's terminal (issue 8, class 8).

Whatever a bot controls — its stderr tail (in the sandbox's exit report), the message of an
exception in its ``act()``, its Hello name, its file name — and whatever a user hands the
arena (a record file, a ladder database) is shown with control characters made visible,
bounded, and never read as rich markup.  The probes run the real ``arena`` command and
look at the bytes it writes: the hostile bot's marker must be there (the probe ran and its
words were shown), its escape sequences must not."""

import json
import os
import re
import shutil
import sqlite3
import time
import unicodedata
from pathlib import Path

import pytest

from arena.text import ELLIPSIS, printable

from testkit import arena as run_arena

BOTS = Path(__file__).parent / "bots"
ESCAPER = BOTS / "escaper.py"
MARKER = "ESCAPER-PROBE"
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
SGR = re.compile(r"\x1b\[([0-9;]*)m")

# ----- the sanitiser -----------------------------------------------------------------------


def _unsafe(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp") and ch != "\u200d"


@pytest.mark.parametrize(
    "ch",
    [chr(c) for c in range(0x20)]  # C0: ESC, BEL, BS, CR, LF, TAB, ...
    + ["\x7f"]  # DEL
    + [chr(c) for c in range(0x80, 0xA0)]  # C1: CSI 0x9b, OSC 0x9d, ST 0x9c, NEL 0x85, ...
    + list(BIDI)  # bidi embeddings, overrides, isolates and marks
    + ["\u2028", "\u2029", "\u200b", "\ufeff", "\U000e0041"]  # separators, invisibles, tags
    + ["\ud800", "\udfff"],  # lone surrogates
)
def test_every_control_character_is_made_visible(ch):
    shown = printable(f"a{ch}b")
    assert shown.startswith("a\\") and shown.endswith("b")
    assert not any(_unsafe(c) for c in shown), repr(shown)
    shown.encode("utf-8")  # a lone surrogate could not even be written


def test_the_whole_of_unicode_comes_out_harmless():
    everything = "".join(chr(c) for c in range(0x110000))
    shown = printable(everything, limit=10 * len(everything))
    assert not any(_unsafe(c) for c in shown)
    shown.encode("utf-8")


def test_readable_text_is_left_alone():
    text = "héllo wörld 👩\u200d💻 e\u0301 9♠ [blink]x[/blink] C:\\bots\\mine.py"
    assert printable(text) == text  # markup is the display's business, not the sanitiser's
    assert printable("\x1b[2Jcleared\ttab\r\n") == "\\x1b[2Jcleared\\ttab\\r\\n"
    assert printable("\u202eevil") == "\\u202eevil"
    assert printable(b"\xff\x1bbytes") == "\ufffd\\x1bbytes"
    assert printable(42) == "42" and printable(None) == "None"


def test_length_is_bounded_and_never_cuts_an_escape():
    assert printable("x" * 10, 10) == "x" * 10
    assert printable("x" * 11, 10) == "x" * 9 + ELLIPSIS
    start = time.perf_counter()
    huge = printable("y" * 50_000_000, 300)
    assert time.perf_counter() - start < 1 and len(huge) == 300 and huge.endswith(ELLIPSIS)
    escapes = printable("\x1b" * 100_000, 20)
    assert escapes == "\\x1b" * 4 + ELLIPSIS
    assert len(printable("\ud800" * 1000, 50)) <= 50
    assert printable("abc", 0) == ""


def test_applying_it_twice_changes_nothing():
    text = "\x1b]0;t\x07\u202e[blink]x\x9b"
    once = printable(text)
    assert printable(once) == once


# ----- the arena command, end to end -------------------------------------------------------


def _env(colour: bool) -> dict[str, str]:
    """The environment of an operator's terminal.  ``colour``: rich is told the output is a
    colour terminal, so the arena's own styles come out as SGR sequences (and markup a
    bot smuggled in would too); otherwise rich writes no escape sequence at all, and any
    ESC in the output is the bot's."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS")
    }
    env.update(TERM="xterm-256color", COLORTERM="truecolor", PYTHONIOENCODING="utf-8")
    if colour:
        env["FORCE_COLOR"] = "1"
    return env


def arena(*args: str, colour: bool = False, timeout: float = 300) -> tuple[int, str, str]:
    proc = run_arena(*args, env=_env(colour), timeout=timeout, text=False)
    for stream in (proc.stdout, proc.stderr):
        assert_harmless(stream, colour)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def assert_harmless(data: bytes, colour: bool) -> None:
    """Nothing in ``data`` steers a terminal, beyond the arena's own colours."""
    text = data.decode("utf-8")  # strict: no stray bytes either
    text = text.replace("\r\n", "\n")  # the CSV export's own line ends
    if colour:
        for params in SGR.findall(text):
            codes = params.split(";")
            i = 0
            while i < len(codes):  # skip 256-colour and true-colour arguments
                if codes[i] in ("38", "48"):
                    i += 3 if codes[i + 1] == "5" else 5
                    continue
                assert codes[i] not in ("5", "6"), f"blink in the output: {params!r}"
                i += 1
        text = SGR.sub("", text)  # the arena's own styles: the only sequences allowed
    assert "\x1b" not in text, _context(text, "\x1b")
    for ch in text:
        assert ch in "\n" or not _unsafe(ch), _context(text, ch)


def _context(text: str, ch: str) -> str:
    at = text.find(ch)
    return f"{ch!r} reached the terminal: {text[max(0, at - 80) : at + 80]!r}"


def _shown_literally(out: str) -> None:
    """The bot's markup is shown as written, and its escapes are visible, not active."""
    assert f"[blink]{MARKER}[/blink]" in out, out
    assert "[link=https://example.invalid/]markup-link[/link]" in out
    assert "\\x1b]0;pwned\\x07" in out and "\\x1b[2J" in out and "\\x9b31m" in out
    assert "\\u202e" in out


@pytest.mark.parametrize("colour", [False, True], ids=["plain", "colour"])
def test_a_hostile_bot_mid_match_reaches_no_terminal(backend, colour, tmp_path):
    record = tmp_path / "m.jsonl"
    args = ["match", "--sandbox", backend, "--hands", "1", "--seed", "2"]
    code, out, err = arena(
        *args,
        "--record",
        str(record),
        f"{ESCAPER}:Escaper",
        "greedy",
        "random",
        "heuristic",
        colour=colour,
    )
    assert code == 0, err
    flat = out.replace("\n", "")  # rich wraps long lines
    # the probe ran: its exception and its last stderr line are both reported, visibly
    assert "the bot's act() raised: RuntimeError: act \\x1b]0;pwned" in flat, out
    assert "the bot ended during the match" in flat and "stderr \\x1b]0;pwned" in flat, out
    assert "\\rOVERWRITTEN" in flat  # the carriage return does not overwrite the line
    _shown_literally(flat)
    # sanitised where it came in: the result and the record hold no control character
    for line in record.read_text().splitlines():
        for value in _strings(json.loads(line)):
            assert not any(_unsafe(c) for c in value), value
    replayed, rout, _ = arena("replay", str(record), colour=colour)
    assert replayed == 0 and "record complete" in rout


def test_hostile_words_in_json_are_escaped_json(tmp_path):
    code, out, err = arena(
        "match", "--sandbox", "process", "--hands", "1", "--seed", "2", "--json",
        f"{ESCAPER}:Escaper", "greedy", "random", "heuristic",
    )  # fmt: skip
    assert code == 0, err
    seat = json.loads(out)["seats"][0]
    details = [f["detail"] for f in seat["faults"]]
    assert any(MARKER in d and "\\x1b]0;pwned" in d for d in details), details
    for value in _strings(seat):
        assert not any(_unsafe(c) for c in value), value


@pytest.mark.parametrize("colour", [False, True], ids=["plain", "colour"])
def test_a_hostile_bot_that_fails_to_start_reaches_no_terminal(backend, colour):
    code, out, err = arena(
        "match", "--sandbox", backend, "--hands", "1", "--seed", "2",
        f"{ESCAPER}:AtStart", "greedy", "random", "heuristic",
        colour=colour,
    )  # fmt: skip
    assert code == 3, err
    flat = err.replace("\n", "")
    assert "failed to start" in flat and "creating the bot failed: RuntimeError: init" in flat, err
    _shown_literally(flat)
    # the match stopped before its first hand: no table, so nothing of the bot on stdout
    assert MARKER not in out and "final standings" not in out, out


def test_a_hostile_file_name_reaches_no_terminal(tmp_path):
    """The bot's public name is its file name.  Whether the arena accepts such a name or
    refuses it, the name is shown harmless."""
    folder = tmp_path / "bots"
    folder.mkdir()
    hostile = folder / "n\x1b]0;pwned\x07\x9b2J\u202e[blink]NAMEPROBE[bold].py"  # no "/"
    shutil.copy(BOTS / "good.py", hostile)
    code, out, err = arena(
        "match", "--sandbox", "process", "--hands", "1", "--seed", "2",
        str(hostile), "greedy", "random", "heuristic",
    )  # fmt: skip
    assert code in (0, 2), err
    assert "NAMEPROBE" in out + err  # shown (as a seat's name, or in the refusal)
    assert "[blink]NAMEPROBE" in (out + err).replace("\n", "")


def test_a_hostile_record_file_reaches_no_terminal(tmp_path):
    record = tmp_path / "m.jsonl"
    code, _, err = arena(
        "match", "--sandbox", "inproc", "--hands", "1", "--seed", "2", "--record",
        str(record), "random", "greedy", "heuristic", "random",
    )  # fmt: skip
    assert code == 0, err
    events = [json.loads(line) for line in record.read_text().splitlines()]
    turn = next(e for e in events if e["type"] == "turn")
    hostile = "\x1b]0;pwned\x07\x1b[2J\u202e[blink]RECORDPROBE[/blink]\x9b"
    turn["turn"] = "\x9b[blink]TURNPROBE"  # a field replay shows but does not check
    shown = tmp_path / "r\x1b[2J\u202e[blink]FILEPROBE[bold].jsonl"
    shown.write_text("".join(json.dumps(e) + "\n" for e in events))
    code, out, err = arena("replay", str(shown))
    flat = (out + err).replace("\n", "")
    assert "\\x9b[blink]TURNPROBE" in flat and "[blink]FILEPROBE[bold]" in flat, flat
    # a record that fails: the error quotes the bad move and names the file
    turn["turn"], turn["move"] = 1, hostile
    shown.write_text("".join(json.dumps(e) + "\n" for e in events))
    code, out, err = arena("replay", str(shown))
    flat = err.replace("\n", "")
    assert code == 1 and "[blink]RECORDPROBE[/blink]" in flat and "FILEPROBE" in flat, err


def test_hostile_names_in_a_ladder_database_reach_no_terminal(tmp_path):
    """Names read back from the database are shown harmless too (the leaderboard, the
    matrix, the CSV export), whatever let them in."""
    db = tmp_path / "ladder.db"
    code, _, err = arena(
        "ladder", "run", "--db", str(db), "--sandbox", "inproc", "--deals", "1", "--jobs", "1",
        "random", "greedy", "heuristic",
    )  # fmt: skip
    assert code == 0, err
    hostile = "\x1b[2J\u202e[blink]DBPROBE"  # shown whole in a 30-character cell
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE bots SET name = ? WHERE name = 'greedy'", (hostile,))
    for args in (["show", "--matrix"], ["export", "--csv"]):
        code, out, err = arena("ladder", *args, "--db", str(db))
        assert code == 0, err
        assert "\\x1b[2J\\u202e[blink]DBPROBE" in out, out
    code, out, err = arena("ladder", "show", "--json", "--db", str(db))
    assert hostile in [row["bot"] for row in json.loads(out)]  # JSON keeps it, escaped


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_grpc_own_log_carries_no_bot_bytes_to_the_terminal(backend):
    """gRPC's C core logs a peer's GOAWAY debug text raw: the arena keeps that log off
    (GRPC_VERBOSITY, unless the operator sets it), so the bot's escapes stay out; with the
    log on, the same bot does reach stderr — the probe is live."""
    bot = str(BOTS / "goaway.py")
    code, _, err = arena(
        "match", "--sandbox", backend, "--hands", "1", bot, "greedy", "random", "heuristic"
    )
    assert code == 3 and "PROBE: sent a GOAWAY" in err.replace("\n", ""), err
    env = {**_env(False), "GRPC_VERBOSITY": "DEBUG"}
    proc = run_arena(
        "match", "--sandbox", backend, "--hands", "1", bot, "greedy", "random", "heuristic",
        env=env, text=False,
    )  # fmt: skip
    assert b"\x1b]0;PWNED-TITLE" in proc.stderr  # the control: gRPC's log is the channel
