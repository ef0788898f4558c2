"""Late answers are not free (issue 8, class 7): an answer to a turn that timed out is
expected (once) and ignored; any other answer out of turn — the same turn twice, a turn
never asked, a future one — is a protocol fault, and round trips are measured only for
answers to the turn asked."""

import json
import statistics
import time

from arena.bots import resolve
from arena.match import run_match
from arena.referee.time_control import TimeControl
from bigtwo import RuleSet

from .conftest import leftovers
from .test_hostile import BOTS

RULES = RuleSet.preset("hk").replace(match_end="hands", match_end_value=2)


async def test_a_flood_of_late_answers_is_faulted_and_not_timed(backend, tmp_path):
    bad = BOTS / "late_flooder.py"
    specs = [resolve(str(bad))] + [resolve(str(BOTS / "good.py"))] * 3
    record = tmp_path / "m.jsonl"
    control = TimeControl(move_ms=1500, bank_ms=1000, startup_ms=30000, max_strikes=3)
    result = await run_match(specs, RULES, 3, control, backend, record)
    assert result.match_over
    for seat in result.seats[1:]:
        assert seat.faults == () and not seat.forfeit, seat
    seat = result.seats[0]
    assert [f.kind for f in seat.faults] == ["protocol"] * 3 and seat.forfeit
    assert all("late action for turn" in f.detail for f in seat.faults), seat.faults
    # one round trip per move a bot chose (none for the 30 stale answers it sent)
    events = [json.loads(line) for line in record.read_text().splitlines()]
    by_bots = [e["ms"] for e in events if e["type"] == "turn" and not e["by_referee"]]
    trip = result.turn_round_trip
    assert trip["n"] == len(by_bots)
    assert trip["median_ms"] <= 2 * statistics.median(by_bots) + 1
    time.sleep(0.3)
    assert leftovers(result.match_id, bad.name) == []
