"""Forget, for real (issue 39): the service crawls a shortener link redirecting to a page and
another page, over a real nats-server, SQLite and WARC files; then an admin (on loopback, the
embedded default) forgets the link over gRPC. Its record and alias, every WARC record of the link
and of the page it led to (read back with warcio) and its event in the stream are gone, counted
right in ForgetResponse, spiderduck_forgotten_total and the audit log; the other page keeps
everything. GetUrlMetadata and ResolveUrl then answer the forgotten URLs as never seen, and
ResolveUrl (and the web UI's /api/v1/preview) submits no crawl of them. A forget whose content part fails answers UNAVAILABLE naming
the content log, and a repeat once it is fixed finishes it, the alias's content included."""
from __future__ import annotations

import gzip
import logging
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import grpc
import pytest
from prometheus_client import REGISTRY
from warcio.archiveiterator import ArchiveIterator

from spiderduck.bus import streams as bus
from spiderduck.bus.denylist import DENYLIST_LAG, Denylist
from spiderduck.cli.nats_server import free_port
from spiderduck.core.errors import StoreError
from spiderduck.metadata_api import server
from spiderduck.metadata_api.admins import Admins
from spiderduck.metadata_api.forget import ForgetService
from spiderduck.metadata_api.forgetting import Forgetter
from spiderduck.rpc.server import GrpcServer
from spiderduck.stores.open import open_content_store, open_metadata_store
from spiderduck.v1 import events_pb2, metadata_pb2, metadata_pb2_grpc
from support.service import Client, RunningService, service_settings, wait_until

PAGE = b"<html><head><title>Forget me 7f3a9c</title></head><body><p>a page to forget</p></body></html>"
KEEP = b"<html><head><title>Keep me</title></head><body><p>a page that stays</p></body></html>"
REASON = "GDPR art. 17 request 1234"


def warc_records(folder: Path) -> list[tuple[str, str, str]]:
    """(WARC-Target-URI, WARC-Record-ID, WARC-Concurrent-To) of every record of the folder's WARC
    files, read with warcio."""
    found = []
    for path in sorted(folder.rglob("*.warc*")):
        with open(path, "rb") as fh:
            found += [tuple(record.rec_headers.get_header(name) or "" for name in
                            ("WARC-Target-URI", "WARC-Record-ID", "WARC-Concurrent-To"))
                      for record in ArchiveIterator(fh)]
    return found


def warc_uris(folder: Path) -> list[str]:
    return [uri for uri, _, _ in warc_records(folder)]


def bound_to(folder: Path, urls: set[str]) -> int:
    """How many records are of `urls`, or bound to one (a related fetch: WARC-Concurrent-To)."""
    records = warc_records(folder)
    ids = {record_id for uri, record_id, _ in records if uri in urls}
    return sum(uri in urls or concurrent in ids for uri, _, concurrent in records)


async def stream_urls(js) -> list[str]:
    """The url of every UrlProcessed kept in the events stream."""
    info = await js.stream_info(bus.EVENTS_STREAM)
    urls = []
    for seq in range(info.state.first_seq, info.state.last_seq + 1):
        try:
            msg = await js.get_msg(bus.EVENTS_STREAM, seq)
        except Exception:       # noqa: BLE001 -- a deleted sequence
            continue
        urls.append(events_pb2.UrlProcessed.FromString(msg.data).url)
    return urls


def forgotten_total(kind: str) -> float:
    return REGISTRY.get_sample_value("spiderduck_forgotten_total", {"kind": kind}) or 0.0


@pytest.fixture
async def crawled(tmp_path, nats_server, localweb):
    page = localweb.page("site.test", "/page", PAGE, content_type="text/html")
    short = localweb.redirect("short.test", "/s", page)
    keep = localweb.page("keep.test", "/k", KEEP, content_type="text/html")
    settings = service_settings(tmp_path, nats_server.url, **{"web.listen": f"127.0.0.1:{free_port()}"})
    async with RunningService(settings), Client(settings) as client:
        await client.submit_url(short)
        await client.submit_url(keep)
        await client.events.wait_for(2)
        yield settings, client, localweb, short, page, keep


