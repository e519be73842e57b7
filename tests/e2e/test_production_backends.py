"""The whole service on its production backends: real Cassandra 5.0 keeps the metadata, real HDFS
3.4 the WARC content (tests/support/cassandra_server.py, hdfs_server.py; the JVMs are started
once for this module by the `cassandra_target` and `hdfs_cluster` fixtures, or name external
ones with SPIDERDUCK_TEST_CASSANDRA / SPIDERDUCK_TEST_HDFS).

    - a small local web crawled end to end: every URL answered by GetUrlMetadata, each
      content_ref locating its WARC record in HDFS, and the sealed WARC files read back by
      warcio with every fetched URL in them;
    - a Cassandra node stopped while URLs are in flight and more are submitted, then started
      again on the same port and data: every URL ends stored and answered, none dead-lettered.
"""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from urllib.parse import urlsplit

import grpc
import pytest
from aiohttp import web

from spiderduck.bus import streams as bus
from spiderduck.core.urls import origin_of
from support.production_backends import hdfs_folder, keyspace, metadata_store_url, warc_index  # noqa: F401 (fixtures)
from support.service import Client, RunningService, service_settings, wait_until

pytestmark = pytest.mark.timeout(600)          # the JVMs' start is part of a test's time here


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spiderduck.cli.main", *args],
                          capture_output=True, text=True, timeout=120)


def metric(name: str, **labels: str) -> float:
    from prometheus_client import REGISTRY
    return REGISTRY.get_sample_value(name, labels) or 0.0


# --- 1. end to end ------------------------------------------------------------------------------

STORY = """<!doctype html><html lang="en"><head><title>The Story</title>
<meta name="description" content="All about the story.">
<link rel="canonical" href="/story">
<meta property="og:site_name" content="News Test"></head><body><p>hi</p></body></html>"""
POST = """<html lang="fr"><head><title>Post {n}</title>
<meta property="og:description" content="Le billet {n}."></head><body>{filler}</body></html>"""
ITEM = """<html lang="de"><head><meta property="og:title" content="Widget">
<meta property="og:site_name" content="Shop"><title>ignored</title></head><body></body></html>"""


