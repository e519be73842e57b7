"""No stampedes across schedulers: two scheduler processes, one fetcher and one metadata API on one
NATS. 50 URLs submitted 8 times each, interleaved, while ResolveUrl is called for each, give
exactly 400 events (ResolveUrl is answered to its caller, not announced) and exactly one origin
GET per URL: each URL is claimed by one scheduler (spiderduck.bus.claims), and every other sighting, on
either scheduler, joins that crawl or finds its record.
"""
from __future__ import annotations

import asyncio
import json
import time

import yaml
from aiohttp import web

from spiderduck.bus import streams as bus
from spiderduck.fetcher.main import run_fetcher
from spiderduck.metadata_api.main import run_metadata_api
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc
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
            stub = metadata_pb2_grpc.MetadataServiceStub(client.channel)

            async def resolve(url):
                call = stub.ResolveUrl(metadata_pb2.ResolveUrlRequest(url=url), timeout=60)
                return await call, dict(await call.trailing_metadata())["spiderduck-resolution"]
            resolving = [asyncio.ensure_future(resolve(url)) for url in urls]   # while its submissions go in
            for _ in range(ROUNDS):
                for url in urls:
                    await client.publish(json.dumps({"url": url}))
            resolved = await asyncio.gather(*resolving)
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
    assert [(r.found, r.metadata.title) for r, _ in resolved] == [(True, f"/{n}") for n in range(URLS)]
    gets = {url: len(localweb.hits_for(f"site{n % HOSTS}.test", f"/{n}")) for n, url in enumerate(urls)}
    assert set(gets.values()) == {1}, {u: c for u, c in gets.items() if c != 1}
    # Per URL one crawl, by a submission or by the ResolveUrl call; every other sighting joined or found it.
    per_url = {url: [e["resolution"] for e in events if e["url"] == url] + [resolution]
               for url, (_, resolution) in zip(urls, resolved)}
    assert all(len(r) == ROUNDS + 1 and r.count("CRAWLED") == 1 for r in per_url.values()), per_url
    assert {r for rs in per_url.values() for r in rs} <= {"CRAWLED", "JOINED", "FRESH"}
    assert len(owners) == 2, owners                           # both schedulers claimed URLs
    joined = sum(r.count("JOINED") for r in per_url.values())
    by_resolve = sum(r == "CRAWLED" for _, r in resolved)
    print(f"\nstampede: {URLS} URLs x {ROUNDS} submissions + {URLS} ResolveUrl: {len(events)} events, origin GETs "
          f"per URL {sorted(set(gets.values()))}, crawled by ResolveUrl {by_resolve}, {joined} JOINED, "
          f"{URLS * (ROUNDS + 1) - URLS - joined} FRESH, in {took:.1f}s")
