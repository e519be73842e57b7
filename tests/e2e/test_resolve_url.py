"""MetadataService.ResolveUrl over real gRPC, NATS, scheduler, fetcher and origins: fresh records
at once, unseen URLs after their crawl, DEADLINE_EXCEEDED with the crawl going on, STALE at once
while the origin is slow, refreshes bounded by min_refresh_interval, and no NATS refused."""
from __future__ import annotations

import asyncio
import statistics
import time

import grpc
import pytest
from aiohttp import web
from google.protobuf.duration_pb2 import Duration

from spiderduck.metadata_api.main import run_metadata_api
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc
from support.service import Client, RunningService, service_settings, wait_until


async def resolve(client: Client, url: str, *, timeout: float = 30, **fields) -> tuple[metadata_pb2.UrlMetadataResult, str]:
    """(result, resolution from the trailing metadata)."""
    stub = metadata_pb2_grpc.MetadataServiceStub(client.channel)
    call = stub.ResolveUrl(metadata_pb2.ResolveUrlRequest(url=url, **fields), timeout=timeout)
    result = await call
    trailing = dict(await call.trailing_metadata())
    return result, trailing.get("spiderduck-resolution", "")


async def timed(client: Client, url: str, **fields) -> tuple[float, str]:
    started = time.perf_counter()
    _, resolution = await resolve(client, url, **fields)
    return time.perf_counter() - started, resolution


async def test_fresh_unseen_and_refreshed(tmp_path, nats_server, localweb):
    page = localweb.page("news.test", "/a", "<title>A</title>")
    unseen = localweb.page("news.test", "/b", "<title>B</title>")
    settings = service_settings(tmp_path, nats_server.url, min_refresh_interval="1h")
    async with RunningService(settings), Client(settings) as client:
        await client.submit_url(page)
        await client.events.wait_for(1, timeout=30)
        times = [await timed(client, page) for _ in range(20)]
        result, resolution = await resolve(client, unseen)
        refreshed, refresh_resolution = await resolve(client, page, refresh=True)
        young, young_resolution = await resolve(client, page, max_age=Duration(seconds=3600))
        _, endless_resolution = await resolve(client, page, max_age=Duration(seconds=10**14))   # no overflow
    fresh = sorted(t for t, _ in times)
    assert {r for _, r in times} == {"FRESH"} and fresh[0] < 0.050
    assert len(localweb.hits_for("news.test", "/a")) == 1          # answered with no fetch
    assert (result.found, result.url, result.metadata.url, result.metadata.title) == (True, unseen, unseen, "B")
    assert resolution == "CRAWLED" and len(localweb.hits_for("news.test", "/b")) == 1
    # A refresh within min_refresh_interval gets the record, FRESH, with no fetch.
    assert (refresh_resolution, refreshed.metadata.title) == ("FRESH", "A")
    assert young_resolution == endless_resolution == "FRESH" and len(localweb.hits_for("news.test", "/a")) == 1
    assert [e["url"] for e in client.events.items] == [page]       # answered to the caller, not announced
    print(f"\nResolveUrl FRESH: best {fresh[0] * 1000:.1f} ms, p50 {statistics.median(fresh) * 1000:.1f} ms "
          f"of {len(fresh)} calls")


async def test_past_its_deadline_the_crawl_goes_on(tmp_path, nats_server, localweb):
    async def slow(request):
        await asyncio.sleep(3)
        return web.Response(text="<title>Slow</title>", content_type="text/html")
    page = localweb.route("slow.test", "/", slow)
    settings = service_settings(tmp_path, nats_server.url)
    async with RunningService(settings), Client(settings) as client:
        started = time.monotonic()
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await resolve(client, page, timeout=0.5)
        assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert time.monotonic() - started < 2

        async def stored():
            (record,) = await client.get([page])
            return record
        record = await wait_until(stored, 30, "the record to appear")
    assert record["title"] == "Slow" and len(localweb.hits_for("slow.test", "/")) == 1


async def test_an_expired_record_is_answered_stale_at_once(tmp_path, nats_server, localweb):
    slow = asyncio.Event()

    async def page(request):
        if slow.is_set():
            await asyncio.sleep(3)
        return web.Response(text="<title>Page</title>", content_type="text/html")
    url = localweb.route("stale.test", "/", page)
    settings = service_settings(tmp_path, nats_server.url, recrawl_after="1s", serve_stale_for="1h")
    async with RunningService(settings), Client(settings) as client:
        first, _ = await resolve(client, url)
        expires = first.metadata.expires_at.ToDatetime().timestamp()
        await wait_until(lambda: _past(expires), 5, "the record to expire")
        slow.set()
        times = [await timed(client, url) for _ in range(20)]
        await client.events.wait_for(1, timeout=30)            # the one refresh, announced
    stale = sorted(t for t, _ in times)
    assert {r for _, r in times} == {"STALE"} and stale[-1] < 1.0
    assert client.events.items[0]["source"] == "spiderduck:stale-refresh"
    assert len(localweb.hits_for("stale.test", "/")) == 2
    print(f"\nResolveUrl STALE: best {stale[0] * 1000:.1f} ms, p50 {statistics.median(stale) * 1000:.1f} ms "
          f"of {len(stale)} calls, while the origin takes 3 s")


async def _past(at: float) -> bool:
    return time.time() >= at


async def test_bad_requests_and_no_nats_are_refused(tmp_path, nats_server):
    settings = service_settings(tmp_path, nats_server.url)
    async with RunningService(settings, roles=(run_metadata_api,)), Client(settings) as client:
        for fields, code in (({"url": "mailto:x"}, grpc.StatusCode.INVALID_ARGUMENT),
                             ({"url": "http://a.test/", "max_age": Duration(seconds=-1)},
                              grpc.StatusCode.INVALID_ARGUMENT),
                             ({"url": "http://a.test/" + "x" * 9000}, grpc.StatusCode.INVALID_ARGUMENT)):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await resolve(client, timeout=5, **fields)
            assert info.value.code() == code
        garbage = client.channel.unary_unary("/spiderduck.v1.MetadataService/ResolveUrl")
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await garbage(b"\xff\xff\xff", timeout=5)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    alone = service_settings(tmp_path / "alone", "")                # no NATS
    async with RunningService(alone, roles=(run_metadata_api,)):
        async with grpc.aio.insecure_channel(alone.metadata_api.listen) as channel:
            stub = metadata_pb2_grpc.MetadataServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await stub.ResolveUrl(metadata_pb2.ResolveUrlRequest(url="http://a.test/"), timeout=5)
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION and "nats_url" in info.value.details()
