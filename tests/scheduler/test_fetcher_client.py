"""FetcherClient's policy over any transport: re-route, back off, give up at the deadline; and
a re-fetch's validators carried over real gRPC to the fetcher and on to the origin."""
from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from spiderduck.core import config

from spiderduck.core.config import SchedulerSettings
from spiderduck.core.errors import DomainBusy, FetcherBusy, FetcherUnavailable, WrongFetcher
from spiderduck.core.fetch import FetchResult
from spiderduck.core.freshness import Validators
from spiderduck.core.status import Status
from spiderduck.fetcher import server
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.ownership import AllShards
from spiderduck.rpc.server import GrpcServer
from spiderduck.scheduler.fetcher_client import FetcherClient, GrpcTransport, hop_backoff
from spiderduck.scheduler.routing import StaticRouter
from spiderduck.v1 import fetcher_pb2_grpc
from spiderduck.wire import fetch_proto


class Scripted:
    """A transport answering from a script: an exception to raise, or 'ok'."""

    def __init__(self, *script):
        self.script = list(script)
        self.calls: list[tuple[str, str, float]] = []
        self.validators: list[Validators | None] = []

    async def fetch(self, address, url, *, purpose, max_body_bytes, timeout, validators=None):
        self.calls.append((address, url, timeout))
        self.validators.append(validators)
        step = self.script.pop(0) if self.script else "ok"
        if isinstance(step, BaseException):
            raise step
        return FetchResult(url=url, status=Status.OK, http_status=200)

    async def close(self):
        pass


class Router(StaticRouter):
    """Routes to a list of owners in turn: the next one after every lease change."""

    def __init__(self, owners):
        super().__init__(["unused"], 16)
        self.owners = list(owners)
        self.changes = 0

    def route(self, domain):
        return self.owners[min(self.changes, len(self.owners) - 1)]

    async def changed(self, shard, timeout):
        self.changes += 1


def client(transport, router=None, **kw):
    kw.setdefault("max_hops_per_domain", SchedulerSettings().max_hops_per_domain)
    return FetcherClient(router or Router(["f1"]), hop_timeout=kw.pop("hop_timeout", 5.0),
                         backoff=hop_backoff(SchedulerSettings(hop_backoff_base=0.01, hop_backoff_max=0.02)),
                         transport=transport, **kw)


async def test_wrong_fetcher_reroutes_to_the_new_owner():
    transport = Scripted(WrongFetcher("f1 gave up the shard"))
    router = Router(["f1", "f2"])
    c = client(transport, router)
    result = await c.fetch("http://a.test/")
    assert result.status is Status.OK
    assert [call[0] for call in transport.calls] == ["f1", "f2"] and c.reroutes == 1


async def test_busy_is_retried_after_a_back_off():
    transport = Scripted(FetcherBusy("full"), FetcherBusy("full"))
    result = await client(transport).fetch("http://a.test/")
    assert result.status is Status.OK and len(transport.calls) == 3


async def test_busy_without_waiting_is_domain_busy_at_once():
    transport = Scripted(FetcherBusy("full"))
    with pytest.raises(DomainBusy):
        await client(transport).fetch("http://a.test/", wait_if_busy=False)
    assert len(transport.calls) == 1


async def test_a_timeout_ends_the_hop_as_fetcher_unavailable():
    transport = Scripted(TimeoutError("deadline"))
    with pytest.raises(FetcherUnavailable) as err:
        await client(transport).fetch("http://a.test/")
    assert err.value.retryable and len(transport.calls) == 1


async def test_the_hop_gets_what_is_left_of_its_deadline():
    transport = Scripted()
    await client(transport, hop_timeout=5.0).fetch("http://a.test/", timeout=2.0)
    [(_, _, timeout)] = transport.calls
    assert 1.5 < timeout <= 2.0


async def test_busy_until_the_deadline_gives_up():
    transport = Scripted(*[FetcherBusy("full")] * 1000)
    with pytest.raises(FetcherUnavailable) as err:
        await asyncio.wait_for(client(transport, hop_timeout=0.2).fetch("http://a.test/"), 2)
    assert "full" in str(err.value)


