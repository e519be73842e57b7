"""`spiderduck explain URL [--json]` (issue 30) against a real MetadataService over gRPC: the
record's fields with their sources and each platform's findings; a URL never seen exits 1."""
from __future__ import annotations

import json

import pytest

from spiderduck.cli.explain import render
from spiderduck.cli.nats_server import free_port
from spiderduck.core.config import MetadataApiSettings
from spiderduck.core.record import FieldSource, UrlRecord
from spiderduck.core.status import Status
from spiderduck.metadata_api import server
from spiderduck.rpc.server import GrpcServer
from spiderduck.stores.open import open_metadata_store
from spiderduck.v1 import metadata_pb2
from support.cli import run_cli

URL = "http://news.test/story"
RECORD = UrlRecord(url=URL, status=Status.OK, final_url=URL, title="The <b>Story</b>", fetched_at=1.0,
                   description="What happened", provenance=(FieldSource("title", "og:title"),
                                                            FieldSource("description", "description")))


@pytest.fixture
async def listen(tmp_path):
    store = await open_metadata_store(f"sqlite:///{tmp_path}/m.db")
    await store.put(URL, RECORD, [])
    address = f"127.0.0.1:{free_port()}"
    grpc_server = GrpcServer(address)
    server.register(grpc_server, store, MetadataApiSettings())
    async with grpc_server:
        yield address
    await store.close()


async def test_explain_prints_each_fields_source_and_the_findings(listen):
    code, out, err = await run_cli("explain", URL, "--set", f"metadata_api.listen={listen}")
    assert code == 0, err
    assert "title" in out and "from og:title" in out and "from description" in out
    assert "image_missing" in out and "facebook" in out          # no image: a card without one


async def test_explain_json_is_the_explanation(listen):
    code, out, err = await run_cli("explain", URL, "--json", "--set", f"metadata_api.listen={listen}")
    assert code == 0, err
    explained = json.loads(out)
    assert explained["metadata"]["title"] == "The <b>Story</b>"
    assert {"field": "title", "source": "og:title"} in explained["fields"]
    assert any(f["code"] == "image_missing" for f in explained["findings"])


async def test_a_url_never_seen_exits_1_saying_so(listen):
    code, out, err = await run_cli("explain", "http://nope.test/", "--set", f"metadata_api.listen={listen}")
    assert (code, out) == (1, "") and "never been seen" in err


def test_render_puts_errors_first_and_shows_what_lost():
    explained = metadata_pb2.Explanation(
        metadata=metadata_pb2.UrlMetadata(url=URL, status=metadata_pb2.OK, title="T"),
        fields=[metadata_pb2.FieldSource(field="title", source="og:title", rejected=[
            metadata_pb2.Candidate(source="<title>", value="T | Site", reason="lower precedence")])],
        findings=[metadata_pb2.Finding(platform="x", code="title_too_long", severity="info", message="m1"),
                  metadata_pb2.Finding(platform="facebook", code="image_missing", severity="error", message="m2")])
    text = render(explained)
    assert "not 'T | Site' (<title>): lower precedence" in text
    assert text.index("image_missing") < text.index("title_too_long")
