"""Prometheus /metrics: what a processed URL leaves behind, on `metrics_listen`."""
from __future__ import annotations

import aiohttp

from common.nats_server import free_port
from support.service import Client, RunningService, service_settings


async def test_processed_urls_and_fetches_are_counted(tmp_path, nats_server, localweb):
    gif = (b"GIF87a\x02\x00\x01\x00\x80\x00\x00" + b"\x00" * 6 +                 # 2 x 1, as Pillow
           b",\x00\x00\x00\x00\x02\x00\x01\x00\x00\x08\x05\x00\x01\x00\x08\x08\x00;")  # writes it
    image = localweb.page("counted.test", "/i.gif", gif, content_type="image/gif")
    url = localweb.page("counted.test", "/", f'<title>x</title><meta property="og:image" content="{image}">')
    listen = f"127.0.0.1:{free_port()}"
    settings = service_settings(tmp_path, nats_server.url, metrics_listen=listen)
    async with RunningService(settings), Client(settings) as client:
        await client.submit_url(url)
        await client.events.wait_for(1, timeout=30)
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://{listen}/metrics") as response:
                text = await response.text()
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert any(line.startswith('spiderduck_scheduler_processed_total{resolution="CRAWLED",status="OK"}')
               for line in lines), text[:2000]
    assert any(line.startswith('spiderduck_fetcher_requests_total{http="2xx",purpose="page",status="OK"}')
               for line in lines)
    assert any(line.startswith('spiderduck_fetcher_requests_total{http="2xx",purpose="image",status="OK"}')
               for line in lines)
    assert any(line.startswith('spiderduck_scheduler_messages_total{outcome="acked"}') for line in lines)
    assert any(line.startswith("spiderduck_scheduler_latency_seconds_count") for line in lines)
    assert any(line.startswith('spiderduck_scheduler_related_total{kind="image",outcome="found"}')
               for line in lines), [line for line in lines if "related" in line]