async def test_validators_go_to_the_transport_on_every_try():
    validators = Validators('"e1"', "Sun, 06 Nov 1994 08:49:37 GMT")
    transport = Scripted(WrongFetcher("moved"))
    c = client(transport, Router(["f1", "f2"]))
    await c.fetch("http://a.test/", validators=validators)
    await c.fetch("http://a.test/")
    assert transport.validators == [validators, validators, None]


# --- over real gRPC -------------------------------------------------------------------------

ETAG = '"g7"'
SINCE = "Sun, 06 Nov 1994 08:49:37 GMT"


class Recording(fetcher_pb2_grpc.FetcherServiceServicer):
    """A FetcherService that keeps every request and answers 304."""

    def __init__(self):
        self.requests = []

    async def Fetch(self, request, context):
        self.requests.append(request)
        return fetch_proto.to_proto(FetchResult(url=request.url, status=Status.OK, http_status=304))


async def test_grpc_transport_puts_the_validators_on_the_request():
    recording = Recording()
    grpc_server = GrpcServer("127.0.0.1:0")
    grpc_server.add(fetcher_pb2_grpc.add_FetcherServiceServicer_to_server, recording, server.SERVICE_NAME)
    address = grpc_server.bind()
    transport = GrpcTransport()
    hostile = Validators('"x"\r\nX-Injected: 1', "soon")
    async with grpc_server:
        try:
            answered = await transport.fetch(address, "http://a.test/", purpose="page", max_body_bytes=0,
                                             timeout=10, validators=Validators(ETAG, SINCE))
            await transport.fetch(address, "http://a.test/", purpose="page", max_body_bytes=0,
                                  timeout=10, validators=hostile)
            await transport.fetch(address, "http://a.test/", purpose="page", max_body_bytes=0, timeout=10)
        finally:
            await transport.close()
    assert (answered.status, answered.http_status) == (Status.OK, 304)
    # Carried as given: the fetcher, not the wire, decides what is well formed.
    assert [(r.if_none_match, r.if_modified_since) for r in recording.requests] == [
        (ETAG, SINCE), (hostile.if_none_match, "soon"), ("", "")]


def fetcher_settings():
    return config.load(env={}, overrides={
        "fetcher.allowed_networks": ["127.0.0.0/8"], "fetcher.dns_overrides": {"*.test": "127.0.0.1"},
        "fetcher.default_rate": 100.0}).fetcher


async def test_a_conditional_hop_reaches_the_origin_through_the_fetchers_grpc_server(localweb):
    robots_headers: list[dict[str, str]] = []
    page_headers: list[dict[str, str]] = []

    async def robots(request):
        robots_headers.append({k.lower(): v for k, v in request.headers.items()})
        return web.Response(text="User-agent: *\nAllow: /\n", content_type="text/plain")

    async def page(request):
        page_headers.append({k.lower(): v for k, v in request.headers.items()})
        if request.headers.get("If-None-Match") == ETAG:
            return web.Response(status=304, headers={"ETag": ETAG})
        return web.Response(text="<title>g7</title>", content_type="text/html", headers={"ETag": ETAG})

    localweb.route("g.test", "/robots.txt", robots)
    url = localweb.route("g.test", "/page", page)
    async with Fetcher(fetcher_settings(), ownership=AllShards()) as fetcher:
        grpc_server = GrpcServer("127.0.0.1:0")
        server.register(grpc_server, fetcher)
        address = grpc_server.bind()
        c = client(GrpcTransport(), Router([address]))
        async with grpc_server:
            try:
                conditional = await c.fetch(url, validators=Validators(ETAG, SINCE))
                plain = await c.fetch(url)
            finally:
                await c.close()
    assert (conditional.status, conditional.http_status, conditional.header("etag")) == (Status.OK, 304, ETAG)
    assert conditional.url == url and plain.http_status == 200
    assert [(h.get("if-none-match"), h.get("if-modified-since")) for h in page_headers] == [
        (ETAG, SINCE), (None, None)]
    [robots_seen] = robots_headers
    assert "if-none-match" not in robots_seen and "if-modified-since" not in robots_seen
