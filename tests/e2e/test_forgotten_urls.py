"""Forgotten URLs through the running service (issue 39): a real nats-server, the roles as `up`
runs them, loopback sites, and the denylist written as MetadataService.Forget writes it
(Denylist.add on a list opened on the same server). A forgotten URL gets one FORGOTTEN event, its
origin gets no request, and nothing of it is stored."""
from __future__ import annotations

import asyncio

from spiderduck.bus.denylist import Denylist

from support.localweb import Gate
from support.service import Client, RunningService, service_settings, wait_until
from support.warc import warc_records

PAGE = "<title>Someone's page</title>"


async def forgetting(client: Client) -> Denylist:
    return await Denylist.open(client.js)


def status_of(event: dict) -> str:
    return event["status"]


def assert_forgotten_event(client: Client, url: str) -> None:
    (event,) = client.events.for_url(url)
    assert status_of(event) == "FORGOTTEN" and event["resolution"] == "REJECTED"
    # Nothing of the page: the event's record holds the URL asked for and the status alone.
    assert set(event["metadata"]) == {"url", "status"}, event["metadata"]


async def test_forgotten_urls_and_domains_are_never_requested_nor_stored(tmp_path, nats_server, localweb):
    gone = localweb.page("gone.test", "/page", PAGE)
    short = localweb.redirect("short.test", "/s", gone)
    domain_page = localweb.page("www.hidden.test", "/any", PAGE)
    kept = localweb.page("kept.test", "/", "<title>Kept</title>")
    settings = service_settings(tmp_path, nats_server.url)
    async with Client(settings) as client:
        # Forgotten before the scheduler starts: it reads the list kept in NATS when it opens.
        denylist = await forgetting(client)
        await denylist.add([gone], reason="GDPR art. 17", by="test")
        await denylist.add([], domain="hidden.test", reason="takedown", by="test")
        await denylist.close()
        async with RunningService(settings):
            for url in (gone, short, domain_page, kept):
                await client.submit_url(url)
            await client.events.wait_for(4, timeout=60)
            records = await client.get([gone, short, domain_page, kept])

    for url in (gone, short, domain_page):
        assert_forgotten_event(client, url)
    assert localweb.hits_for("gone.test") == []             # not even robots.txt
    assert localweb.hits_for("www.hidden.test") == []
    assert [h.path for h in localweb.hits_for("short.test") if h.path != "/robots.txt"] == ["/s"]
    # No record of the forgotten page, nor of the shortener's link to it.
    assert records[:3] == [None, None, None]
    assert records[3]["status"] == "OK" and status_of(client.events.for_url(kept)[0]) == "OK"
    assert not {gone, short, domain_page} & logged_urls(tmp_path)
    assert kept in logged_urls(tmp_path)


async def test_a_url_forgotten_while_its_site_answers_slowly_ends_forgotten_unstored(
        tmp_path, nats_server, localweb):
    slow = Gate(PAGE)
    url = localweb.route("slow.test", "/article", slow)
    probe = localweb.page("probe.test", "/", "<title>probe</title>")
    settings = service_settings(tmp_path, nats_server.url)
    async with RunningService(settings), Client(settings) as client:
        denylist = await forgetting(client)
        try:
            await client.submit_url(url)
            await asyncio.wait_for(slow.asked.wait(), 30)     # fetched: the answer is held
            await denylist.add([url], reason="taken down", by="test")
            await denylist.add([probe], reason="taken down", by="test")

            async def scheduler_knows() -> bool:
                """The scheduler's list has the probe, added after the URL: a submission of it
                is FORGOTTEN (the list is watched in order, so the URL is on it too)."""
                seen = len(client.events.for_url(probe))
                await client.submit_url(probe)
                await wait_until(lambda: _more(client, probe, seen), 30, "the probe's event")
                return status_of(client.events.for_url(probe)[-1]) == "FORGOTTEN"
            await wait_until(scheduler_knows, 30, "the scheduler to see the forgotten URLs")
            slow.opened.set()                                   # the origin answers now
            await wait_until(lambda: _more(client, url, 0), 30, "the slow URL's event")
            assert_forgotten_event(client, url)
            assert await client.get([url]) == [None]
        finally:
            slow.opened.set()
            await denylist.close()
    assert len(localweb.hits_for("slow.test", "/article")) == 1    # the one fetch, never again
    assert localweb.hits_for("slow.test", "/favicon.ico") == []     # no related fetch of it
    assert url not in logged_urls(tmp_path)


async def _more(client: Client, url: str, seen: int) -> bool:
    return len(client.events.for_url(url)) > seen


def logged_urls(tmp_path) -> set[str]:
    """The WARC-Target-URI of every record in the content log."""
    return {headers.get("WARC-Target-URI", "") for headers, _ in warc_records(tmp_path / "var" / "content")}
