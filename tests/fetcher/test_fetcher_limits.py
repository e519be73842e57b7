"""The fetcher's gRPC limits over a real socket, as its role builds the server
(fetcher.server.grpc_server): a request over its service's cap is RESOURCE_EXHAUSTED and a
legitimate maximal one is answered; past fetcher.max_concurrent_calls calls at once (held open
by origins that answer only when told), a call is RESOURCE_EXHAUSTED."""
from __future__ import annotations

import asyncio
import contextlib

import grpc
import pytest

from spiderduck.cli.nats_server import free_port
from spiderduck.core import config
from spiderduck.fetcher import admin, server
from spiderduck.fetcher.domain_controls import DomainControls
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.ownership import AllShards
from spiderduck.v1 import fetcher_pb2 as pb, fetcher_pb2_grpc
from spiderduck.wire.record_limits import MAX_URL_CHARS
from support.localweb import Gate


@contextlib.asynccontextmanager
async def running(**kw):
    values = {"fetcher.allowed_networks": ["127.0.0.0/8"], "fetcher.dns_overrides": {"*.test": "127.0.0.1"},
              "fetcher.default_rate": 50.0, "fetcher.listen": f"127.0.0.1:{free_port()}"}
    settings = config.load(env={}, overrides={**values, **{f"fetcher.{k}": v for k, v in kw.items()}})
    async with Fetcher(settings.fetcher, ownership=AllShards()) as fetcher, \
            DomainControls(fetcher.politeness, None) as controls:
        grpc_server = server.grpc_server(settings)
        server.register(grpc_server, fetcher)
        admin.register(grpc_server, fetcher, controls)
        async with grpc_server, grpc.aio.insecure_channel(grpc_server.address) as channel:
            yield fetcher_pb2_grpc.FetcherServiceStub(channel), fetcher_pb2_grpc.FetcherAdminStub(channel)


async def exhausted(call) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    assert err.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED, err.value.details()
    return err.value.details()


async def test_a_fetch_request_over_its_cap_is_refused_and_a_maximal_one_answered(localweb):
    page = localweb.page("a.test", "/", "<title>A</title>")
    async with running() as (fetch, _):
        # The longest URL, in 4-byte characters, and validators as long as a header line.
        longest = pb.FetchRequest(url=page + "\U0001F986" * (MAX_URL_CHARS - len(page)), purpose="page",
                                  if_none_match='"' + "e" * 8000 + '"', if_modified_since="d" * 8000)
        assert longest.ByteSize() < server.FETCH_REQUEST_CAP
        answer = await fetch.Fetch(longest, timeout=20)
        assert answer.status                                     # answered, whatever the origin said
        over = pb.FetchRequest(url=page, if_none_match="e" * server.FETCH_REQUEST_CAP)
        await exhausted(fetch.Fetch(over, timeout=10))
        assert (await fetch.Fetch(pb.FetchRequest(url=page), timeout=10)).http_status == 200


async def test_an_admin_request_over_its_cap_is_refused_and_a_maximal_one_answered():
    async with running() as (_, admin_stub):
        names = [".".join(f"{n:04d}" + "x" * 56 for _ in range(4)) + ".test" for n in range(server.MAX_LISTED_DOMAINS)]
        assert all(len(name) <= 253 for name in names)
        listed = await admin_stub.ListDomains(pb.ListDomainsRequest(domains=names), timeout=30)
        assert listed.fetcher_id and not listed.domains           # answered: none has a queue here
        over = pb.ListDomainsRequest(domains=names * 2)
        assert over.ByteSize() > server.ADMIN_REQUEST_CAP
        await exhausted(admin_stub.ListDomains(over, timeout=10))
        await exhausted(admin_stub.PauseDomain(pb.PauseDomainRequest(domain="x" * server.ADMIN_REQUEST_CAP),
                                               timeout=10))


async def test_calls_past_max_concurrent_calls_are_refused_until_one_ends(localweb):
    gates = [Gate("<title>held</title>") for _ in range(2)]
    pages = [localweb.route(f"held{n}.test", "/", gate) for n, gate in enumerate(gates)]
    free = localweb.page("free.test", "/", "<title>free</title>")
    async with running(max_concurrent_calls=2) as (fetch, admin_stub):
        held = [asyncio.ensure_future(fetch.Fetch(pb.FetchRequest(url=page), timeout=30)) for page in pages]
        for gate in gates:
            await asyncio.wait_for(gate.asked.wait(), 10)        # both calls are at their origins
        details = await exhausted(fetch.Fetch(pb.FetchRequest(url=free), timeout=10))
        assert "concurrent" in details.lower()
        await exhausted(admin_stub.ListDomains(pb.ListDomainsRequest(), timeout=10))
        gates[0].opened.set()
        assert (await asyncio.wait_for(held[0], 10)).http_status == 200
        assert (await fetch.Fetch(pb.FetchRequest(url=free), timeout=10)).http_status == 200
        gates[1].opened.set()
        assert (await asyncio.wait_for(held[1], 10)).http_status == 200
