"""No stampedes across schedulers: two scheduler processes, one fetcher and one metadata API on one
NATS. 50 URLs submitted 8 times each, interleaved, give exactly 400 events and exactly one origin
GET per URL: each URL is claimed by one scheduler (common.claims), and every other sighting, on
either scheduler, joins that crawl or finds its record.
"""
from __future__ import annotations

import asyncio
import json
import time

import yaml
from aiohttp import web

from common import bus
from fetcher.main import run_fetcher
from metadata_api.main import run_metadata_api
from support.cli import Proc
from support.service import Client, RunningService, service_settings, wait_until

URLS, ROUNDS, HOSTS = 50, 8, 10
ORIGIN_SECONDS = 0.3


def scheduler_config(tmp_path, settings) -> str:
    path = tmp_path / "scheduler.yaml"
    path.write_text(yaml.safe_dump({
        "data_dir": settings.data_dir,          # the SQLite metadata store and WARC files, shared
        "nats_url": settings.nats_url,
        "metadata_api": {"listen": settings.metadata_api.listen},
        "fetcher": {"listen": settings.fetcher.listen},
        "scheduler": {"ack_wait": 30, "retry_delay": 0.2, "claim_ttl": 10},
        "process": {"workers": 1},
    }))
    return str(path)


async def test_fifty_urls_submitted_eight_times_to_two_schedulers_are_fetched_once_each(
        tmp_path, nats_server, localweb):
    async def page(request):
        await asyncio.sleep(ORIGIN_SECONDS)
        return web.Response(text=f"<title>{request.path}</title>", content_type="text/html")
    urls = [localweb.route(f"site{n % HOSTS}.test", f"/{n}", page) for n in range(URLS)]
    settings = service_settings(tmp_path, nats_server.url, **{"fetcher.default_rate": 100.0})
    config = scheduler_config(tmp_path, settings)
    async with RunningService(settings, roles=(run_fetcher, run_metadata_api)), Client(settings) as client:
        claims = await bus.claim_bucket(client.js, 10)
        owners: set[bytes] = set()
        watcher = await claims.watchall()

        async def follow():
            async for entry in watcher:
                if entry is not None and entry.operation not in ("DEL", "PURGE"):
                    owners.add(entry.value)
        following = asyncio.create_task(follow())
        schedulers = [Proc(tmp_path, "scheduler", "--config", config) for _ in range(2)]
        try:
            for proc in schedulers:
                await proc.wait_log("scheduler pipeline")
            started = time.monotonic()
            for _ in range(ROUNDS):
                for url in urls:
                    await client.publish(json.dumps({"url": url}))
            events = await client.events.wait_for(URLS * ROUNDS, timeout=120)
            took = time.monotonic() - started

            async def all_acked():
                info = await client.js.consumer_info("SPIDERDUCK_URLS", "scheduler")
                return info.num_pending == 0 and info.num_ack_pending == 0
            await wait_until(all_acked, 30, "every submission acked")
            stream = await client.js.stream_info("SPIDERDUCK_EVENTS")
        finally:
            for proc in schedulers:
                await proc.stop()
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
            await watcher.stop()
    assert stream.state.messages == URLS * ROUNDS            # exactly one event per submission
    gets = {url: len(localweb.hits_for(f"site{n % HOSTS}.test", f"/{n}")) for n, url in enumerate(urls)}
    assert set(gets.values()) == {1}, {u: c for u, c in gets.items() if c != 1}
    per_url = {url: [e["resolution"] for e in events if e["url"] == url] for url in urls}
    assert all(len(r) == ROUNDS and r.count("CRAWLED") == 1 for r in per_url.values()), per_url
    assert {r for rs in per_url.values() for r in rs} <= {"CRAWLED", "JOINED", "FRESH"}
    assert len(owners) == 2, owners                           # both schedulers claimed URLs
    joined = sum(r.count("JOINED") for r in per_url.values())
    print(f"\nstampede: {URLS} URLs x {ROUNDS} = {len(events)} events, origin GETs per URL "
          f"{sorted(set(gets.values()))}, {joined} JOINED, {URLS * ROUNDS - URLS - joined} FRESH, in {took:.1f}s")
