"""bench/stores: the metadata and content stores, embedded against production, in one run.

Metadata: RECORDS records like a crawled page's (a redirect hop, title, description, image,
a little JSON-LD) written with `put` by CONCURRENCY writers, as the schedulers do, each shared
once (`add_share`, as every sighting is), then read with `get_many` (one URL a call, the
redirect's t.co URL as callers mostly ask, and batches of 20 as GetUrlMetadata asks) by
CONCURRENCY readers: SQLite (a file in a temporary folder) and Cassandra (one node on loopback).

Content: WARC appends of page-sized bodies (the ../shared corpus pages when present, else
synthetic HTML) by CONCURRENCY writers: the local disk store and HDFS (a mini HDFS on loopback:
one NameNode, one DataNode, replication 1).

Per store: operations per second and the p50/p99 of one operation's latency. Beside them, the
bare floors: cassandra-driver alone, with the store's cluster settings (one prepared INSERT of a
record's bytes into a records row a call, timed in slices alternating with the Cassandra store's
puts, and one prepared SELECT of such a row by key, alternating with its get_many(1 URL); the
node warmed up first), with the store's put and get_many(1 URL) as fractions of them, and each
Cassandra phase's requests per operation (what the store sent through its driver session); and
the `hdfs` client appending one record per WebHDFS call (what the HDFS store did before it batched). The Cassandra
node and the mini HDFS are started from the jars the tests use (tests/support/*_server.py) and
their start-up times printed; `--cassandra HOST:PORT` or `--hdfs http://NN:PORT?user=U` use
running ones instead. One process, one event loop (uvloop), like a service's.
"""
from __future__ import annotations

import argparse
import asyncio
import dataclasses
import pathlib
import random
import sys
import tempfile
import time
import uuid

ROOT = pathlib.Path(__file__).resolve().parents[1]
import tree  # noqa: E402
tree.use_this_tree()
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
from pipeline_bench import percentile                                     # noqa: E402

from spiderduck.core.record import Image, Redirect, UrlRecord                      # noqa: E402
from spiderduck.core.status import Status                                          # noqa: E402
from spiderduck.stores.content import FetchedContent                          # noqa: E402
from spiderduck.stores.open import open_content_store, open_metadata_store    # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"


def page_record(n: int) -> tuple[str, UrlRecord, list[str]]:
    final = f"https://site{n % 300}.test/articles/{n}/a-title-of-some-length"
    url = f"https://t.co/{n:010d}"
    rec = UrlRecord(
        url=url, status=Status.OK, canonical_url=final, final_url=final, http_status=200,
        redirects=(Redirect(url=url, http_status=301),), content_type="text/html", charset="utf-8",
        title=f"A headline of ordinary length, number {n}",
        description="A description of a page as publishers write them, a sentence or two " * 3,
        site_name=f"Site {n % 300}", author="A. Writer", published_time="2026-11-01T10:00:00Z",
        lang="en", image=Image(url=f"https://site{n % 300}.test/img/{n}.jpg", width=1200, height=630),
        favicon=f"https://site{n % 300}.test/favicon.ico", type="article",
        structured_data={"@context": "https://schema.org", "@type": "NewsArticle",
                         "headline": f"A headline {n}", "datePublished": "2026-11-01"},
        fetched_at=time.time(), first_seen=time.time(), content_length=48_000)
    return final, rec, [url, final]


def bodies(count: int) -> list[bytes]:
    pages = sorted(CORPUS.rglob("*.html"))[:count] if CORPUS.is_dir() else []
    if pages:
        return [p.read_bytes() for p in pages]
    rnd = random.Random(1)
    words = [f"w{rnd.randrange(5000)}" for _ in range(20000)]
    return [("<html><body>" + " ".join(rnd.sample(words, 6000)) + "</body></html>").encode()
            for _ in range(count)]


