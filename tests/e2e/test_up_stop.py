"""Stopping `spiderduck up` (its roles in this process): URLs in flight finish their fetches
through the in-process fetcher, are recorded as they are, announced and acked."""
from __future__ import annotations

import asyncio

from aiohttp import web

from spiderduck.cli.nats_server import port_open
from spiderduck.cli.roles import run_up
from support.service import Client, service_settings, wait_port


async def test_urls_in_flight_at_stop_finish_their_fetches(tmp_path, nats_server, localweb):
    arrived = asyncio.Event()
    release = asyncio.Event()

    async def slow(request):
        arrived.set()
        await release.wait()
        return web.Response(text="<title>Slow but fine</title>", content_type="text/html")

    urls = [localweb.route(f"slow{n}.test", "/", slow) for n in range(5)]
    settings = service_settings(tmp_path, nats_server.url)
    stop = asyncio.Event()
    up = asyncio.create_task(run_up(settings, stop))
    try:
        await wait_port(settings.metadata_api.listen)
        async with Client(settings) as client:
            for url in urls:
                await client.submit_url(url)
            await asyncio.wait_for(arrived.wait(), 30)      # fetches are at the origin now
            stop.set()                                       # Ctrl-C, as it were
            # The origin answers once the fetcher has gone (as it would have before the fix: its
            # port closes, then its HTTP session), or after 3 s while it stays, as it should.
            host, port = settings.fetcher.listen.rsplit(":", 1)
            for _ in range(150):
                if not port_open(host, int(port)):
                    break
                await asyncio.sleep(0.02)
            release.set()
            await asyncio.wait_for(asyncio.shield(up), 60)
            events = await client.events.wait_for(len(urls), timeout=5)
    finally:
        stop.set()
        await asyncio.wait_for(up, 60)
    statuses = {e["url"]: e["status"] for e in events}
    # Those that had reached the origin were finished and recorded OK, never TIMEOUT; any not
    # yet started went back to the stream (no event for them here).
    assert statuses and set(statuses.values()) == {"OK"}, statuses
