"""A bot that prints without end, on both sandbox backends: what the arena keeps of its
output is capped (the disk is safe), the match finishes in its normal time, and nobody
else's play suffers."""

import time

from arena.bots import resolve
from arena.match import run_match
from arena.record import replay
from arena.referee.time_control import TimeControl
from arena.sandbox.output import LOG_CAP, TAIL_KEEP
from bigtwo import RuleSet

from .test_hostile import BOTS

RULES = RuleSet.preset("hk").replace(match_end="hands", match_end_value=3)


async def test_a_bot_printing_without_end_is_capped_and_slows_nothing(backend, tmp_path):
    specs = [resolve(str(BOTS / "printer_flood.py"))] + [resolve(str(BOTS / "good.py"))] * 3
    control = TimeControl(move_ms=1500, bank_ms=1000, startup_ms=30000)
    record = tmp_path / "match.jsonl"
    logs = tmp_path / "logs"
    start = time.monotonic()
    result = await run_match(specs, RULES, 3, control, backend, record, log_dir=logs)
    elapsed = time.monotonic() - start
    assert result.match_over and len(result.hands) == 3
    assert elapsed < 60, elapsed  # three hands; a blocked pipe or a busy referee would stall
    for seat in result.seats:  # the flooder plays well too: its pipes never block it
        assert seat.faults == (), seat
    assert replay(record).complete
    flooded = logs / "seat0-printer_flood.log"
    assert result.seats[0].log == str(flooded.resolve())
    data = flooded.read_bytes()
    assert len(data) <= LOG_CAP + TAIL_KEEP + 1024, len(data)
    assert b"[log truncated at " in data  # it wrote far more than that
    assert b"FLOOD-" in data
    for n in (1, 2, 3):  # the quiet seats' logs stay empty
        assert (logs / f"seat{n}-good_{n}.log").read_bytes() == b""