def stub_of(client: Client) -> metadata_pb2_grpc.MetadataServiceStub:
    return metadata_pb2_grpc.MetadataServiceStub(client.channel)


async def test_a_forget_removes_the_record_aliases_content_and_events_and_says_how_many(crawled, caplog):
    settings, client, localweb, short, page, keep = crawled
    warc = Path(urlsplit(settings.content_store_url).path)
    reach = {short, page}
    content = bound_to(warc, reach)
    assert content >= 3 and keep in warc_uris(warc)         # the link, the page, the page's favicon
    assert await stream_urls(client.js) and short in await stream_urls(client.js)
    counted = {kind: forgotten_total(kind) for kind in ("records", "content_records", "events")}
    caplog.set_level(logging.INFO, logger="spiderduck.audit")

    answer = await stub_of(client).Forget(metadata_pb2.ForgetRequest(urls=[short], reason=REASON), timeout=30)

    assert (answer.records, answer.content_records, answer.events) == (1, content, 1)
    assert await client.get([short, page]) == [None, None]
    assert (await client.get([keep]))[0]["title"] == "Keep me"
    left = warc_uris(warc)
    assert not [uri for uri in left if "site.test" in uri or "short.test" in uri] and keep in left
    assert len([uri for uri in left if uri]) == 2          # the other page and its favicon (and fillers)
    assert short not in await stream_urls(client.js) and keep in await stream_urls(client.js)
    for path in warc.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"7f3a9c" not in (gzip.decompress(data) if path.suffix == ".gz" else data), path
    # Counted, and audited: the caller, the reason, the counts; no URL, no secret.
    assert forgotten_total("records") - counted["records"] == 1
    assert forgotten_total("content_records") - counted["content_records"] == content
    assert forgotten_total("events") - counted["events"] == 1
    (line,) = [r.getMessage() for r in caplog.records if r.name == "spiderduck.audit"]
    assert line.startswith("forget by='ipv4:127.0.0.1'") and repr(REASON) in line
    assert f"urls=1 domain='' records=1 content_records={content} events=1" in line
    assert "short.test" not in line and "site.test" not in line

    again = await stub_of(client).Forget(metadata_pb2.ForgetRequest(urls=[short], reason=REASON), timeout=30)
    assert (again.records, again.content_records, again.events) == (0, 0, 0)

    listed = await stub_of(client).ListForgotten(metadata_pb2.ListForgottenRequest(), timeout=10)
    assert {e.url for e in listed.entries} == reach
    assert {(e.reason, e.by) for e in listed.entries} == {(REASON, "ipv4:127.0.0.1")}


async def test_a_forgotten_url_is_never_seen_and_resolving_it_crawls_nothing(crawled, caplog):
    settings, client, localweb, short, page, keep = crawled
    caplog.set_level(logging.INFO, logger="spiderduck.audit")
    stub = stub_of(client)
    # On the denylist only, its record still stored: answered as never seen all the same.
    denylist = await Denylist.open(client.js)
    try:
        await denylist.add([keep], reason="test", by="test")
    finally:
        await denylist.close()
    await wait_until(lambda: _not_found(client, keep), 2 * DENYLIST_LAG + 5, "the denylisted URL not found")
    submitted = (await client.js.stream_info(bus.URLS_STREAM)).state.last_seq
    hits = len(localweb.hits_for("keep.test"))
    for refresh in (False, True):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.ResolveUrl(metadata_pb2.ResolveUrlRequest(url=keep, refresh=refresh), timeout=10)
        assert refused.value.code() is grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.aio.AioRpcError) as refused:           # nor explained from the record
        await stub.ExplainUrl(metadata_pb2.ExplainUrlRequest(url=keep), timeout=10)
    assert refused.value.code() is grpc.StatusCode.NOT_FOUND
    async with aiohttp.ClientSession() as http, http.get(
            f"http://{settings.web.listen}/api/v1/preview", params={"url": keep, "refresh": "1"}) as preview:
        assert preview.status == 404, await preview.text()
    assert (await client.js.stream_info(bus.URLS_STREAM)).state.last_seq == submitted    # nothing queued
    assert len(localweb.hits_for("keep.test")) == hits
    answer = await stub.Unforget(metadata_pb2.UnforgetRequest(urls=[keep]), timeout=10)
    assert answer.entries == 1
    assert "unforget by='ipv4:127.0.0.1' urls=1 domain='' entries=1" in caplog.text
    await wait_until(lambda: _found(client, keep), 2 * DENYLIST_LAG + 5, "the URL found again once unforgotten")


