"""The fetcher against a local web: robots once per host, bounds on size and time, the guard on every hop."""
from __future__ import annotations

import asyncio

import grpc
import pytest
from aiohttp import web

from common import config
from common.grpc_server import GrpcServer
from common.nats_server import free_port
from common.status import Status
from fetcher import server
from fetcher.fetcher import Fetcher
from fetcher.ownership import AllShards
from spiderduck.v1 import fetcher_pb2, fetcher_pb2_grpc


def settings(**kw):
    values = {"fetcher.allowed_networks": ["127.0.0.0/8"],
              "fetcher.dns_overrides": {"*.test": "127.0.0.1", "inside.test": "10.9.8.7"},
              "fetcher.default_rate": 100.0}
    values.update(kw)
    return config.load(env={}, overrides=values).fetcher


async def test_robots_is_fetched_once_per_host_and_obeyed(localweb):
    localweb.robots("r.test", "User-agent: *\nDisallow: /no\n\nUser-agent: SpiderDuck\nDisallow: /private\n")
    for path in ("/a", "/b", "/no", "/private"):
        localweb.page("r.test", path, "<title>x</title>")
    async with Fetcher(settings(), ownership=AllShards()) as f:
        results = await asyncio.gather(*(f.fetch(localweb.url("r.test", p))
                                         for p in ("/a", "/b", "/no", "/private", "/a")))
    statuses = [r.status for r in results]
    # Our own group (SpiderDuck) applies, not "*": /no is allowed for us, /private is not.
    assert statuses == [Status.OK, Status.OK, Status.OK, Status.ROBOTS_DISALLOWED, Status.OK]
    assert len(localweb.hits_for("r.test", "/robots.txt")) == 1
    assert localweb.hits_for("r.test", "/private") == []


async def test_unreachable_or_failing_robots_disallows(localweb):
    localweb.page("err.test", "/robots.txt", "oops", status=503)
    localweb.page("err.test", "/page", "<title>x</title>")
    async with Fetcher(settings(), ownership=AllShards()) as f:
        result = await f.fetch(localweb.url("err.test", "/page"))
    assert result.status is Status.ROBOTS_DISALLOWED
    assert localweb.hits_for("err.test", "/page") == []


async def test_body_is_capped_and_redirects_are_not_followed(localweb):
    localweb.page("big.test", "/big", b"x" * 50_000)
    localweb.redirect("big.test", "/r", "http://elsewhere.test/")
    async with Fetcher(settings(**{"fetcher.max_body_bytes": 1000}), ownership=AllShards()) as f:
        big = await f.fetch(localweb.url("big.test", "/big"))
        hop = await f.fetch(localweb.url("big.test", "/r"))
    assert big.status is Status.OK and len(big.body) == 1000 and big.truncated
    assert hop.http_status == 301 and hop.header("location") == "http://elsewhere.test/"
    assert localweb.hits_for("elsewhere.test") == []


async def test_a_slow_origin_times_out(localweb):
    async def slow(request):
        await asyncio.sleep(30)
        return web.Response(text="late")
    localweb.route("slow.test", "/", slow)
    async with Fetcher(settings(**{"fetcher.total_timeout": 0.5}), ownership=AllShards()) as f:
        result = await f.fetch(localweb.url("slow.test", "/"))
    assert result.status is Status.TIMEOUT


async def test_private_addresses_are_refused_without_allowed_networks(localweb):
    localweb.page("loop.test", "/", "<title>x</title>")
    async with Fetcher(settings(**{"fetcher.allowed_networks": []}), ownership=AllShards()) as f:
        by_name = await f.fetch(localweb.url("loop.test", "/"))
        by_ip = await f.fetch(f"http://127.0.0.1:{localweb.port}/")
        private = await f.fetch("http://inside.test/")
    assert by_name.status is by_ip.status is private.status is Status.BLOCKED_ADDRESS
    assert localweb.hits == []


async def test_unknown_names_are_dns_errors():
    async with Fetcher(settings(**{"fetcher.dns_overrides": {}}), ownership=AllShards()) as f:
        result = await f.fetch("http://no-such-host.invalid/")
    assert result.status is Status.DNS_ERROR


async def test_grpc_fetch_and_a_full_queue(localweb):
    gate = asyncio.Event()

    async def held(request):
        await gate.wait()
        return web.Response(text="<title>ok</title>", content_type="text/html")
    localweb.route("q.test", "/", held)
    s = settings(**{"fetcher.queue_size": 1, "fetcher.default_rate": 1.0,
                    "fetcher.listen": f"127.0.0.1:{free_port()}"})
    async with Fetcher(s, ownership=AllShards()) as f:
        grpc_server = GrpcServer(s.listen)
        server.register(grpc_server, f)
        async with grpc_server, grpc.aio.insecure_channel(s.listen) as channel:
            stub = fetcher_pb2_grpc.FetcherServiceStub(channel)
            url = localweb.url("q.test", "/")
            first = asyncio.ensure_future(stub.Fetch(fetcher_pb2.FetchRequest(url=url)))
            while not localweb.hits_for("q.test", "/"):
                await asyncio.sleep(0.01)               # robots done, first request at the origin
            second = asyncio.ensure_future(stub.Fetch(fetcher_pb2.FetchRequest(url=url)))
            while f.politeness.slot("q.test").waiting < 1:
                await asyncio.sleep(0.01)               # second waits for its turn (rate 1/s)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.Fetch(fetcher_pb2.FetchRequest(url=url))
            assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
            gate.set()
            responses = await asyncio.gather(first, second)
    assert [r.http_status for r in responses] == [200, 200]
    assert responses[0].status == fetcher_pb2.FetchResponse().status + 1   # OK
    assert b"ok" in responses[0].body
