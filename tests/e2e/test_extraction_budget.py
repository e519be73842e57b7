"""A page that takes the parser forever: recorded as TIMEOUT within the budget, and every other
URL is processed meanwhile (extraction runs in worker processes, never on the event loop)."""
from __future__ import annotations

from support.service import Client, RunningService, service_settings

# lexbor is quadratic in nesting depth: tens of seconds for this page, on any machine. Its head
# never ends (no </head> or <body), so the head-alone retry has nothing to read either (that retry
# is tests/e2e/test_partial_and_pathological_pages.py's).
NESTED = b"<html><title>deep</title>" + b"<div>" * 100_000 + b"</html>"


async def test_a_page_past_the_budget_is_a_timeout_and_others_go_on(tmp_path, nats_server, localweb):
    deep = localweb.page("deep.test", "/", NESTED)
    others = [localweb.page(f"ok{n}.test", "/", f"<title>Page {n}</title>") for n in range(20)]
    settings = service_settings(tmp_path, nats_server.url, **{
        "process.workers": 2, "process.extract_timeout": "3s"})
    async with RunningService(settings), Client(settings) as client:
        await client.submit_url(deep)
        for url in others:
            await client.submit_url(url)
        events = await client.events.wait_for(len(others) + 1, timeout=60)
        order = [e["url"] for e in events]
        [deep_rec, *other_recs] = await client.get([deep, *others])

    # Submitted first, answered last: the 20 pages did not wait for it.
    assert order[-1] == deep and set(order[:-1]) == set(others)
    assert deep_rec["status"] == "TIMEOUT"
    assert "process.extract_timeout (3s)" in deep_rec["error"]
    assert deep_rec["http_status"] == 200 and deep_rec["content_type"] == "text/html"
    assert deep_rec["content_ref"]                     # the raw page is still logged
    assert [r["title"] for r in other_recs] == [f"Page {n}" for n in range(20)]