async def timed(concurrency: int, jobs: list, run) -> tuple[float, list[float]]:
    """Run `run(job)` for every job, `concurrency` at a time: (seconds, latencies in ms)."""
    latencies: list[float] = []
    queue = list(reversed(jobs))

    async def worker():
        while queue:
            job = queue.pop()
            t = time.perf_counter()
            await run(job)
            latencies.append((time.perf_counter() - t) * 1000)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started, latencies


def row(store: str, what: str, n: int, seconds: float, lat: list[float], unit: str = "ops") -> str:
    return (f"{store:<10} {what:<22} {n / seconds:>10,.0f} {unit}/s   p50 {percentile(lat, 50):7.2f} ms"
            f"   p99 {percentile(lat, 99):7.2f} ms   ({n:,} in {seconds:.1f}s)")


SLICES = 5     # the store's calls and the bare floor's alternate in this many slices each


async def side_by_side(concurrency: int, jobs: list, run, bare_jobs: list, bare_run):
    """((seconds, latencies) of the store, the same of the bare floor), the two timed in
    alternating slices, so that the machine's drift and the node's background work (flushes,
    compactions) fall on both alike."""
    store, bare = (0.0, []), (0.0, [])
    for i in range(SLICES):
        seconds, lat = await timed(concurrency, bare_jobs[i::SLICES], bare_run)
        bare = (bare[0] + seconds, bare[1] + lat)
        seconds, lat = await timed(concurrency, jobs[i::SLICES], run)
        store = (store[0] + seconds, store[1] + lat)
    return store, bare


class Requests:
    """Counts the requests a Cassandra store sends (each execute_async of its driver session: a
    batch is one), so that each phase's line says what an operation costs in requests."""

    def __init__(self, store):
        self.sent = 0
        session = getattr(store, "_session", None)
        if session is None:
            self.per = lambda before, n: ""
            return
        send = session.execute_async

        def counted(*args, **kwargs):
            self.sent += 1
            return send(*args, **kwargs)
        session.execute_async = counted
        self.per = lambda before, n: f"   {(self.sent - before) / n:.2f} requests/op"


