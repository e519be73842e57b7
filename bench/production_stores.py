"""bench/pipeline --production: the production stores it runs the service on (a Cassandra node and
a mini HDFS from the tests' jars, or running ones), and what the service asked of Cassandra,
read from its own /metrics (`spiderduck_cassandra_requests_total{statement}`, counted in the
service's metadata store)."""
from __future__ import annotations

import pathlib
import sys
import time

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

ROOT = pathlib.Path(__file__).resolve().parent.parent
REQUESTS = "spiderduck_cassandra_requests"


def start_production(args, lines: list[str]) -> tuple[list, str, str]:
    """(servers started, Cassandra HOST:PORT, WebHDFS URL): from --cassandra/--hdfs, else a
    Cassandra node and a mini HDFS from the tests' jars (tests/support)."""
    sys.path.insert(0, str(ROOT / "tests"))
    servers, cassandra, hdfs_url = [], args.cassandra, args.hdfs
    if not cassandra:
        from support.cassandra_server import CassandraServer, resolve
        t = time.monotonic()
        servers.append(CassandraServer(resolve(), heap="1g").start())
        cassandra = servers[-1].target
        lines.append(f"Cassandra {servers[-1].release_version} started in {time.monotonic() - t:.1f}s")
    if not hdfs_url:
        from support.hdfs_server import HdfsServer, resolve as resolve_hdfs
        t = time.monotonic()
        servers.append(HdfsServer(resolve_hdfs()).start())
        hdfs_url = servers[-1].url
        lines.append(f"HDFS (mini cluster) started in {time.monotonic() - t:.1f}s")
    return servers, cassandra, hdfs_url


async def cassandra_requests(listen: str) -> dict[str, float]:
    """The service's Cassandra requests so far by statement, from its /metrics at `listen`
    (host:port; empty: not served, nothing counted)."""
    if not listen:
        return {}
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://{listen}/metrics", timeout=aiohttp.ClientTimeout(total=10)) as resp:
            resp.raise_for_status()
            text = await resp.text()
    return {sample.labels["statement"]: sample.value
            for family in text_string_to_metric_families(text) if family.name == REQUESTS
            for sample in family.samples if sample.name == REQUESTS + "_total"}


def requests_line(before: dict[str, float], after: dict[str, float], urls: int) -> str:
    """Requests per URL between two readings, in all and by statement (most first)."""
    moved = {name: after[name] - before.get(name, 0.0) for name in after}
    moved = {name: n for name, n in sorted(moved.items(), key=lambda item: -item[1]) if n}
    if not moved:
        return "Cassandra requests per URL: none counted (no /metrics, or no Cassandra store)"
    urls = max(urls, 1)
    return (f"Cassandra requests per URL: {sum(moved.values()) / urls:.2f} (by statement: "
            + ", ".join(f"{name} {n / urls:.2f}" for name, n in moved.items()) + ")")
