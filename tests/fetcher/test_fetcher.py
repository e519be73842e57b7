"""The fetcher against a local web: robots once per host, bounds on size and time, the guard on every hop."""
from __future__ import annotations

import asyncio

import grpc
import pytest
from aiohttp import web

from spiderduck.cli.nats_server import free_port
from spiderduck.core import config
from spiderduck.core.freshness import Validators
from spiderduck.core.status import Status
from spiderduck.fetcher import server
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.ownership import AllShards
from spiderduck.rpc.server import GrpcServer
from spiderduck.v1 import fetcher_pb2, fetcher_pb2_grpc
from support.fetcher_grpc import served


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


# --- conditional re-fetch: a record's validators as If-None-Match / If-Modified-Since ---

ETAG = '"v1-abc"'
LAST_MODIFIED = "Sun, 06 Nov 1994 08:49:37 GMT"
CONDITIONAL = ("if-none-match", "if-modified-since")


class ConditionalOrigin:
    """One site on the local web that records the headers of every request (robots.txt too)
    and answers 304 when If-None-Match names its ETag."""

    def __init__(self, localweb, host: str):
        self.host = host
        self.robots: list[dict[str, str]] = []
        self.page: list[dict[str, str]] = []

        async def robots(request):
            self.robots.append({k.lower(): v for k, v in request.headers.items()})
            return web.Response(text="User-agent: *\nAllow: /\n", content_type="text/plain")

        async def page(request):
            self.page.append({k.lower(): v for k, v in request.headers.items()})
            if request.headers.get("If-None-Match") == ETAG:
                return web.Response(status=304, headers={"ETag": ETAG, "Cache-Control": "max-age=60"})
            return web.Response(text="<title>v1</title>", content_type="text/html",
                                headers={"ETag": ETAG, "Last-Modified": LAST_MODIFIED})
        localweb.route(host, "/robots.txt", robots)
        self.url = localweb.route(host, "/page", page)


async def test_validators_make_the_page_request_conditional_not_robots(localweb):
    origin = ConditionalOrigin(localweb, "cond.test")
    async with Fetcher(settings(), ownership=AllShards()) as f:
        result = await f.fetch(origin.url, validators=Validators(ETAG, LAST_MODIFIED))
    assert (result.status, result.http_status, result.body) == (Status.OK, 304, b"")
    assert result.header("etag") == ETAG and result.header("cache-control") == "max-age=60"
    [sent] = origin.page
    assert (sent["if-none-match"], sent["if-modified-since"]) == (ETAG, LAST_MODIFIED)
    [robots] = origin.robots
    assert not set(CONDITIONAL) & robots.keys()


async def test_without_validators_no_conditional_header_is_sent(localweb):
    origin = ConditionalOrigin(localweb, "plain.test")
    async with Fetcher(settings(), ownership=AllShards()) as f:
        bare = await f.fetch(origin.url)
        empty = await f.fetch(origin.url, validators=Validators())
    assert [(r.status, r.http_status, r.body) for r in (bare, empty)] == [(Status.OK, 200, b"<title>v1</title>")] * 2
    assert len(origin.page) == 2
    assert all(not set(CONDITIONAL) & sent.keys() for sent in [*origin.page, *origin.robots])


async def test_hostile_validators_put_nothing_on_the_wire(localweb):
    origin = ConditionalOrigin(localweb, "hostile.test")
    hostile = Validators(if_none_match=ETAG + "\r\nX-Injected: yes",
                         if_modified_since="yesterday\r\nX-Injected: yes")
    half = Validators(if_none_match="v1-abc", if_modified_since=LAST_MODIFIED)   # an ETag unquoted
    async with Fetcher(settings(), ownership=AllShards()) as f:
        first = await f.fetch(origin.url, validators=hostile)
        second = await f.fetch(origin.url, validators=half)
    assert (first.status, first.http_status) == (second.status, second.http_status) == (Status.OK, 200)
    assert len(origin.page) == 2
    assert all("x-injected" not in sent for sent in [*origin.page, *origin.robots])
    assert not set(CONDITIONAL) & origin.page[0].keys()
    assert "if-none-match" not in origin.page[1] and origin.page[1]["if-modified-since"] == LAST_MODIFIED


async def test_grpc_fetch_carries_the_validators_to_the_origin(localweb):
    origin = ConditionalOrigin(localweb, "grpc-cond.test")
    async with Fetcher(settings(), ownership=AllShards()) as f:
        async with served(f) as stub:
            conditional = await stub.Fetch(fetcher_pb2.FetchRequest(
                url=origin.url, if_none_match=ETAG, if_modified_since=LAST_MODIFIED))
            plain = await stub.Fetch(fetcher_pb2.FetchRequest(url=origin.url))
    assert (conditional.http_status, conditional.body) == (304, b"")
    assert {h.name.lower(): h.value for h in conditional.headers}["etag"] == ETAG
    assert plain.http_status == 200
    assert [(p.get("if-none-match"), p.get("if-modified-since")) for p in origin.page] == [
        (ETAG, LAST_MODIFIED), (None, None)]
    assert all(not set(CONDITIONAL) & r.keys() for r in origin.robots)