async def bench_metadata(name: str, url: str, records: int, concurrency: int,
                         bare: "BareCassandra | None" = None) -> list[str]:
    """The lines of one store. With `bare`, its INSERTs alternate with the puts and its SELECTs
    with the get_many(1 URL) calls (side_by_side), and the ratios follow. get_many(1 URL) asks
    the t.co URL (a redirect: its key is another URL), get_many(1 key URL) the final URL (its
    own key, as a URL that does not redirect is)."""
    store = await open_metadata_store(url)
    items = [page_record(n) for n in range(records)]
    singles = [[it[2][0]] for it in items]
    random.Random(2).shuffle(singles)
    finals = [[it[0]] for it in items]
    random.Random(3).shuffle(finals)
    out = []
    sent = Requests(store)
    async with store:
        put = lambda it: store.put(it[0], it[1], it[2])                            # noqa: E731
        before = sent.sent
        if bare is None:
            seconds, lat = await timed(concurrency, items, put)
        else:
            (seconds, lat), floor = await side_by_side(concurrency, items, put,
                                                       bare.rows, bare.insert)
            out.append(row("bare", "driver INSERT record", records, *floor, "writes"))
        out.append(row(name, "put", records, seconds, lat, "writes") + sent.per(before, records))
        ratios = [f"put / bare INSERT {floor[0] / seconds:.2f}x"] if bare else []
        before = sent.sent
        seconds, lat = await timed(concurrency, items, lambda it: store.add_share(it[0]))
        out.append(row(name, "add_share", records, seconds, lat, "shares")
                   + sent.per(before, records))
        # get_many_wire(1 URL): what GetUrlMetadata reads for one URL (the stored bytes, no
        # record decoded), as the bare SELECT reads them.
        for what, asks, call in (("get_many(1 URL)", singles, store.get_many),
                                 ("get_many(1 key URL)", finals, store.get_many),
                                 ("get_many_wire(1 URL)", singles, store.get_many_wire)):
            before = sent.sent
            if bare is None:
                seconds, lat = await timed(concurrency, asks, call)
            else:
                (seconds, lat), floor = await side_by_side(concurrency, asks, call,
                                                           bare.keys, bare.select)
                out.append(row("bare", "driver SELECT record", records, *floor, "reads"))
                ratios.append(f"{what} / bare SELECT {floor[0] / seconds:.2f}x")
            out.append(row(name, what, records, seconds, lat, "reads") + sent.per(before, records))
        batches = [[items[(b * 20 + i) * 7 % records][2][0] for i in range(20)]
                   for b in range(records // 20)]
        for what, call in (("get_many(20 URLs)", store.get_many),
                           ("get_many_wire(20)", store.get_many_wire)):
            before = sent.sent
            seconds, lat = await timed(concurrency, batches, call)
            out.append(row(name, what, len(batches) * 20, seconds, lat, "URLs")
                       + sent.per(before, len(batches) * 20))
    if ratios:
        out.append(f"{name:<10} " + ", ".join(ratios))
    return out


class BareCassandra:
    """The floor: cassandra-driver alone, with the store's cluster settings (consistency,
    routing, rows as dicts), one prepared single-partition request a call: an INSERT of a
    record's protobuf bytes (as the store's put writes them) into a records row of its own, and
    a SELECT of such a row by key. What the store sends for the same work: a put is one unlogged
    batch (the record row, its `earliest`, an alias and a resolution row per URL); a get_many of
    one URL two reads, URL -> key, then the record row (the `requests/op` column)."""

    def __init__(self, url: str, records: int):
        from spiderduck.wire import record_proto
        self.url = url
        self.rows = [(f"bare:{key}", record_proto.to_bytes(dataclasses.replace(rec, first_seen=0.0)))
                     for key, rec, _ in (page_record(n) for n in range(records))]
        self.keys = [key for key, _ in self.rows]
        random.Random(2).shuffle(self.keys)
        self._fetched = round(time.time() * 1000)

    async def __aenter__(self) -> "BareCassandra":
        from spiderduck.stores.cassandra_cluster import CassandraOptions, connect
        options = CassandraOptions.from_url(self.url)
        self._cluster, self._session = await connect(options)
        self._insert = self._session.prepare(
            f"INSERT INTO {options.keyspace}.records (key, record_pb, fetched_at) VALUES (?, ?, ?)")
        self._select = self._session.prepare(
            f"SELECT record_pb, fetched_at FROM {options.keyspace}.records WHERE key = ?")
        return self

    async def __aexit__(self, *exc) -> None:
        await asyncio.to_thread(self._cluster.shutdown)

    def _call(self, statement, params):
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        response = self._session.execute_async(statement, params)
        response.add_callbacks(
            lambda rows: loop.call_soon_threadsafe(future.set_result, rows),
            lambda exc: loop.call_soon_threadsafe(future.set_exception, exc))
        return future

    async def warm_up(self, concurrency: int, count: int) -> None:
        """The node's JIT warmed by `count` INSERTs and SELECTs (not timed), before any phase."""
        rows = [(f"warm:{key}", data) for key, data in self.rows[:count]]
        await timed(concurrency, rows, lambda r: self._call(self._insert, (r[0], r[1], 0)))
        await timed(concurrency, rows, lambda r: self._call(self._select, (r[0],)))

    def insert(self, record: tuple[str, bytes]):
        return self._call(self._insert, (record[0], record[1], self._fetched))

    def select(self, key: str):
        return self._call(self._select, (key,))


async def bench_content(name: str, url: str, appends: int, concurrency: int) -> list[str]:
    pages = bodies(200)
    items = [FetchedContent(url=f"https://site.test/{n}", http_status=200,
                            headers=(("Content-Type", "text/html; charset=utf-8"),),
                            body=pages[n % len(pages)], fetched_at=time.time())
             for n in range(appends)]
    store = await open_content_store(url)
    async with store:
        seconds, lat = await timed(concurrency, items, store.append)
    mib = sum(len(i.body) for i in items) / 2**20
    return [row(name, "WARC append", appends, seconds, lat, "records") +
            f"   {mib / seconds:.1f} MiB/s of bodies"]


async def bare_hdfs(webhdfs: str, appends: int) -> list[str]:
    """The floor without batching: the `hdfs` client appending one compressed record per
    WebHDFS call to one file, as our store did before it batched."""
    import hdfs
    from spiderduck.stores.content import warc_record
    netloc, _, query = webhdfs.removeprefix("http://").partition("?")
    client = hdfs.InsecureClient(f"http://{netloc}", user=query.removeprefix("user="))
    path = f"/tmp/bench-bare-{uuid.uuid4().hex[:8]}.warc.gz"
    pages = bodies(200)
    data = [warc_record(FetchedContent(url=f"https://site.test/{n}", http_status=200, headers=(),
                                       body=pages[n % len(pages)], fetched_at=time.time()))
            for n in range(appends)]

    def write(n: int) -> None:
        client.write(path, data=data[n], append=n > 0)

    lat = []
    started = time.perf_counter()
    for n in range(appends):
        t = time.perf_counter()
        await asyncio.to_thread(write, n)
        lat.append((time.perf_counter() - t) * 1000)
    seconds = time.perf_counter() - started
    client.delete(path)
    return [row("bare", "WebHDFS append each", appends, seconds, lat, "records")]


async def main(args) -> None:
    import uvloop
    uvloop.install()
    servers, lines = [], []
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="spiderduck-bench-stores-"))
    try:
        cassandra, hdfs_url = args.cassandra, args.hdfs
        if not cassandra:
            from support.cassandra_server import CassandraServer, resolve, version
            t = time.monotonic()
            server = CassandraServer(resolve(), heap="1g").start()
            servers.append(server)
            cassandra = server.target
            lines.append(f"Cassandra {server.release_version} (cassandra-all {version()}) "
                         f"started in {time.monotonic() - t:.1f}s")
        if not hdfs_url:
            from support.hdfs_server import HdfsServer, resolve, version
            t = time.monotonic()
            server = HdfsServer(resolve()).start()
            servers.append(server)
            hdfs_url = server.url
            lines.append(f"HDFS {version()} (mini cluster) started in {time.monotonic() - t:.1f}s")
        keyspace = f"bench_{uuid.uuid4().hex[:8]}"
        cassandra_url = f"cassandra://{cassandra}/{keyspace}"
        from spiderduck.stores.cassandra_cluster import apply_schema
        await apply_schema(cassandra_url)
        netloc, _, query = hdfs_url.removeprefix("http://").partition("?")
        hdfs_store = f"hdfs://{netloc}/tmp/bench-{uuid.uuid4().hex[:8]}?{query}"
        print("\n".join(lines), flush=True)
        print(f"{args.records:,} records / {args.appends:,} appends, {args.concurrency} at a time",
              flush=True)
        for line in await bench_metadata("sqlite", f"sqlite:///{tmp}/meta.db", args.records,
                                         args.concurrency):
            print(line, flush=True)
        async with BareCassandra(cassandra_url, args.records) as bare:
            await bare.warm_up(args.concurrency, min(args.records, 2000))
            for line in await bench_metadata("cassandra", cassandra_url, args.records,
                                             args.concurrency, bare):
                print(line, flush=True)
        for line in await bench_content("disk", f"file://{tmp}/content", args.appends,
                                        args.concurrency):
            print(line, flush=True)
        for line in await bench_content("hdfs", hdfs_store, args.appends, args.concurrency):
            print(line, flush=True)
        for line in await bare_hdfs(hdfs_url, min(args.appends, 300)):
            print(line, flush=True)
    finally:
        for server in servers:
            server.stop()
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--cassandra", default="", help="HOST:PORT of a running Cassandra")
    parser.add_argument("--hdfs", default="", help="http://NAMENODE:PORT?user=U of a running HDFS")
    asyncio.run(main(parser.parse_args()))