async def test_a_local_web_crawled_onto_cassandra_and_hdfs(tmp_path, nats_server, localweb,
                                                            keyspace, hdfs_folder):
    web_ = localweb
    story = web_.page("news.test", "/story", STORY)
    mid = web_.redirect("mid.test", "/b", story, status=302)
    short = web_.redirect("short.test", "/a", mid, status=301)
    # Bodies of some size, so the small roll_bytes below gives several WARC files.
    posts = [web_.page("blog.test", f"/post/{n}", POST.format(n=n, filler=f"word{n} " * 300))
             for n in range(1, 4)]
    item = web_.page("shop.test", "/item", ITEM)
    missing = web_.url("news.test", "/missing")                 # 404
    web_.robots("closed.test", "User-agent: *\nDisallow: /private\n")
    web_.page("closed.test", "/private/page", "<title>secret</title>")
    closed = web_.url("closed.test", "/private/page")

    # The schema through the real command, as an operator applies it before the first start.
    applied = await asyncio.to_thread(run_cli, "schema", "apply", "--set",
                                      f"metadata_store={keyspace}")
    assert applied.returncode == 0, applied.stderr
    folder = hdfs_folder(roll_bytes=2048)
    settings = service_settings(tmp_path, nats_server.url, metadata_store=keyspace,
                                content_store=folder.store_url)

    submitted = [short, *posts, item, missing, closed]
    async with RunningService(settings), Client(settings) as client:
        await client.submit_url(short)
        await client.publish(posts[0])                                  # a bare URL
        await client.publish(json.dumps({"urls": [posts[1], posts[2], item]}))   # split in 3
        await client.submit_url(missing)
        await client.submit_url(closed)
        await client.events.wait_for(len(submitted), timeout=60)
        asked = [short, mid, story, *posts, item, missing, closed]
        records = dict(zip(asked, await client.get(asked)))
        assert await client.get([web_.url("news.test", "/never-seen")]) == [None]
        assert await client.dead_letters() == []
    for url in submitted:
        assert [e["resolution"] for e in client.events.for_url(url)] == ["CRAWLED"], url

    chain = records[short]
    assert chain["status"] == "OK" and chain["http_status"] == 200
    assert chain["final_url"] == story and chain["canonical_url"] == story
    assert chain["title"] == "The Story" and chain["description"] == "All about the story."
    assert chain["site_name"] == "News Test" and chain["lang"] == "en"
    assert chain["redirects"] == [{"url": short, "http_status": 301}, {"url": mid, "http_status": 302}]
    assert chain["content_type"].startswith("text/html")
    # Every URL of the chain finds the one record, which names the URL asked for.
    assert records[mid] == {**chain, "url": mid} and records[story] == {**chain, "url": story}
    for n, url in enumerate(posts, 1):
        assert records[url]["status"] == "OK", records[url]
        assert (records[url]["title"], records[url]["description"], records[url]["lang"]) == (
            f"Post {n}", f"Le billet {n}.", "fr")
    assert (records[item]["title"], records[item]["site_name"], records[item]["lang"]) == (
        "Widget", "Shop", "de")
    assert records[missing]["status"] == "HTTP_ERROR" and records[missing]["http_status"] == 404
    assert records[closed]["status"] == "ROBOTS_DISALLOWED" and not records[closed].get("content_ref")
    assert web_.hits_for("closed.test", "/private/page") == []

    # The service is stopped: every WARC file is sealed (none left in progress) and whole.
    names = await asyncio.to_thread(folder.names)
    assert not [n for n in names if n.endswith(".inprogress")], names
    warcs = [n for n in names if n.endswith(".warc.gz")]
    assert warcs == names and len(warcs) >= 2, names             # roll_bytes rolled them
    index = warc_index({name: await asyncio.to_thread(folder.read, name) for name in warcs})
    fetched = [short, mid, story, *posts, item, missing,         # robots.txt is the fetcher's
               *{origin_of(u) + "/favicon.ico" for u in (story, *posts, item)}]   # the pages name no icon
    assert sorted(r["uri"] for r in index.values()) == sorted(fetched)
    assert {r["type"] for r in index.values()} == {"response"}

    # Each record's content_ref is exactly one record of those files, and the store reads it.
    from spiderduck.stores.hdfs_content import HdfsContentStore
    from spiderduck.stores.warc_rolling import ContentRef
    store = HdfsContentStore.from_url(folder.store_url)
    try:
        for url in (short, *posts, item, missing):
            record = records[url]
            ref = ContentRef.parse(record["content_ref"])
            found = index[(ref.path, ref.offset, ref.length)]
            assert found["uri"] == record["final_url"] and found["status"] == record["http_status"]
            headers, block = await store.read(record["content_ref"])
            assert headers["WARC-Target-URI"] == record["final_url"]
            assert block.endswith(found["body"])
    finally:
        await store.close()
    assert b"The Story" in index[next(k for k, r in index.items() if r["uri"] == story)]["body"]


# --- 2. a Cassandra node restarted mid-run -------------------------------------------------------

@pytest.fixture
def own_cassandra():
    """A Cassandra node of this test's own (the module's is shared, and this one is stopped and
    started again): skipped where the jars or java are missing."""
    from support.cassandra_server import CassandraServer, resolve
    from support.maven_backend import BackendUnavailable
    try:
        server = CassandraServer(resolve()).start()
    except BackendUnavailable as missing:
        pytest.skip(f"Cassandra unavailable: {missing}")
    yield server
    server.stop()


