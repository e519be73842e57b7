"""Stopping with real signals, under load: `up` and each role, as an operator (or Kubernetes) does.

A slow origin holds every fetch. SIGINT/SIGTERM must stop intake, hand back what is in flight
(nak), and exit 0 within shutdown_grace, with no traceback; a second signal exits at once. Every
URL submitted before the stop is processed exactly once after the service comes back.
"""
from __future__ import annotations

import asyncio
import signal
import subprocess
import time

import grpc
import pytest
import yaml
from aiohttp import web

from spiderduck.cli.nats_server import free_port, process_gone
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc
from support.cli import CLI, Proc
from support.service import Client, service_settings, wait_port

GRACE = 3.0          # shutdown_grace in these tests
SLACK = 4.0          # on top of it: interpreter exit, a loaded machine
URLS = 24


class SlowOrigin:
    """Pages that answer only once released; counts the requests that reached it."""

    def __init__(self, localweb, n: int):
        self.release = asyncio.Event()
        self.arrived = 0
        self._changed = asyncio.Condition()
        self.urls = [localweb.route(f"slow{i}.test", "/", self._page) for i in range(n)]

    async def _page(self, request):
        async with self._changed:
            self.arrived += 1
            self._changed.notify_all()
        await self.release.wait()
        return web.Response(text=f"<title>{request.host}</title>", content_type="text/html")

    async def wait_arrived(self, n: int, timeout: float = 60) -> None:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: self.arrived >= n), timeout)


def write_config(tmp_path, settings, **extra) -> str:
    path = tmp_path / f"spiderduck-{time.monotonic_ns()}.yaml"
    tree = {
        "data_dir": settings.data_dir,
        "nats_url": settings.nats_url,
        "shutdown_grace": GRACE,
        "metadata_api": {"listen": settings.metadata_api.listen},
        "fetcher": {"listen": settings.fetcher.listen, "allowed_networks": ["127.0.0.0/8"],
                    "dns_overrides": {"*.test": "127.0.0.1"}, "default_rate": 50,
                    "total_timeout": 60, "lease_ttl": 3, "lease_margin": 1},
        "scheduler": {"ack_wait": 30, "retry_delay": 0.2, "hop_timeout": 90},
        "process": {"workers": 1},
    }
    for key, value in extra.items():
        tree[key] = value
    path.write_text(yaml.safe_dump(tree))
    return str(path)


def assert_clean(proc: Proc, took: float) -> None:
    assert proc.proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-5000:]
    assert took < GRACE + SLACK, f"took {took:.1f}s"


async def assert_each_processed_once(client: Client, urls: list[str], timeout: float = 90) -> None:
    events = await client.events.wait_for(len(urls), timeout=timeout)
    by_url = {u: [e for e in events if e["url"] == u] for u in urls}
    assert all(len(v) == 1 for v in by_url.values()), {u: len(v) for u, v in by_url.items()}
    assert {e["status"] for e in events} == {"OK"}, events


