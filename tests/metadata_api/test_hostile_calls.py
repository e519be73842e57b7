"""MetadataService against bad calls over a real socket: malformed requests are INVALID_ARGUMENT
with a reason, an answer past metadata_api.max_response_bytes is RESOURCE_EXHAUSTED before it is
built, calls past max_concurrent_calls are refused at once, and the next call is answered."""
from __future__ import annotations

import asyncio

import grpc
import pytest

from spiderduck.cli.nats_server import free_port
from spiderduck.core.config import MetadataApiSettings
from spiderduck.core.record import UrlRecord
from spiderduck.core.status import Status
from spiderduck.metadata_api import server
from spiderduck.rpc.server import GrpcServer
from spiderduck.stores.open import open_metadata_store
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc

METHOD = "/spiderduck.v1.MetadataService/GetUrlMetadata"
BIG = "http://big.test/"
MAX_RESPONSE = 1 << 20


class SlowStore:
    """The real store, whose lookups wait for `gate` while it is set up to (for the concurrency test)."""

    def __init__(self, store):
        self._store = store
        self.gate: asyncio.Event | None = None
        self.waiting = 0

    async def get_many_wire(self, keys, max_bytes=0):
        if self.gate is not None:
            self.waiting += 1
            await self.gate.wait()
        return await self._store.get_many_wire(keys, max_bytes)


@pytest.fixture
async def api(tmp_path):
    store = await open_metadata_store(f"sqlite:///{tmp_path}/m.db")
    big = UrlRecord(url=BIG, status=Status.OK, final_url=BIG, title="Big", fetched_at=1.0,
                    structured_data={"json-ld": [{"text": "x" * 200_000}]})
    await store.put(BIG, big, [])
    slow = SlowStore(store)
    listen = f"127.0.0.1:{free_port()}"
    grpc_server = GrpcServer(listen, max_concurrent_rpcs=4)
    server.register(grpc_server, slow, MetadataApiSettings(max_urls=300, max_response_bytes=MAX_RESPONSE))
    async with grpc_server, grpc.aio.insecure_channel(listen) as channel:
        yield channel, slow
    await store.close()


@pytest.mark.parametrize("data", [
    b"\xff\xff\xff\xff garbage",
    b"\x0a\x02\xff\xfe",                       # urls[0] is not UTF-8
    b"\x0a\x10http://a.test/",                 # a length past the end
    b"\x0a" + b"\x80" * 20,                    # a varint that never ends
], ids=["garbage", "bad-utf8", "truncated", "endless-varint"])
async def test_a_malformed_request_is_invalid_argument_and_the_next_call_is_answered(api, data):
    channel, _ = api
    raw = channel.unary_unary(METHOD, request_serializer=lambda b: b, response_deserializer=lambda b: b)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await raw(data, timeout=5)
    assert err.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "GetUrlMetadataRequest" in err.value.details()
    stub = metadata_pb2_grpc.MetadataServiceStub(channel)
    reply = await stub.GetUrlMetadata(metadata_pb2.GetUrlMetadataRequest(urls=[BIG]), timeout=5)
    assert reply.results[0].metadata.title == "Big"


async def test_an_answer_over_max_response_bytes_is_resource_exhausted(api):
    channel, _ = api
    stub = metadata_pb2_grpc.MetadataServiceStub(channel)
    assert len((await stub.GetUrlMetadata(metadata_pb2.GetUrlMetadataRequest(urls=[BIG] * 4))).results) == 4
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.GetUrlMetadata(metadata_pb2.GetUrlMetadataRequest(urls=[BIG] * 6), timeout=5)
    assert err.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "metadata_api.max_response_bytes" in err.value.details()
    reply = await stub.GetUrlMetadata(metadata_pb2.GetUrlMetadataRequest(urls=[BIG]), timeout=5)
    assert reply.results[0].found


async def test_calls_past_the_concurrency_limit_are_refused_at_once(api):
    channel, slow = api
    stub = metadata_pb2_grpc.MetadataServiceStub(channel)
    slow.gate = asyncio.Event()
    async def call():
        return await stub.GetUrlMetadata(metadata_pb2.GetUrlMetadataRequest(urls=[BIG] * 4))
    held = [asyncio.create_task(call()) for _ in range(4)]
    async with asyncio.timeout(10):
        while slow.waiting < 4:
            await asyncio.sleep(0.01)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.GetUrlMetadata(metadata_pb2.GetUrlMetadataRequest(urls=[BIG]), timeout=5)
    assert err.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    slow.gate.set()
    assert all(len(r.results) == 4 for r in await asyncio.gather(*held))
    reply = await stub.GetUrlMetadata(metadata_pb2.GetUrlMetadataRequest(urls=[BIG]), timeout=5)
    assert reply.results[0].found