async def test_a_cassandra_restart_mid_run_loses_no_url(tmp_path, nats_server, localweb,
                                                       hdfs_folder, own_cassandra):
    from spiderduck.stores.cassandra_cluster import apply_schema
    cassandra = own_cassandra
    gate = asyncio.Event()

    async def held(request):                     # in flight at the origin until the gate opens
        await gate.wait()
        return web.Response(text=f"<title>held {request.host.split(':')[0]}{request.path}</title>",
                            content_type="text/html")

    before = [localweb.page(f"before{n}.test", "/", f"<title>before {n}</title>") for n in range(3)]
    in_flight = [localweb.route(f"flight{n % 3}.test", f"/{n}", held) for n in range(6)]
    while_down = [localweb.page(f"down{n % 3}.test", f"/{n}", f"<title>down {n}</title>")
                  for n in range(6)]
    title = {**{u: f"before {n}" for n, u in enumerate(before)},
             **{u: f"held flight{n % 3}.test/{n}" for n, u in enumerate(in_flight)},
             **{u: f"down {n}" for n, u in enumerate(while_down)}}

    metadata_store = metadata_store_url(cassandra.target)
    await apply_schema(metadata_store)
    folder = hdfs_folder()
    settings = service_settings(tmp_path, nats_server.url, **{
        "metadata_store": metadata_store, "content_store": folder.store_url,
        # Were an outage counted as failed deliveries (max_deliver of them, retry_delay apart,
        # the last dead-lettered), these URLs would be lost within half a second of it.
        "scheduler.max_deliver": 2, "scheduler.retry_delay": 0.2,
        "scheduler.outage_backoff_base": 0.2, "scheduler.outage_backoff_max": 1.0,
        "fetcher.total_timeout": 60.0})
    held_messages = len(in_flight) + len(while_down) + 1

    async with RunningService(settings), Client(settings) as client:
        async def consumer():
            return await client.js.consumer_info(bus.URLS_STREAM, bus.SCHEDULER_DURABLE)

        for url in before:
            await client.submit_url(url)
        await client.events.wait_for(len(before), timeout=60)
        for url in in_flight:
            await client.submit_url(url)

        async def all_requested():
            return all(localweb.hits_for(urlsplit(u).hostname, urlsplit(u).path) for u in in_flight)
        await wait_until(all_requested, 30, "every held page requested at its origin")

        stopping = time.monotonic()
        await asyncio.to_thread(cassandra.stop, keep=True, graceful=60)     # SIGTERM: drained
        stopped = time.monotonic()
        gate.set()                       # the held crawls finish now, with the store gone
        retries = metric("spiderduck_scheduler_messages_total", outcome="outage_retried")
        for url in while_down:
            await client.submit_url(url)
        await client.submit_url(before[0])        # seen before: FRESH once the store is back

        async def all_held_through_the_outage():
            """Every message not yet done is held by the scheduler (none waiting in the stream),
            none was redelivered, and they were retried in place 3 times each on average."""
            info = await consumer()
            # Counting the outage as deliveries (the old way) fails here, or dead-letters.
            assert info.num_redelivered == 0, "the outage used up a message's delivery"
            grew = metric("spiderduck_scheduler_messages_total", outcome="outage_retried") - retries
            return (info.num_pending == 0 and info.num_ack_pending == held_messages
                    and grew >= 3 * held_messages)
        await wait_until(all_held_through_the_outage, 60,
                         "every message held by the scheduler and retried through the outage")
        assert len(client.events.items) == len(before)
        down_for = time.monotonic() - stopped

        await asyncio.to_thread(cassandra.start)                    # same port, same data
        up = time.monotonic()
        submitted = before + in_flight + while_down + [before[0]]
        await client.events.wait_for(len(submitted), timeout=120)
        processed = time.monotonic() - up
        urls = before + in_flight + while_down

        async def answered():
            # The metadata API answers UNAVAILABLE until its own Cassandra session is back.
            try:
                return await client.get(urls)
            except grpc.aio.AioRpcError as exc:
                if exc.code() is not grpc.StatusCode.UNAVAILABLE:
                    raise
                return None
        records = dict(zip(urls, await wait_until(answered, 120, "GetUrlMetadata answering",
                                                  every=0.25)))
        answering = time.monotonic() - up
        dead = await client.dead_letters()
        info = await consumer()
    fetches = sum(len(localweb.hits_for(urlsplit(u).hostname, urlsplit(u).path)) for u in in_flight)
    print(f"\ncassandra: graceful stop {stopped - stopping:.1f}s, down {down_for:.1f}s more, "
          f"restart {up - stopped - down_for:.1f}s; then every URL processed in {processed:.1f}s, "
          f"GetUrlMetadata answering in {answering:.1f}s; {fetches} fetches of the "
          f"{len(in_flight)} pages in flight", file=sys.stderr)     # shown with pytest -s

    assert dead == []
    assert info.num_ack_pending == 0 and info.num_pending == 0
    for url in urls:
        record = records[url]
        assert record is not None and record["status"] == "OK", (url, record)
        assert record["title"] == title[url]
        assert record["content_ref"]
    for url in in_flight + while_down + before[1:]:
        assert [e["resolution"] for e in client.events.for_url(url)] == ["CRAWLED"], url
    assert [e["resolution"] for e in client.events.for_url(before[0])] == ["CRAWLED", "FRESH"]
    assert records[before[0]]["share_count"] == 2     # the sighting during the outage counted
