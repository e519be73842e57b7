"""MetadataService over a real socket: lookups by any URL form, the 300-URL limit, health, reflection."""
from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from spiderduck.cli.nats_server import free_port
from spiderduck.core.config import MetadataApiSettings
from spiderduck.core.record import UrlRecord
from spiderduck.core.status import Status
from spiderduck.metadata_api import server
from spiderduck.rpc.server import GrpcServer
from spiderduck.stores.open import open_metadata_store
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc

API = MetadataApiSettings()     # the configured defaults


@pytest.fixture
async def api(tmp_path):
    store = await open_metadata_store(f"sqlite:///{tmp_path}/m.db")
    rec = UrlRecord(url="http://short.test/a", status=Status.OK, final_url="http://news.test/s",
                    title="Story", fetched_at=1.0)
    await store.put("http://news.test/s", rec, ["http://short.test/a"])
    bad = UrlRecord(url="javascript:x", status=Status.INVALID_URL, error="unsupported", fetched_at=1.0)
    await store.put("javascript:x", bad, [])
    listen = f"127.0.0.1:{free_port()}"
    grpc_server = GrpcServer(listen)
    server.register(grpc_server, store, API)
    async with grpc_server, grpc.aio.insecure_channel(listen) as channel:
        yield channel
    await store.close()


async def test_any_form_of_a_seen_url_answers_in_order(api):
    stub = metadata_pb2_grpc.MetadataServiceStub(api)
    urls = ["HTTP://SHORT.test/a#x", "http://nope.test/", "http://news.test/s", "javascript:x"]
    response = await stub.GetUrlMetadata(metadata_pb2.GetUrlMetadataRequest(urls=urls))
    assert [r.url for r in response.results] == urls
    assert [r.found for r in response.results] == [True, False, True, True]
    assert response.results[0].metadata.title == "Story"
    assert response.results[3].metadata.status == metadata_pb2.INVALID_URL


async def test_more_than_300_urls_is_invalid_argument(api):
    stub = metadata_pb2_grpc.MetadataServiceStub(api)
    await stub.GetUrlMetadata(metadata_pb2.GetUrlMetadataRequest(urls=["http://a.test/"] * 300))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.GetUrlMetadata(metadata_pb2.GetUrlMetadataRequest(urls=["http://a.test/"] * 301))
    assert err.value.code() is grpc.StatusCode.INVALID_ARGUMENT


async def test_health_and_reflection(api):
    health = health_pb2_grpc.HealthStub(api)
    for name in ("", "spiderduck.v1.MetadataService"):
        reply = await health.Check(health_pb2.HealthCheckRequest(service=name))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    stub = reflection_pb2_grpc.ServerReflectionStub(api)
    call = stub.ServerReflectionInfo()
    await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
    reply = await call.read()
    await call.done_writing()
    names = {s.name for s in reply.list_services_response.service}
    assert "spiderduck.v1.MetadataService" in names and "grpc.health.v1.Health" in names


async def test_a_stored_record_is_answered_without_parsing_it(api, monkeypatch):
    import json

    from google.protobuf import json_format

    from spiderduck.wire import record_proto

    def never(*args, **kwargs):
        raise AssertionError("a stored record was parsed to answer GetUrlMetadata")

    for module, name in ((record_proto, "from_bytes"), (record_proto, "from_proto"),
                         (record_proto, "from_json"), (json_format, "Parse"), (json, "loads")):
        monkeypatch.setattr(module, name, never)
    stub = metadata_pb2_grpc.MetadataServiceStub(api)
    response = await stub.GetUrlMetadata(metadata_pb2.GetUrlMetadataRequest(
        urls=["http://short.test/a", "http://news.test/s"]))
    assert [r.metadata.title for r in response.results] == ["Story", "Story"]
