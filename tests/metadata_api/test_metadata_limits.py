"""MetadataService's limits over a real socket, as its role builds the server
(metadata_api.server.grpc_server): a request over its method's cap is RESOURCE_EXHAUSTED and a
legitimate maximal one is answered; one caller holds at most metadata_api.max_resolves_per_caller
of the ResolveUrl places (a real nats-server takes the submissions, which no scheduler answers,
so the calls stay open)."""
from __future__ import annotations

import asyncio
import contextlib

import aiohttp
import grpc
import nats
import pytest

from spiderduck.bus.streams import SUBMIT_SUBJECT
from spiderduck.cli.nats_server import free_port
from spiderduck.core import config
from spiderduck.metadata_api import server
from spiderduck.metadata_api.main import run_metadata_api
from spiderduck.web.main import open_web
from spiderduck.stores.open import open_metadata_store
from spiderduck.v1 import metadata_pb2 as pb, metadata_pb2_grpc
from spiderduck.wire.record_limits import MAX_URL_CHARS
from support.service import wait_port

BIG_CHANNEL = [("grpc.max_send_message_length", 64 << 20), ("grpc.max_receive_message_length", 64 << 20)]


def long_url(n: int, chars: int = MAX_URL_CHARS) -> str:
    head = f"http://long{n}.test/"
    return head + "a" * (chars - len(head))


@pytest.fixture
async def api(tmp_path):
    settings = config.load(env={}, overrides={"metadata_api.listen": f"127.0.0.1:{free_port()}"})
    store = await open_metadata_store(f"sqlite:///{tmp_path}/m.db")
    grpc_server = server.grpc_server(settings)
    server.register(grpc_server, store, settings.metadata_api)
    async with grpc_server, grpc.aio.insecure_channel(grpc_server.address, options=BIG_CHANNEL) as channel:
        yield metadata_pb2_grpc.MetadataServiceStub(channel), settings.metadata_api
    await store.close()


async def test_get_url_metadata_over_its_cap_is_refused_and_a_maximal_request_answered(api):
    stub, s = api
    cap = server.request_caps(s)[f"/{server.SERVICE_NAME}/GetUrlMetadata"]
    assert cap < 5 << 20                                    # not the 64 MiB of before
    asked = [long_url(n) for n in range(s.max_urls)]        # max_urls URLs of the longest kind
    reply = await stub.GetUrlMetadata(pb.GetUrlMetadataRequest(urls=asked), timeout=30)
    assert [r.url for r in reply.results] == asked and not any(r.found for r in reply.results)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.GetUrlMetadata(pb.GetUrlMetadataRequest(urls=["http://a.test/" + "x" * cap]), timeout=30)
    assert err.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    reply = await stub.GetUrlMetadata(pb.GetUrlMetadataRequest(urls=["http://a.test/"]), timeout=5)
    assert len(reply.results) == 1                          # the server goes on


async def test_a_one_url_call_over_its_cap_is_refused_before_it_is_read(api):
    stub, _ = api
    over = "http://a.test/" + "x" * server.ONE_URL_CAP      # far under the server's largest cap
    for call, request in ((stub.ResolveUrl, pb.ResolveUrlRequest(url=over)),
                          (stub.ExplainUrl, pb.ExplainUrlRequest(url=over))):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await call(request, timeout=10)
        assert err.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "cap" in err.value.details()
    # The longest URL, in 4-byte characters, passes the cap: it reaches the method, which
    # answers as it does (no NATS here: FAILED_PRECONDITION; not stored: NOT_FOUND).
    longest = "http://a.test/" + "\U0001F986" * (MAX_URL_CHARS - 14)
    for call, request, code in ((stub.ResolveUrl, pb.ResolveUrlRequest(url=longest), grpc.StatusCode.FAILED_PRECONDITION),
                                (stub.ExplainUrl, pb.ExplainUrlRequest(url=longest), grpc.StatusCode.NOT_FOUND)):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await call(request, timeout=10)
        assert err.value.code() is code, err.value.details()


