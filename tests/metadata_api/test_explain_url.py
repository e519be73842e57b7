"""ExplainUrl over real gRPC (issue 30, first step): a seen URL is explained from its record,
with each field's source as stored; a URL never seen is NOT_FOUND."""
from __future__ import annotations

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
from support.extraction import EXTRACTION


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


# --- the stored page, extracted again (issue 30) ----------------------------------------------------

PAGE = (b'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Story | News</title>'
        b'<meta property="og:title" content="Story"><meta name="twitter:title" content="Story, again">'
        b'<meta property="og:image" content="/icon.png"><meta property="og:image:width" content="16">'
        b'<meta property="og:image:height" content="16"><meta property="og:site_name" content="News">'
        b'</head><body><img src="/photo.jpg" width="800" height="600"></body></html>')
FINAL = "http://news.test/story"


@pytest.fixture
async def archive(tmp_path):
    """A metadata-api whose ExplainUrl reads stored pages (a WARC content store, one worker), and
    a function that stores a record for a URL with a response logged as its page."""
    from spiderduck.core.record import with_page
    from spiderduck.extract import extract_page
    from spiderduck.query.explainer import Explainer
    from spiderduck.stores.content import FetchedContent
    from spiderduck.stores.warc_files import WarcFileStore
    import dataclasses

    store = await open_metadata_store(f"sqlite:///{tmp_path}/m.db")
    content = WarcFileStore(str(tmp_path / "warc"))

    async def stored(url, body=PAGE, content_type="text/html; charset=utf-8", logged=True, related=(),
                     logged_as=None, **changes):
        page = extract_page(body, url, content_type, **EXTRACTION)
        rec = dataclasses.replace(UrlRecord(url=url, status=Status.OK, final_url=url, canonical_url=url,
                                            fetched_at=1.0), **with_page(page))
        ref = await content.append(logged_as or FetchedContent(url, 200, (("Content-Type", content_type),), body,
                                                               1.0)) if logged else ""
        for fetch in related:                       # the page's related fetches, logged after it
            await content.append(fetch)
        await store.put(url, dataclasses.replace(rec, **{"content_ref": ref, **changes}), [url])

    explainer = Explainer(store, content, workers=1, budget=5.0, parser="selectolax", robots_token="spiderduck",
                          min_image_size=50)
    listen = f"127.0.0.1:{free_port()}"
    grpc_server = GrpcServer(listen)
    server.register(grpc_server, store, MetadataApiSettings(), explainer=explainer)
    async with grpc_server, grpc.aio.insecure_channel(listen) as channel:
        yield metadata_pb2_grpc.MetadataServiceStub(channel), stored
    await explainer.close()
    await content.close()
    await store.close()


def lost(explained, field):
    entry = next(f for f in explained.fields if f.field == field)
    return entry.source, {(c.source, c.value): c.reason for c in entry.rejected}


async def test_the_stored_page_is_extracted_again_and_each_loser_says_why(archive):
    stub, stored = archive
    await stored(FINAL)
    explained = await stub.ExplainUrl(metadata_pb2.ExplainUrlRequest(url=FINAL), timeout=60)
    assert explained.note == ""
    assert lost(explained, "title") == ("og:title", {
        ("twitter:title", "Story, again"): "lower precedence than og:title",
        ("<title>", "Story"): "the same value, from a source below og:title"})
    source, image = lost(explained, "image")
    assert source == "<img>"
    assert image[("og:image", "http://news.test/icon.png")].startswith("stated 16×16 px")
    assert {f.field for f in explained.fields} >= {"title", "image", "site_name", "lang", "canonical_url"}


async def test_a_noarchive_record_is_explained_from_the_record_and_says_so(archive):
    from spiderduck.query.explainer import NOARCHIVE
    stub, stored = archive
    await stored(FINAL, logged=False, robots_directives=("noarchive",))
    explained = await stub.ExplainUrl(metadata_pb2.ExplainUrlRequest(url=FINAL), timeout=30)
    assert explained.note == NOARCHIVE
    assert lost(explained, "title") == ("og:title", {})       # its stored source, nothing re-read
    assert explained.metadata.title == "Story"


