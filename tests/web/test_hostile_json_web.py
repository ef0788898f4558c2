"""Deeply nested JSON sent to the Play page's WebSocket is refused with a reason and the
table plays on (``json.loads`` raised RecursionError, which ended the page's connection),
and an API body of it is a 4xx with its reason, over a real server on loopback."""

from __future__ import annotations

import httpx
from test_tables import REPLIES, Page, open_table, play_app


def test_a_deeply_nested_request_is_refused_and_the_table_plays_on(tmp_path, live_server):
    app = play_app(tmp_path)
    url = live_server(app)
    client = httpx.Client(base_url=url)
    page = Page(url, open_table(client, seat="0"))
    turn = page.until("turn")
    for hostile in ("[" * 1500, '{"a":' * 300 + "1" + "}" * 300):
        page.ws.send(hostile)
        while True:
            reply = page.recv()
            if reply["type"] in REPLIES:
                break
        assert reply == {"type": "error", "why": "not JSON"}, reply
    # the same connection still answers and plays
    assert page.ask({"type": "pass", "turn_id": turn["turn_id"]})["type"] in ("sent", "refused")
    page.close()


def test_a_deeply_nested_api_body_is_a_4xx(tmp_path, live_server):
    app = play_app(tmp_path)
    url = live_server(app)
    spec = httpx.get(url + "/openapi.json").json()
    for path, ops in spec["paths"].items():
        if "post" not in ops or "{" in path:
            continue
        r = httpx.post(
            url + path, content="[" * 100_000, headers={"content-type": "application/json"}
        )
        assert 400 <= r.status_code < 500, (path, r.status_code, r.text[:300])