@contextlib.asynccontextmanager
async def resolving_api(tmp_path, nats_url: str, **overrides):
    """The metadata-api role on a real NATS, and a queue of the submissions its calls publish
    (each ResolveUrl call that took a place publishes one, then waits for a reply never sent)."""
    values = {"nats_url": nats_url, "data_dir": str(tmp_path / "var"), "web.listen": f"127.0.0.1:{free_port()}",
              "metadata_api.listen": f"127.0.0.1:{free_port()}", "metadata_api.explain_workers": 0,
              "metadata_api.resolve_timeout": 60.0, "metadata_api.max_concurrent_resolves": 5,
              "metadata_api.max_resolves_per_caller": 2, "shutdown_grace": 1.0}   # previews still open at the end
    settings = config.load(env={}, overrides={**values, **overrides})
    stop = asyncio.Event()
    role = asyncio.create_task(run_metadata_api(settings, stop, beside=open_web))   # the web UI beside it
    nc = await nats.connect(nats_url)
    submitted: asyncio.Queue = asyncio.Queue()
    await nc.subscribe(SUBMIT_SUBJECT, cb=submitted.put)
    calls: list[asyncio.Task] = []
    try:
        await wait_port(settings.metadata_api.listen)
        await wait_port(settings.web.listen)
        async with grpc.aio.insecure_channel(settings.metadata_api.listen) as channel, \
                aiohttp.ClientSession() as http:
            stub = metadata_pb2_grpc.MetadataServiceStub(channel)

            async def start(n: int, token: str = "") -> asyncio.Task:
                """A ResolveUrl call, once it holds its place (its submission seen)."""
                metadata = [("authorization", f"Bearer {token}")] if token else None
                call = asyncio.ensure_future(stub.ResolveUrl(pb.ResolveUrlRequest(url=f"http://s{n}.test/"),
                                                           metadata=metadata, timeout=60))
                calls.append(call)
                await asyncio.wait_for(submitted.get(), 10)
                return call

            async def refused(n: int, token: str = "") -> grpc.aio.AioRpcError:
                metadata = [("authorization", f"Bearer {token}")] if token else None
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await stub.ResolveUrl(pb.ResolveUrlRequest(url=f"http://s{n}.test/"), metadata=metadata, timeout=10)
                return err.value
            async def preview(n: int, token: str = "") -> asyncio.Task:
                """GET /api/v1/preview; once it holds its place (its submission seen) when it does."""
                headers = {"Authorization": f"Bearer {token}"} if token else {}
                call = asyncio.ensure_future(http.get(f"http://{settings.web.listen}/api/v1/preview",
                                                      params={"url": f"http://s{n}.test/"}, headers=headers))
                calls.append(call)
                return call

            yield start, refused, preview, submitted
    finally:
        for call in calls:
            call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)
        await nc.close()
        stop.set()
        await asyncio.wait_for(role, 30)


async def test_one_token_holds_at_most_max_resolves_per_caller_places(tmp_path, nats_server):
    tokens = tmp_path / "tokens"
    tokens.write_text("alice:alice-secret-1\nbob:bob-secret-2\n")
    async with resolving_api(tmp_path, nats_server.url, **{"metadata_api.tokens_file": str(tokens)}) as (start, refused, *_):
        first = await start(1, "alice-secret-1")
        await start(2, "alice-secret-1")
        err = await refused(3, "alice-secret-1")
        assert err.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "max_resolves_per_caller" in err.details() and "alice-secret-1" not in err.details()
        await start(4, "bob-secret-2")                       # another token has its own share
        first.cancel()                                       # alice's place is given back ...
        await asyncio.gather(first, return_exceptions=True)
        await start(5, "alice-secret-1")                     # ... and taken again
        await start(6, "bob-secret-2")
        err = await refused(7, "bob-secret-2")
        assert "max_resolves_per_caller" in err.details()


async def test_without_tokens_one_peer_holds_at_most_its_share(tmp_path, nats_server):
    async with resolving_api(tmp_path, nats_server.url) as (start, refused, *_):
        await start(1)
        await start(2)
        err = await refused(3)                  # every loopback connection is one peer
        assert err.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "max_resolves_per_caller" in err.details()


async def test_web_previews_and_resolve_url_share_one_callers_places(tmp_path, nats_server):
    """/api/v1/preview takes its place among ResolveUrl's: alice's preview and her gRPC call fill
    her share of 2, so her next of either kind is refused (429 with Retry-After over HTTP), while
    bob still gets his."""
    tokens = tmp_path / "tokens"
    tokens.write_text("alice:alice-secret-1\nbob:bob-secret-2\n")
    async with resolving_api(tmp_path, nats_server.url, **{"metadata_api.tokens_file": str(tokens)}) \
            as (start, refused, preview, submitted):
        waiting = await preview(1, "alice-secret-1")
        await asyncio.wait_for(submitted.get(), 10)           # the preview holds a place ...
        await start(2, "alice-secret-1")                      # ... and her gRPC call the other
        err = await refused(3, "alice-secret-1")
        assert err.code() is grpc.StatusCode.RESOURCE_EXHAUSTED and "max_resolves_per_caller" in err.details()
        answer = await asyncio.wait_for(await preview(4, "alice-secret-1"), 10)
        assert answer.status == 429 and answer.headers["Retry-After"] == "1"
        assert "max_resolves_per_caller" in (await answer.json())["error"]
        assert submitted.empty()                              # the refused ones started no crawl
        bob = await preview(5, "bob-secret-2")
        await asyncio.wait_for(submitted.get(), 10)
        assert not waiting.done() and not bob.done()


async def test_without_tokens_a_hosts_previews_count_with_its_grpc_calls(tmp_path, nats_server):
    async with resolving_api(tmp_path, nats_server.url) as (start, refused, preview, submitted):
        await start(1)
        await preview(2)
        await asyncio.wait_for(submitted.get(), 10)
        answer = await asyncio.wait_for(await preview(3), 10)   # 127.0.0.1 holds its 2 already
        assert answer.status == 429
        err = await refused(4)
        assert err.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
