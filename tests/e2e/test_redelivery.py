"""A scheduler killed while holding messages loses none once a scheduler runs again."""
from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

import yaml
from aiohttp import web

from spiderduck.cli.nats_server import free_port
from spiderduck.core.config import as_dict
from spiderduck.fetcher.main import run_fetcher
from spiderduck.metadata_api.main import run_metadata_api
from spiderduck.scheduler.worker import run_scheduler
from support.service import Client, RunningService, service_settings


def start_scheduler(config_path, log_path) -> subprocess.Popen:
    with open(log_path, "ab") as log:          # a file, not a pipe: a full pipe would block it
        return subprocess.Popen([sys.executable, "-m", "spiderduck.cli.main", "scheduler",
                                 "--config", str(config_path)], stdout=subprocess.DEVNULL, stderr=log)


async def test_messages_held_by_a_killed_scheduler_are_redelivered(tmp_path, nats_server, localweb):
    release = asyncio.Event()
    arrived = asyncio.Event()

    async def slow_page(request):
        arrived.set()
        await release.wait()
        return web.Response(text=f"<title>{request.path}</title>", content_type="text/html")

    urls = [localweb.route("slow.test", f"/p{n}", slow_page) for n in range(5)]
    # A short claim_ttl: the killed scheduler's claims on the URLs it held lapse within it.
    settings = service_settings(tmp_path, nats_server.url, **{"scheduler.ack_wait": 2.0, "scheduler.claim_ttl": 3.0})
    config_path = tmp_path / "spiderduck.yaml"
    config_path.write_text(yaml.safe_dump(as_dict(settings)))

    async with RunningService(settings, roles=(run_fetcher, run_metadata_api)), \
            Client(settings) as client:
        log_path = tmp_path / "scheduler.log"
        first = start_scheduler(config_path, log_path)
        try:
            for url in urls:
                await client.submit_url(url)
            await asyncio.wait_for(arrived.wait(), 30)      # the scheduler holds messages now
        finally:
            os.kill(first.pid, signal.SIGKILL)
            first.wait()
        assert client.events.items == []
        release.set()
        second = start_scheduler(config_path, log_path)
        try:
            await client.events.wait_for(len(urls), timeout=60)
            records = await client.get(urls)
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(timeout=30)
        assert second.returncode == 0, log_path.read_text()[-2000:]

    for url, record in zip(urls, records):
        assert record is not None and record["status"] == "OK", (url, record)
        assert len(client.events.for_url(url)) == 1


async def test_the_scheduler_answers_grpc_health_checks_when_asked_to(tmp_path, nats_server):
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    import grpc
    from spiderduck.cli.nats_server import free_port
    listen = f"127.0.0.1:{free_port()}"
    settings = service_settings(tmp_path, nats_server.url, **{"scheduler.listen": listen})
    async with RunningService(settings, roles=(run_scheduler,)):
        from support.service import wait_port
        await wait_port(listen)
        async with grpc.aio.insecure_channel(listen) as channel:
            reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_a_url_no_fetcher_answers_gets_a_record_on_its_last_delivery(tmp_path, nats_server):
    """Fetchers down for good: each delivery fails (retried), and the last one records the URL
    as CONNECTION_ERROR with the reason, announces it and acks it, instead of only a dead letter."""
    settings = service_settings(tmp_path, nats_server.url, **{
        "scheduler.fetchers": [f"127.0.0.1:{free_port()}"],     # nothing listens there
        "scheduler.hop_timeout": 0.5, "scheduler.max_deliver": 3, "scheduler.retry_delay": 0.1})
    async with RunningService(settings, roles=(run_scheduler, run_metadata_api)), \
            Client(settings) as client:
        await client.submit_url("http://nobody-fetches.test/page")
        [event] = await client.events.wait_for(1, timeout=60)
        [record] = await client.get(["http://nobody-fetches.test/page"])
        assert await client.dead_letters() == []
    assert event["status"] == "CONNECTION_ERROR"
    assert record["status"] == "CONNECTION_ERROR"
    assert "last of 3 deliveries" in record["error"] and "no answer" in record["error"], record
