"""Forgetting a URL on the production stores (issue 39's "Done when"): the service (scheduler,
fetcher and metadata-api, as `up` runs them, on a real nats-server) keeps its metadata in real
Cassandra and its content log in real HDFS (tests/support/production_backends.py).

A short link redirecting to a page with a unique marker, an unrelated page and a third page are
crawled; the page is forgotten with MetadataService.Forget (the metadata-api on loopback is an
admin by default) while the scheduler's HDFS file holding its records is still being written (a
roll age of an hour: only the scheduler's seal on the denylist's change can free it). Then:

    - the ForgetResponse counts the record, the three content-log records (the short link's
      301, the page, its favicon) and the short link's event;
    - GetUrlMetadata answers neither URL; no row of any table of the keyspace names them or
      holds the marker; no record of the HDFS files, read back with warcio, is of them, and no
      decompressed byte holds the marker, while the unrelated page's record stays and its
      content_ref still reads; the events stream names neither;
    - both URLs submitted again end FORGOTTEN with no request to their origins, also after the
      roles restart on the same stores and NATS;
    - a forget by a metadata-api whose HDFS refuses connections answers UNAVAILABLE naming the
      content log, and the same forget repeated on the good one finishes the content log;
    - no file under data_dir nor the nats-server's store holds the marker.
"""
from __future__ import annotations

import asyncio
import gzip
import uuid
from urllib.parse import urlsplit

import grpc
import nats.js.errors
import pytest

from spiderduck.bus import streams as bus
from spiderduck.cli.nats_server import free_port
from spiderduck.core.urls import origin_of
from spiderduck.metadata_api.main import run_metadata_api
from spiderduck.stores.cassandra_cluster import apply_schema
from spiderduck.stores.hdfs_content import HdfsContentStore
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc
from support.production_backends import hdfs_folder, keyspace, keyspace_rows, warc_index  # noqa: F401 (fixtures)
from support.service import Client, RunningService, service_settings

pytestmark = pytest.mark.timeout(600)          # the JVMs' start is part of a test's time here

SHORT, PAGE, KEPT, LATER = "short-forget.test", "page-forget.test", "kept-forget.test", "later-forget.test"
HOUR = 3600


async def forget(address: str, url: str) -> metadata_pb2.ForgetResponse:
    async with grpc.aio.insecure_channel(address) as channel:
        return await metadata_pb2_grpc.MetadataServiceStub(channel).Forget(
            metadata_pb2.ForgetRequest(urls=[url], reason="GDPR art. 17"), timeout=120)


async def stream_events(js) -> list[bytes]:
    """The data of every message left in the events stream."""
    state = (await js.stream_info(bus.EVENTS_STREAM)).state
    out = []
    for seq in range(state.first_seq, state.last_seq + 1):
        try:
            out.append((await js.get_msg(bus.EVENTS_STREAM, seq)).data)
        except nats.js.errors.NotFoundError:
            pass                                 # erased
    return out


def naming(texts, *needles: str) -> list:
    """The texts (str or bytes) that hold one of `needles`."""
    def holds(text) -> bool:
        text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
        return any(needle in text for needle in needles)
    return [text for text in texts if holds(text)]


def hits(localweb, *hosts: str) -> int:
    return sum(len(localweb.hits_for(host)) for host in hosts)


