"""Prometheus /metrics: what a processed URL leaves behind, on `metrics_listen`.

The counters live in the process-wide registry, so earlier tests in the same run have
counted too: the test compares the scrapes before and after its one URL (a series not yet
exposed counts as 0), never the absolute values.
"""
from __future__ import annotations

import aiohttp
import grpc
from prometheus_client.parser import text_string_to_metric_families

from spiderduck.cli.nats_server import free_port
from support.service import Client, RunningService, service_settings, wait_until

# What one crawled page with one og:image adds, each exactly once.
EXPECTED = {
    ("spiderduck_scheduler_processed_total", (("resolution", "CRAWLED"), ("status", "OK"))): 1,
    ("spiderduck_fetcher_requests_total", (("http", "2xx"), ("purpose", "page"), ("status", "OK"))): 1,
    ("spiderduck_fetcher_requests_total", (("http", "2xx"), ("purpose", "image"), ("status", "OK"))): 1,
    ("spiderduck_scheduler_messages_total", (("outcome", "acked"),)): 1,
    ("spiderduck_scheduler_latency_seconds_count", ()): 1,
    ("spiderduck_scheduler_related_total", (("kind", "image"), ("outcome", "found"))): 1,
}


async def scrape(listen: str) -> dict[tuple[str, tuple], float]:
    """Every sample on http://listen/metrics: (name, sorted labels) -> value."""
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://{listen}/metrics") as response:
            assert response.status == 200
            text = await response.text()
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def deltas(before: dict, after: dict) -> dict:
    return {key: after.get(key, 0.0) - before.get(key, 0.0) for key in EXPECTED}


async def test_processed_urls_and_fetches_are_counted(tmp_path, nats_server, localweb):
    gif = (b"GIF87a\x02\x00\x01\x00\x80\x00\x00" + b"\x00" * 6 +                 # 2 x 1, as Pillow
           b",\x00\x00\x00\x00\x02\x00\x01\x00\x00\x08\x05\x00\x01\x00\x08\x08\x00;")  # writes it
    image = localweb.page("counted.test", "/i.gif", gif, content_type="image/gif")
    url = localweb.page("counted.test", "/", f'<title>x</title><meta property="og:image" content="{image}">')
    listen = f"127.0.0.1:{free_port()}"
    settings = service_settings(tmp_path, nats_server.url, metrics_listen=listen)
    async with RunningService(settings), Client(settings) as client:
        before = await scrape(listen)
        await client.submit_url(url)
        await client.events.wait_for(1, timeout=30)

        # The scheduler counts a URL (processed, latency, the message's ack) just after it
        # publishes the event, so the scrape may run ahead of the counters: wait for them.
        async def counted():
            seen = deltas(before, await scrape(listen))
            return all(seen[key] >= n for key, n in EXPECTED.items()) and seen
        try:
            seen = await wait_until(counted, 10, "the URL's counters on /metrics")
        except AssertionError:
            seen = deltas(before, await scrape(listen))
            raise AssertionError(f"not counted: {[k for k, n in EXPECTED.items() if seen[k] < n]}; "
                                 f"deltas {seen}") from None
    assert seen == EXPECTED, seen


def gauge(samples: dict, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


async def test_gauges_show_in_flight_urls_queues_domain_states_and_shards(tmp_path, nats_server, localweb):
    """While one slow domain's URLs wait for their turns: the scheduler's in-flight URLs, the
    domain's queue, the domains by state (one paused by an operator) and the shards held."""
    urls = [localweb.page("queued.test", f"/{n}", "<title>q</title>") for n in range(4)]
    listen = f"127.0.0.1:{free_port()}"
    settings = service_settings(tmp_path, nats_server.url, metrics_listen=listen,
                                **{"fetcher.default_rate": 0.05, "fetcher.shards": 8})
    async with RunningService(settings), Client(settings) as client:
        async def shards_held():
            samples = await scrape(listen)
            return gauge(samples, "spiderduck_fetcher_shards_held") == 8 and samples
        samples = await wait_until(shards_held, 20, "every shard held")
        assert gauge(samples, "spiderduck_fetcher_shards") == 8
        from spiderduck.v1 import fetcher_pb2, fetcher_pb2_grpc
        async with grpc.aio.insecure_channel(settings.fetcher.listen) as channel:
            await fetcher_pb2_grpc.FetcherAdminStub(channel).PauseDomain(
                fetcher_pb2.PauseDomainRequest(domain="paused.test", seconds=600), timeout=10)
        for url in urls:
            await client.submit_url(url)

        async def queued():
            samples = await scrape(listen)
            depth = gauge(samples, "spiderduck_fetcher_queue_depth", domain="queued.test") or 0
            # and every URL taken in (a loaded machine may scrape before the last is dispatched)
            return depth >= 2 and gauge(samples, "spiderduck_scheduler_in_flight") == len(urls) and samples
        samples = await wait_until(queued, 20, "queued.test's requests waiting, every URL in flight")
        depth = gauge(samples, "spiderduck_fetcher_queue_depth", domain="queued.test")
        assert gauge(samples, "spiderduck_fetcher_queued") >= depth
        assert gauge(samples, "spiderduck_scheduler_in_flight") == len(urls)   # none is done: 1 turn in 20 s
        assert gauge(samples, "spiderduck_fetcher_domains", state="paused") == 1
        assert gauge(samples, "spiderduck_fetcher_domains", state="active") >= 1
        assert gauge(samples, "spiderduck_fetcher_domains", state="halted") == 0
