"""ExplainUrl over real gRPC (issue 30, first step): a seen URL is explained from its record,
with each field's source as stored; a URL never seen is NOT_FOUND."""
from __future__ import annotations

import grpc
import pytest

from cli.nats_server import free_port
from common.config import MetadataApiSettings
from common.grpc_server import GrpcServer
from common.record import UrlRecord
from common.status import Status
from common.stores.open import open_metadata_store
from metadata_api import server
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc


@pytest.fixture
async def stub(tmp_path):
    store = await open_metadata_store(f"sqlite:///{tmp_path}/m.db")
    rec = UrlRecord(url="http://short.test/a", status=Status.OK, final_url="http://news.test/s",
                    title="Story", fetched_at=1.0)
    await store.put("http://news.test/s", rec, ["http://short.test/a"])
    listen = f"127.0.0.1:{free_port()}"
    grpc_server = GrpcServer(listen)
    server.register(grpc_server, store, MetadataApiSettings())
    async with grpc_server, grpc.aio.insecure_channel(listen) as channel:
        yield metadata_pb2_grpc.MetadataServiceStub(channel)
    await store.close()


async def test_a_seen_url_is_explained_from_its_record(stub):
    explained = await stub.ExplainUrl(metadata_pb2.ExplainUrlRequest(url="HTTP://SHORT.test/a#x"))
    assert explained.metadata.url == "HTTP://SHORT.test/a#x"     # as asked, like GetUrlMetadata
    assert explained.metadata.title == "Story" and explained.metadata.status == metadata_pb2.OK


async def test_a_url_never_seen_is_not_found_and_an_empty_one_invalid(stub):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.ExplainUrl(metadata_pb2.ExplainUrlRequest(url="http://nope.test/"))
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND and "never been seen" in caught.value.details()
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.ExplainUrl(metadata_pb2.ExplainUrlRequest())
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_the_answer_carries_each_platforms_findings(stub):
    explained = await stub.ExplainUrl(metadata_pb2.ExplainUrlRequest(url="http://short.test/a"))
    found = {(f.platform, f.code, f.severity, f.field) for f in explained.findings}
    assert ("facebook", "image_missing", "warning", "image") in found       # the record has no image
    assert not any(f.code == "title_missing" for f in explained.findings)  # it has a title