async def test_a_page_forgotten_on_cassandra_and_hdfs_leaves_nothing(tmp_path, nats_server, localweb,
                                                                     keyspace, hdfs_folder):
    marker = f"forget-marker-{uuid.uuid4().hex}"
    page = localweb.page(PAGE, "/someone", f"<title>{marker}</title><p>{marker} lives here</p>")
    short = localweb.redirect(SHORT, "/s", page)
    kept = localweb.page(KEPT, "/", "<title>Kept</title><p>kept page</p>")
    later = localweb.page(LATER, "/", "<title>Later</title>")
    await apply_schema(keyspace)
    folder = hdfs_folder(roll_seconds=HOUR)     # sealed by the scheduler's seal on forget only
    settings = service_settings(tmp_path, nats_server.url, metadata_store=keyspace,
                                content_store=folder.store_url)
    gone = (SHORT, PAGE, marker)

    async with Client(settings) as client:
        async with RunningService(settings):
            for url in (short, kept, later):
                await client.submit_url(url)
            await client.events.wait_for(3, timeout=60)
            (kept_record,) = await client.get([kept])
            # The page's records are in the scheduler's file still being written.
            before = await asyncio.to_thread(folder.read_all)
            assert before and all(name.endswith(".inprogress") for name in before), list(before)
            uris = [r["uri"] for r in warc_index(before).values()]
            assert {short, page, origin_of(page) + "/favicon.ico"} <= set(uris)

            removed = await forget(settings.metadata_api.listen, page)
            assert (removed.records, removed.content_records, removed.events) == (1, 3, 1)
            assert await client.get([short, page]) == [None, None]

            tables = await keyspace_rows(keyspace)
            assert {"records", "resolutions", "aliases", "shares", "crawl_status"} <= set(tables)
            cells = [value for rows in tables.values() for row in rows for value in row.values()]
            assert naming(cells, *gone) == []
            assert naming(cells, KEPT)                       # the scan sees what is kept

            files = await asyncio.to_thread(folder.read_all)
            assert not [n for n in files if n.endswith(".inprogress")], list(files)   # sealed
            index = warc_index(files)
            assert naming([r["uri"] for r in index.values()], SHORT, PAGE) == []
            assert naming([gzip.decompress(data) for data in files.values()], marker) == []
            assert [r["uri"] for r in index.values() if r["uri"] == kept] == [kept]
            store = HdfsContentStore.from_url(folder.store_url)
            try:
                headers, block = await store.read(kept_record["content_ref"])
            finally:
                await store.close()
            assert headers["WARC-Target-URI"] == kept and b"kept page" in block

            events = await stream_events(client.js)
            assert naming(events, *gone) == [] and naming(events, KEPT)

            asked = hits(localweb, SHORT, PAGE)
            for url in (short, page):
                await client.submit_url(url)
            await client.events.wait_for(5, timeout=60)
        async with RunningService(settings):            # the same stores and NATS
            for url in (short, page):
                await client.submit_url(url)
            await client.events.wait_for(7, timeout=60)
            await forget_while_hdfs_refuses(tmp_path, settings, keyspace, folder, later)

    assert [e["status"] for e in client.events.for_url(short)] == ["OK", "FORGOTTEN", "FORGOTTEN"]
    assert [e["status"] for e in client.events.for_url(page)] == ["FORGOTTEN", "FORGOTTEN"]
    assert hits(localweb, SHORT, PAGE) == asked
    # Nor a byte of the page's marker (its title was in the short link's event) under data_dir
    # or in the nats-server's JetStream store.
    assert [p for p in tmp_path.rglob("*") if p.is_file() and marker.encode() in p.read_bytes()] == []


async def forget_while_hdfs_refuses(tmp_path, settings, keyspace, folder, later: str) -> None:
    """A second metadata-api on the same Cassandra and NATS, its content store on a port nothing
    listens on: its forget of `later` is UNAVAILABLE naming the content log; the repeat on the
    good metadata-api erases later's content-log records (its page and favicon)."""
    refused = urlsplit(folder.store_url)._replace(netloc=f"127.0.0.1:{free_port()}").geturl()
    bad = service_settings(tmp_path / "bad", settings.nats_url, metadata_store=keyspace,
                           content_store=refused)
    async with RunningService(bad, roles=(run_metadata_api,)):
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await forget(bad.metadata_api.listen, later)
    assert failed.value.code() is grpc.StatusCode.UNAVAILABLE
    assert "the content log" in failed.value.details(), failed.value.details()
    assert "the metadata store" not in failed.value.details()       # that part was done
    removed = await forget(settings.metadata_api.listen, later)
    assert (removed.records, removed.content_records, removed.events) == (0, 2, 0)
    index = warc_index(await asyncio.to_thread(folder.read_all))
    assert naming([r["uri"] for r in index.values()], LATER) == []
