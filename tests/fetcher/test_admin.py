"""FetcherAdmin over a real socket: list, pause, resume, set-rate, and its errors; the controls
kept in NATS KV through restarts of the fetcher role."""
from __future__ import annotations

import asyncio
import contextlib
import time

import grpc
import nats
import pytest

from spiderduck.cli.nats_server import free_port
from spiderduck.core import config
from spiderduck.core.errors import FetcherBusy
from spiderduck.core.status import Status
from spiderduck.fetcher import admin, server
from spiderduck.fetcher import domain_controls
from spiderduck.fetcher.domain_controls import ControlStore, DomainControls
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.main import run_fetcher
from spiderduck.fetcher.ownership import AllShards
from spiderduck.rpc.server import GrpcServer
from spiderduck.v1 import fetcher_pb2 as pb, fetcher_pb2_grpc

JITTER = 0.02


def settings(**kw):
    values = {"fetcher.allowed_networks": ["127.0.0.0/8"],
              "fetcher.dns_overrides": {"*.test": "127.0.0.1"},
              "fetcher.default_rate": 50.0, "fetcher.id": "fetcher-7",
              "fetcher.backoff_base": 0.01, "fetcher.backoff_max": 0.01,
              "fetcher.listen": f"127.0.0.1:{free_port()}"}
    values.update({f"fetcher.{k}": v for k, v in kw.items()})
    return config.load(env={}, overrides=values).fetcher


@contextlib.asynccontextmanager
async def running(s, store: ControlStore | None = None, ownership=None):
    async with Fetcher(s, ownership=ownership or AllShards()) as f, \
            DomainControls(f.politeness, store) as controls:   # no store: nothing kept
        grpc_server = GrpcServer(s.listen)
        server.register(grpc_server, f)
        admin.register(grpc_server, f, controls)
        async with grpc_server, grpc.aio.insecure_channel(s.listen) as channel:
            yield f, fetcher_pb2_grpc.FetcherAdminStub(channel)


async def test_list_shows_each_domain_with_counts_rate_and_owner(localweb):
    localweb.page("www.shop.test", "/", "<title>x</title>")
    localweb.page("www.shop.test", "/boom", "x", status=503)
    async with running(settings(rate_overrides={"shop.test": 20})) as (f, stub):
        for path in ("/", "/", "/missing", "/boom"):
            await f.fetch(localweb.url("www.shop.test", path))
        await f.fetch(localweb.url("other.test", "/"))
        listing = await stub.ListDomains(pb.ListDomainsRequest())
        only = await stub.ListDomains(pb.ListDomainsRequest(domains=["www.shop.test"]))
    assert listing.fetcher_id == "fetcher-7"
    assert [d.domain for d in listing.domains] == ["other.test", "shop.test"]
    shop = listing.domains[1]
    assert (shop.owner, shop.state, shop.queue_depth) == ("fetcher-7", pb.DOMAIN_ACTIVE, 0)
    assert (shop.rate, shop.rate_source, shop.interval_seconds) == (20, "config", 0.05)
    # robots.txt (a 404 here) is a request to the domain too, and counts.
    assert dict(shop.status_counts) == {"200": 2, "404": 2, "503": 1}
    assert (shop.requests, shop.errors, shop.error_rate) == (5, 1, 0.2)
    assert shop.consecutive_failures == 1 and shop.window_seconds == 60
    assert [d.domain for d in only.domains] == ["shop.test"]


async def test_set_rate_pause_and_resume(localweb):
    localweb.page("ops.test", "/", "<title>x</title>")
    url = localweb.url("ops.test", "/")
    async with running(settings()) as (f, stub):
        rated = await stub.SetDomainRate(pb.SetDomainRateRequest(domain="ops.test", rate=5))
        assert (rated.rate, rated.rate_source, rated.interval_seconds) == (5, "operator", 0.2)
        for _ in range(3):
            await f.fetch(url)
        before = time.time()
        paused = await stub.PauseDomain(pb.PauseDomainRequest(domain="www.ops.test", seconds=30))
        assert paused.state == pb.DOMAIN_PAUSED and paused.reason == "paused by an operator"
        assert before + 29 < paused.paused_until <= time.time() + 30
        default = await stub.PauseDomain(pb.PauseDomainRequest(domain="ops.test"))
        assert default.paused_until >= paused.paused_until     # fetcher.pause_for (60 s)
        resumed = await stub.ResumeDomain(pb.ResumeDomainRequest(domain="ops.test"))
        assert resumed.state == pb.DOMAIN_ACTIVE and resumed.paused_until == 0
        assert (await f.fetch(url)).http_status == 200
    hits = [h for h in localweb.hits if h.path == "/"]
    assert min(b.at - a.at for a, b in zip(hits, hits[1:])) >= 0.2 - JITTER


