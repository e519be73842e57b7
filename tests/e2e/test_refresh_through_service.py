"""Refresh hops through the whole service over real sockets (issue 41): a link to a "Redirecting…"
page whose meta refresh leads through a 301 and a Refresh header to an article answers with the
article's record, and `get` shows each hop's kind (a 3xx's, `http`, left out of the JSON)."""
from __future__ import annotations

from support.service import Client, RunningService, service_settings

ARTICLE = ('<!DOCTYPE html><html><head><title>Harbour wall</title>'
           '<meta property="og:title" content="Harbour wall to be rebuilt by spring"></head>'
           '<body><p>The harbour wall will be rebuilt by spring.</p></body></html>')


async def test_refresh_hops_through_the_service(tmp_path, nats_server, localweb):
    web = localweb
    article = web.page("news.test", "/2026/harbour", ARTICLE)
    web.page("news.test", "/r", "", headers={"Refresh": f"0; url={article}"})
    web.redirect("lnk.test", "/moved", web.url("news.test", "/r"))
    link = web.page("lnk.test", "/x", '<!DOCTYPE html><html><head><title>Redirecting…</title>'
                    '<meta http-equiv="refresh" content="0;URL=\'/moved\'"></head><body>Redirecting…</body></html>')

    settings = service_settings(tmp_path, nats_server.url)
    async with RunningService(settings), Client(settings) as client:
        await client.submit_url(link)
        await client.events.wait_for(1, timeout=60)
        (record,) = await client.get([link])

    assert record["status"] == "OK" and record["final_url"] == article, record
    assert record["title"] == "Harbour wall to be rebuilt by spring"
    assert record["redirects"] == [
        {"url": link, "http_status": 200, "kind": "meta-refresh"},
        {"url": web.url("lnk.test", "/moved"), "http_status": 301},
        {"url": web.url("news.test", "/r"), "http_status": 200, "kind": "refresh-header"}]
