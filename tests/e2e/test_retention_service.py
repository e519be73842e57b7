"""Retention over the running service: a crawled URL, its redirect and its WARC file go once
retention.metadata and retention.content have passed (the scheduler's sweep), and a URL
submitted again afterwards is crawled afresh."""
from __future__ import annotations

import os
import time
from datetime import datetime

from support.service import Client, RunningService, service_settings, wait_until

KEEP = 2.0          # seconds
EVERY = 0.2


async def test_a_crawled_url_its_alias_and_its_warc_file_go_after_the_retention(tmp_path, nats_server,
                                                                                localweb):
    final = localweb.page("news.test", "/story", "<title>Story</title>")
    short = localweb.redirect("short.test", "/a", final)
    settings = service_settings(tmp_path, nats_server.url, **{
        "retention.metadata": f"{KEEP}s", "retention.content": f"{KEEP}s",
        "retention.sweep_interval": f"{EVERY}s"})
    content = os.path.join(settings.data_dir, "content")
    async with RunningService(settings), Client(settings) as client:
        await client.submit_url(short)
        await client.events.wait_for(1, timeout=30)
        records = await client.get([short, final])
        assert [r and r["title"] for r in records] == ["Story", "Story"]
        fetched_at = datetime.fromisoformat(records[0]["fetched_at"].replace("Z", "+00:00")).timestamp()
        (warc,) = os.listdir(content)

        async def never_seen():
            return await client.get([short, final]) == [None, None]
        await wait_until(never_seen, KEEP + EVERY + 10, "the record and its alias to go")
        assert time.time() >= fetched_at + KEEP, "gone before its retention ran out"

        async def file_gone():
            return warc not in os.listdir(content)
        await wait_until(file_gone, KEEP + EVERY + 10, "the WARC file to go")

        await client.submit_url(short)                 # crawled afresh, not answered FRESH
        (again,) = [e for e in await client.events.wait_for(2, timeout=30)][1:]
        assert again["resolution"] == "CRAWLED"
    assert len(localweb.hits_for("news.test", "/story")) == 2
