"""The Play page's hints (``arena.web.hints``): a sample bot's move computed in a pool of
processes of its own, never in the web server's interpreter (the expert's search takes
100 ms and more of CPU); a bounded queue and a timeout per hint."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import httpx
import pytest
from test_tables import Page, open_table, play_app

from arena.web.hints import HintBusy, HintPool


@pytest.mark.serial  # the expert's hint within HINT_SECONDS, from a fresh process
def test_a_hint_is_computed_outside_the_server_process(tmp_path, live_server, monkeypatch):
    """Bot code loaded in this (the server's) process for a hint fails the hint; the
    expert's hint still comes, from the pool (before: loaded and run in a thread here)."""

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("a hint bot was loaded in the server's process")

    monkeypatch.setattr("arena.web.tables.load_bot_class", refuse, raising=False)
    url = live_server(play_app(tmp_path))
    client = httpx.Client(base_url=url)
    page = Page(url, open_table(client, seat="0"))
    page.until("turn")
    hint = page.ask({"type": "hint", "bot": "expert", "id": 3})
    assert hint["type"] == "hint" and hint["id"] == 3 and hint["why"] is None, hint
    assert hint["cards"] or hint["label"] == "pass"
    page.close()


BOTS = {
    "pid": "import os\nfrom bigtwo import Bot\n\nclass B(Bot):\n"
    "    def act(self, observation):\n        return os.getpid()\n",
    "spin": "from bigtwo import Bot\n\nclass B(Bot):\n"
    "    def act(self, observation):\n        while True:\n            pass\n",
}


@pytest.fixture
def bots(tmp_path: Path) -> dict[str, str]:
    out = {}
    for name, code in BOTS.items():
        path = tmp_path / name / "bot.py"
        path.parent.mkdir()
        path.write_text(code)
        out[name] = str(path)
    return out


@pytest.mark.serial  # the next hint, from a fresh process, within 3 s
async def test_a_stuck_hint_times_out_and_the_next_is_answered(bots):
    pool = HintPool(workers=1, queue=0, timeout=3.0)
    try:
        with pytest.raises(TimeoutError):
            await pool.ask(bots["spin"], None)
        pid = await pool.ask(bots["pid"], None)  # a fresh process: the stuck one was killed
        assert isinstance(pid, int) and pid != os.getpid()
    finally:
        pool.close()


async def test_hints_beyond_the_queue_are_refused_at_once(bots):
    pool = HintPool(workers=1, queue=1, timeout=5.0)
    try:
        waiting = [asyncio.create_task(pool.ask(bots["spin"], None)) for _ in range(2)]
        await asyncio.sleep(0.1)
        with pytest.raises(HintBusy):
            await pool.ask(bots["pid"], None)
        for task in waiting:
            with pytest.raises(TimeoutError):
                await task
    finally:
        pool.close()