async def test_resume_domain_restores_a_halted_domain(localweb):
    localweb.page("down.test", "/", "x", status=500)
    url = localweb.url("down.test", "/")
    async with running(settings(halt_after_failures=2, pause_error_ratio=1.0)) as (f, stub):
        await f.fetch(url)
        await f.fetch(url)
        [info] = (await stub.ListDomains(pb.ListDomainsRequest(domains=["down.test"]))).domains
        assert info.state == pb.DOMAIN_HALTED and "2 failures in a row" in info.reason
        assert (await f.fetch(url)).status is Status.CONNECTION_ERROR
        await stub.ResumeDomain(pb.ResumeDomainRequest(domain="down.test"))
        result = await f.fetch(url)
    assert result.status is Status.OK and result.http_status == 500   # it reached the origin again
    assert len([h for h in localweb.hits if h.path == "/"]) == 3


class NoShards:
    def owns(self, domain: str) -> bool:
        return False


@pytest.mark.parametrize("call,request_,code", [
    ("SetDomainRate", pb.SetDomainRateRequest(domain="x.test", rate=0), grpc.StatusCode.INVALID_ARGUMENT),
    ("SetDomainRate", pb.SetDomainRateRequest(domain="x.test", rate=-2), grpc.StatusCode.INVALID_ARGUMENT),
    ("PauseDomain", pb.PauseDomainRequest(domain="x.test", seconds=-1), grpc.StatusCode.INVALID_ARGUMENT),
    ("PauseDomain", pb.PauseDomainRequest(domain=""), grpc.StatusCode.INVALID_ARGUMENT),
    ("ResumeDomain", pb.ResumeDomainRequest(domain="http://[::1"), grpc.StatusCode.INVALID_ARGUMENT),
])
async def test_bad_requests_are_invalid_argument(call, request_, code):
    async with running(settings()) as (f, stub):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await getattr(stub, call)(request_)
    assert refused.value.code() is code


async def test_a_domain_this_fetcher_does_not_own_is_failed_precondition():
    async with running(settings(), ownership=NoShards()) as (f, stub):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.PauseDomain(pb.PauseDomainRequest(domain="x.test", seconds=5))
        listing = await stub.ListDomains(pb.ListDomainsRequest())
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert list(listing.domains) == []


async def test_a_change_nats_cannot_keep_is_unavailable_and_not_made(nats_server):
    nc = await nats.connect(nats_server.url)
    store = ControlStore(await domain_controls.open_bucket(nc.jetstream()))
    async with running(settings(), store) as (f, stub):
        await nc.close()
        for call, request_ in [("PauseDomain", pb.PauseDomainRequest(domain="x.test", seconds=5)),
                               ("SetDomainRate", pb.SetDomainRateRequest(domain="x.test", rate=2)),
                               ("ResumeDomain", pb.ResumeDomainRequest(domain="x.test"))]:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await getattr(stub, call)(request_)
            assert refused.value.code() is grpc.StatusCode.UNAVAILABLE, call
            assert "not changed: cannot" in refused.value.details(), refused.value.details()
        assert list((await stub.ListDomains(pb.ListDomainsRequest())).domains) == []


# --- kept in NATS KV: the fetcher role as `spiderduck fetcher` and `up` wire it -------------------

def role_settings(nats_url: str, **kw):
    values = {"nats_url": nats_url, "fetcher.allowed_networks": ["127.0.0.0/8"],
              "fetcher.dns_overrides": {"*.test": "127.0.0.1"}, "fetcher.default_rate": 50.0,
              "fetcher.id": "fetcher-kv", "fetcher.listen": f"127.0.0.1:{free_port()}"}
    values.update({f"fetcher.{k}": v for k, v in kw.items()})
    return config.load(env={}, overrides=values)