async def _not_found(client, url):
    return (await client.get([url])) == [None]


async def _found(client, url):
    return (await client.get([url]))[0] is not None


class BreakableContent:
    """The service's own WARC files, through a real content store whose forget fails while
    `broken` (HDFS down, say)."""

    def __init__(self, store):
        self.store = store
        self.broken = True

    async def forget(self, urls, domain=""):
        if self.broken:
            raise StoreError("the namenode did not answer (connection refused)")
        return await self.store.forget(urls, domain)


async def test_a_forget_whose_content_part_fails_says_so_and_a_repeat_finishes_it(crawled, tmp_path):
    settings, client, localweb, short, page, keep = crawled
    warc = Path(urlsplit(settings.content_store_url).path)
    content = bound_to(warc, {short, page})
    store = await open_metadata_store(settings.metadata_store_url)
    files = await open_content_store(settings.content_store_url)
    breakable = BreakableContent(files)
    denylist = await Denylist.open(client.js)
    api = settings.metadata_api
    listen = f"127.0.0.1:{free_port()}"
    grpc_server = GrpcServer(listen)
    server.register(grpc_server, store, api, forgetting=ForgetService(
        Forgetter(store, breakable, client.js, denylist), Admins(api), api), denylist=denylist)
    try:
        async with grpc_server, grpc.aio.insecure_channel(listen) as channel:
            stub = metadata_pb2_grpc.MetadataServiceStub(channel)
            request = metadata_pb2.ForgetRequest(urls=[short], reason=REASON)
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                await stub.Forget(request, timeout=30)
            assert failed.value.code() is grpc.StatusCode.UNAVAILABLE
            assert "the content log: the namenode did not answer" in failed.value.details()
            assert "repeat" in failed.value.details()
            # The other parts went: no record, no event; the page's WARC records wait for the repeat.
            assert await client.get([short, page]) == [None, None]
            assert short not in await stream_urls(client.js)
            assert page in warc_uris(warc)

            breakable.broken = False
            answer = await stub.Forget(request, timeout=30)
            assert (answer.records, answer.content_records, answer.events) == (0, content, 0)
            assert not [uri for uri in warc_uris(warc) if "site.test" in uri or "short.test" in uri]
            assert keep in warc_uris(warc)
    finally:
        await denylist.close()
        await files.close()
        await store.close()


async def test_a_forget_is_checked_before_anything_is_removed(crawled):
    settings, client, localweb, short, page, keep = crawled
    stub = stub_of(client)
    for request, said in (
            (metadata_pb2.ForgetRequest(domain="co.uk"), "public suffix"),
            (metadata_pb2.ForgetRequest(domain="https://site.test/"), "a URL in place of a domain"),
            (metadata_pb2.ForgetRequest(domain="10.0.0.1"), "IP address"),
            (metadata_pb2.ForgetRequest(), "name URLs, a domain, or both"),
            (metadata_pb2.ForgetRequest(urls=[short] * (settings.metadata_api.max_urls + 1)), "at most"),
            (metadata_pb2.ForgetRequest(urls=[short], reason="x" * 1001), "max_forget_reason_chars")):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.Forget(request, timeout=10)
        assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT and said in refused.value.details()
    assert (await client.get([short]))[0] is not None