async def test_up_stops_within_grace_under_load_and_loses_nothing(tmp_path, nats_server, localweb):
    origin = SlowOrigin(localweb, URLS)
    settings = service_settings(tmp_path, nats_server.url)
    config = write_config(tmp_path, settings)
    async with Client(settings) as client:
        for url in origin.urls:
            await client.submit_url(url)
        up = Proc(tmp_path, "up", "--config", config)
        try:
            await origin.wait_arrived(URLS // 2)          # fetches are held at the origin now
            took = await up.stop(signal.SIGINT, GRACE + SLACK)
        finally:
            up.kill()
        assert_clean(up, took)
        assert client.events.items == []                   # none finished: all went back
        origin.release.set()
        again = Proc(tmp_path, "up", "--config", config)
        try:
            try:
                await assert_each_processed_once(client, origin.urls)
            except TimeoutError:
                info = await client.js.consumer_info("SPIDERDUCK_URLS", "scheduler")
                pytest.fail(f"{len(client.events.items)} events; {info}; first up:\n{up.stderr[-4000:]}\n"
                            f"second up:\n{again.stderr[-4000:]}")
            took = await again.stop(signal.SIGTERM, GRACE + SLACK)
            assert_clean(again, took)
        finally:
            again.kill()


async def test_a_second_signal_exits_at_once(tmp_path, localweb):
    """With the embedded NATS: a long grace, a first SIGINT, then a second one; its
    nats-server goes with it."""
    origin = SlowOrigin(localweb, 4)
    data_dir = tmp_path / "var"
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({
        "data_dir": str(data_dir), "shutdown_grace": "60s",
        "metadata_api": {"listen": f"127.0.0.1:{free_port()}"},
        "fetcher": {"listen": f"127.0.0.1:{free_port()}", "allowed_networks": ["127.0.0.0/8"],
                    "dns_overrides": {"*.test": "127.0.0.1"}, "total_timeout": 120},
        "process": {"workers": 1}}))
    up = Proc(tmp_path, "up", "--config", str(config))
    try:
        await up.wait_log("serving every shard")
        submit = await asyncio.create_subprocess_exec(*CLI, "submit", *origin.urls, "--config", str(config),
                                                      stderr=subprocess.PIPE)
        _, err = await asyncio.wait_for(submit.communicate(), 60)
        assert submit.returncode == 0, err
        await origin.wait_arrived(1)
        nats_pid = int((data_dir / "nats" / "nats-server.pid").read_text())
        up.proc.send_signal(signal.SIGINT)
        await up.wait_log("SIGINT: stopping")
        started = time.monotonic()
        up.proc.send_signal(signal.SIGINT)
        took = await up.wait_exit(started, timeout=SLACK)
    finally:
        up.kill()
        origin.release.set()
    assert up.proc.returncode == 130, up.stderr[-3000:]
    assert "SIGINT again: exiting now" in up.stderr
    assert took < SLACK
    deadline = time.monotonic() + 10
    while not process_gone(nats_pid):
        assert time.monotonic() < deadline, "the embedded nats-server outlived `up`"
        await asyncio.sleep(0.05)


async def test_each_role_stops_within_grace_under_load(tmp_path, nats_server, localweb):
    """The deployment's three roles as processes: scheduler, fetcher, then metadata-api get
    SIGTERM mid-load; each exits 0 in time, and once they are back nothing is lost."""
    origin = SlowOrigin(localweb, URLS)
    settings = service_settings(tmp_path, nats_server.url)
    config = write_config(tmp_path, settings)
    procs = {name: Proc(tmp_path, name, "--config", config)
             for name in ("fetcher", "metadata-api", "scheduler")}
    try:
        async with Client(settings) as client:
            await wait_port(settings.fetcher.listen, 60)
            await wait_port(settings.metadata_api.listen, 60)
            for url in origin.urls:
                await client.submit_url(url)
            await origin.wait_arrived(URLS // 2)

            took = await procs["scheduler"].stop(timeout=GRACE + SLACK)
            assert_clean(procs["scheduler"], took)
            procs["scheduler"] = Proc(tmp_path, "scheduler", "--config", config)

            took = await procs["fetcher"].stop(timeout=GRACE + SLACK)
            assert_clean(procs["fetcher"], took)
            procs["fetcher"] = Proc(tmp_path, "fetcher", "--config", config)

            calls = asyncio.create_task(_hammer(settings.metadata_api.listen, origin.urls))
            await asyncio.sleep(0)
            took = await procs["metadata-api"].stop(timeout=GRACE + SLACK)
            assert_clean(procs["metadata-api"], took)
            calls.cancel()
            procs["metadata-api"] = Proc(tmp_path, "metadata-api", "--config", config)

            origin.release.set()
            await assert_each_processed_once(client, origin.urls)
            async with grpc.aio.insecure_channel(settings.metadata_api.listen) as channel:
                answer = await metadata_pb2_grpc.MetadataServiceStub(channel).GetUrlMetadata(
                    metadata_pb2.GetUrlMetadataRequest(urls=origin.urls), timeout=60,
                    wait_for_ready=True)
            assert [metadata_pb2.Status.Name(r.metadata.status) for r in answer.results] == ["OK"] * URLS
            for name, proc in procs.items():
                assert_clean(proc, await proc.stop(timeout=GRACE + SLACK))
    finally:
        for proc in procs.values():
            proc.kill()


async def _hammer(address: str, urls: list[str]) -> None:
    """GetUrlMetadata calls back to back, as a busy caller makes them."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = metadata_pb2_grpc.MetadataServiceStub(channel)
        while True:
            try:
                await stub.GetUrlMetadata(metadata_pb2.GetUrlMetadataRequest(urls=urls), timeout=5)
            except grpc.aio.AioRpcError:
                await asyncio.sleep(0.01)