@pytest.mark.parametrize("changes, content_type, says", [
    ({"content_ref": "warc-gone.warc.gz@0+100"}, "text/html", "could not be read"),
    ({}, "image/png", "not an HTML page (image/png)"),
])
async def test_a_page_that_cannot_be_read_again_is_explained_from_the_record(archive, changes, content_type, says):
    stub, stored = archive
    await stored(FINAL, content_type=content_type, **changes)
    explained = await stub.ExplainUrl(metadata_pb2.ExplainUrlRequest(url=FINAL), timeout=30)
    assert says in explained.note and "explained from the record alone" in explained.note
    assert lost(explained, "title") == ("og:title", {})


def _png(width: int, height: int) -> bytes:
    import io

    from PIL import Image as Picture
    out = io.BytesIO()
    Picture.new("RGB", (width, height)).save(out, "PNG")
    return out.getvalue()


async def test_images_not_kept_say_what_their_logged_probe_answered(archive):
    from spiderduck.core.record import Image, with_source
    from spiderduck.stores.content import FetchedContent
    stub, stored = archive
    page = (b'<html><head><meta property="og:image" content="/gone.jpg"><meta name="twitter:image" content="/s.png">'
            b'<meta property="og:title" content="T"></head><body><img src="/photo.jpg"><img src="/never.jpg"></body></html>')
    probes = [FetchedContent("http://news.test/gone.jpg", 404, (("Content-Type", "text/html"),), b"nope", 1.0),
              FetchedContent("http://news.test/s.png", 200, (("Content-Type", "image/png"),), _png(16, 16), 1.0)]
    from spiderduck.extract import extract_page
    provenance = with_source(extract_page(page, FINAL, "text/html", **EXTRACTION).provenance, "image", "<img>")
    await stored(FINAL, body=page, related=probes, image=Image("http://news.test/photo.jpg", 800, 600),
                 provenance=provenance)
    explained = await stub.ExplainUrl(metadata_pb2.ExplainUrlRequest(url=FINAL), timeout=60)
    source, image = lost(explained, "image")
    assert source == "<img>"
    assert image == {
        ("og:image", "http://news.test/gone.jpg"): "failed to load when probed at fetch time: HTTP 404",
        ("twitter:image", "http://news.test/s.png"): "too small when probed at fetch time: 16×16 px (under 50 px)",
        ("<img>", "http://news.test/never.jpg"): "lower precedence than <img>"}


async def test_a_rendered_page_is_explained_from_its_rendered_dom(archive):
    """A page the fetcher rendered (issue 31): its record was made from the DOM logged as a WARC
    conversion record after the static response, and that is what is extracted again."""
    from spiderduck.stores.content import FetchedContent, new_record_id
    stub, stored = archive
    shell = b'<html><head><title>App</title></head><body><div id="root"></div><script src="/a.js"></script></body></html>'
    dom = (b'<html><head><title>App</title><meta property="og:title" content="Rendered story">'
           b'</head><body><div id="root">text</div></body></html>')
    rid = new_record_id()
    page = FetchedContent(FINAL, 200, (("Content-Type", "text/html"),), shell, 1.0, record_id=rid)
    from spiderduck.extract import extract_page
    rendered = extract_page(dom, FINAL, "text/html; charset=utf-8", **EXTRACTION)
    await stored(FINAL, body=shell, logged_as=page, fetch_mode="rendered", title=rendered.title,
                 provenance=rendered.provenance,
                 related=[FetchedContent(FINAL, 200, (), dom, 1.0, conversion_of=rid)])
    explained = await stub.ExplainUrl(metadata_pb2.ExplainUrlRequest(url=FINAL), timeout=60)
    assert explained.note == ""
    assert lost(explained, "title") == ("og:title", {("<title>", "App"): "lower precedence than og:title"})