@contextlib.asynccontextmanager
async def fetcher_role(settings):
    """run_fetcher holding every shard (as `up` runs it), until the block ends: a new Fetcher,
    new Politeness, new gRPC server each time, as after a restart; only NATS stays."""
    ready = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()
    task = asyncio.create_task(run_fetcher(settings, stop, hold_all_shards=True,
                                           on_ready=ready.set_result))
    try:
        await asyncio.wait([ready, task], timeout=30, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            await task                                   # raises what stopped it
        async with grpc.aio.insecure_channel(settings.fetcher.listen) as channel:
            yield ready.result(), fetcher_pb2_grpc.FetcherAdminStub(channel)
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


async def only(stub, domain: str) -> pb.DomainInfo:
    [info] = (await stub.ListDomains(pb.ListDomainsRequest(domains=[domain]))).domains
    return info


async def test_a_pause_and_a_rate_outlive_a_restart_and_so_does_the_resume(nats_server, localweb):
    localweb.page("ops.test", "/", "<title>x</title>")
    url = localweb.url("ops.test", "/")
    settings = role_settings(nats_server.url)
    async with fetcher_role(settings) as (f, stub):
        await stub.SetDomainRate(pb.SetDomainRateRequest(domain="ops.test", rate=4))
        paused = await stub.PauseDomain(pb.PauseDomainRequest(domain="https://www.ops.test/a", seconds=600))
        assert (paused.domain, paused.state) == ("ops.test", pb.DOMAIN_PAUSED)

    async with fetcher_role(settings) as (f, stub):
        listing = await stub.ListDomains(pb.ListDomainsRequest())     # no request for it yet
        [info] = listing.domains
        assert (info.domain, info.state, info.reason) == ("ops.test", pb.DOMAIN_PAUSED,
                                                         "paused by an operator")
        assert info.paused_until == pytest.approx(paused.paused_until, abs=1)
        assert (info.rate, info.rate_source, info.interval_seconds) == (4, "operator", 0.25)
        with pytest.raises(FetcherBusy, match="past the caller's deadline"):
            await f.fetch(url, max_wait=5)               # its turn is ten minutes away
        resumed = await stub.ResumeDomain(pb.ResumeDomainRequest(domain="ops.test"))
        assert resumed.state == pb.DOMAIN_ACTIVE and resumed.rate_source == "operator"
        assert (await f.fetch(url, max_wait=5)).http_status == 200

    async with fetcher_role(settings) as (f, stub):
        assert (await f.fetch(url, max_wait=5)).http_status == 200
        info = await only(stub, "ops.test")
        assert (info.state, info.paused_until, info.rate, info.rate_source) == \
            (pb.DOMAIN_ACTIVE, 0, 4, "operator")
    assert len(localweb.hits_for("ops.test", "/")) == 2      # none while it was paused


async def test_a_halt_outlives_a_restart_until_an_operator_resumes_the_domain(nats_server, localweb):
    localweb.page("down.test", "/", "x", status=500)
    url = localweb.url("down.test", "/")
    settings = role_settings(nats_server.url, halt_after_failures=2, pause_error_ratio=1.0)
    async with fetcher_role(settings) as (f, stub):
        await f.fetch(url)
        await f.fetch(url)                               # two failures in a row: halted
        assert (await only(stub, "down.test")).state == pb.DOMAIN_HALTED

    async with fetcher_role(settings) as (f, stub):
        result = await f.fetch(url)
        assert result.status is Status.CONNECTION_ERROR and "is halted" in result.error
        info = await only(stub, "down.test")
        assert info.state == pb.DOMAIN_HALTED and "2 failures in a row" in info.reason
        await stub.ResumeDomain(pb.ResumeDomainRequest(domain="down.test"))

    async with fetcher_role(settings) as (f, stub):
        assert (await f.fetch(url)).http_status == 500   # it reached the origin again
        assert (await only(stub, "down.test")).state == pb.DOMAIN_ACTIVE
    assert len(localweb.hits_for("down.test", "/")) == 3


BAD_DOMAINS = [
    ("", "a domain is required"),
    ("   ", "a domain is required"),
    ("com", "com is a public suffix"),
    ("co.uk", "co.uk is a public suffix"),
    ("foo.ck", "foo.ck is a public suffix"),           # under the wildcard rule *.ck
    ("https://co.uk/", "co.uk is a public suffix"),
    ("*.example.com", "a wildcard"),
    ("exa mple.com", "not a host name"),
    ("-bad-.com", "bad label '-bad-'"),
    ("a..com", "an empty label"),
    ("a_b.com", "no underscore"),
    ("example.com/news", "a URL needs its scheme"),
    ("example.com:8080", "a URL needs its scheme"),
    ("ftp://example.com/", "unsupported scheme ftp"),
    ("http://[::1", "cannot be parsed"),
]


async def test_what_is_not_a_registrable_domain_is_invalid_argument_for_every_call():
    calls = {
        "PauseDomain": lambda d: pb.PauseDomainRequest(domain=d, seconds=5),
        "ResumeDomain": lambda d: pb.ResumeDomainRequest(domain=d),
        "SetDomainRate": lambda d: pb.SetDomainRateRequest(domain=d, rate=1),
        "ListDomains": lambda d: pb.ListDomainsRequest(domains=["ok.test", d]),
    }
    async with running(settings()) as (f, stub):
        for text, reason in BAD_DOMAINS:
            for call, make in calls.items():
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await getattr(stub, call)(make(text))
                assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT, (call, text)
                assert f"{text!r} is not a registrable domain" in refused.value.details(), (call, text)
                assert reason in refused.value.details(), (call, text, refused.value.details())
        assert len(f.politeness) == 0                    # and nothing was created
        for text, domain in [("news.bbc.co.uk", "bbc.co.uk"), ("https://WWW.Ops.test/x?y", "ops.test"),
                             ("bücher.de", "xn--bcher-kva.de"), ("127.0.0.1", "127.0.0.1"),
                             ("::1", "[::1]"), ("localhost", "localhost")]:
            paused = await stub.PauseDomain(pb.PauseDomainRequest(domain=text, seconds=5))
            assert paused.domain == domain, text
