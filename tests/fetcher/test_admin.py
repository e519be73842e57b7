"""FetcherAdmin over a real socket: list, pause, resume, set-rate, and its errors."""
from __future__ import annotations

import contextlib
import time

import grpc
import pytest

from common import config
from common.grpc_server import GrpcServer
from common.nats_server import free_port
from common.status import Status
from fetcher import admin, server
from fetcher.fetcher import Fetcher
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
async def running(s):
    async with Fetcher(s) as f:
        grpc_server = GrpcServer(s.listen)
        server.register(grpc_server, f)
        admin.register(grpc_server, f)
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
    async with running(settings()) as (f, stub):
        f.ownership = NoShards()
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.PauseDomain(pb.PauseDomainRequest(domain="x.test", seconds=5))
        listing = await stub.ListDomains(pb.ListDomainsRequest())
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert list(listing.domains) == []
