"""Hostile pages through the whole service (real NATS, real gRPC, a local web on loopback): each
URL gets exactly one event and a readable, bounded record, whatever its page holds."""
from __future__ import annotations

import json

from spiderduck.core.config import FetcherSettings
from spiderduck.wire.record_limits import OTHER_TEXT_LIMIT, TEXT_LIMITS
from support.hostile import (CAP, bomb_routes, garbage_routes, hostile_pages, redirect_routes,
                             slow_routes)
from support.service import Client, RunningService, service_settings


async def test_each_hostile_page_gets_one_event_and_a_bounded_record(tmp_path, nats_server, localweb):
    urls = [localweb.page("evil.test", path, page) for path, page in hostile_pages(localweb).items()]
    settings = service_settings(tmp_path, nats_server.url, **{"process.related_fetches": True})
    async with RunningService(settings), Client(settings) as client:
        # Half on their own, half in one message of several URLs (split into one message each).
        for url in urls[::2]:
            await client.submit_url(url)
        await client.publish(json.dumps({"urls": urls[1::2]}))
        await client.events.wait_for(len(urls), timeout=90)
        records = await client.get(urls)
        dead = await client.dead_letters()

    assert dead == []
    for url, record in zip(urls, records):
        assert len(client.events.for_url(url)) == 1, url
        assert record is not None and record["status"] == "OK", (url, record)
        assert 0 < len(record["title"]) <= TEXT_LIMITS["title"], url
        assert len(record.get("description", "")) <= TEXT_LIMITS["description"]
        assert len(record.get("author", "")) <= OTHER_TEXT_LIMIT
    by_path = {url.rsplit("/", 1)[1]: record for url, record in zip(urls, records)}
    assert by_path["huge-title"]["title"].endswith("…")
    assert by_path["surrogate"]["title"] == "Head \ufffd line"
    assert len(by_path["many-blocks"]["structured_data"]["json-ld"]) <= 64
    assert by_path["nan"]["structured_data"]["json-ld"][0] == {"@type": "Thing", "ratio": None,
                                                               "big": None, "n": None}
    assert "json-ld" not in by_path["deep-jsonld"].get("structured_data", {})
    assert by_path["oembed"]["title"] == "Embedded \ufffd title"
    assert by_path["oembed"]["image"]["width"] == 2**31 - 1
    assert 0 < len(by_path["bulky-jsonld"]["structured_data"]["json-ld"]) < 30


async def test_bodies_over_the_cap_are_read_up_to_it_whatever_their_encoding(tmp_path, nats_server, localweb):
    """A bomb (gzip, deflate, br) or an endless body is read up to fetcher.max_body_bytes, decoded:
    a page whose first bytes give a title is OK and `truncated`; a body that is not HTML (a file) is
    read up to fetcher.file_head_bytes and OK, its card titled from its name."""
    urls = bomb_routes(localweb)
    settings = service_settings(tmp_path, nats_server.url, **{"fetcher.max_body_bytes": CAP})
    async with RunningService(settings), Client(settings) as client:
        for url in urls:
            await client.submit_url(url)
        await client.events.wait_for(len(urls), timeout=60)
        records = await client.get(list(urls))
    for (url, name), record in zip(urls.items(), records):
        if name == "huge":      # a file (issue 41): its head alone, a card from its name, its declared size
            assert record["content_length"] == FetcherSettings().file_head_bytes, record
            assert (record["status"], record["title"], int(record["file_size"])) == ("OK", "huge", 1 << 30), record
            assert "truncated" not in record, record
            continue
        assert record["content_length"] == CAP, name          # decoded bytes read, a JSON number
        assert record["truncated"] is True, name
        assert record["status"] == "OK" and record["title"] in ("Bomb", "Endless"), (name, record)


async def test_slow_tricky_and_garbage_origins_each_get_their_status(tmp_path, nats_server, localweb):
    """Origins that waste time, redirect into private space or loops, or send bodies and headers
    that are not what they claim: one event each, with the status that says what happened."""
    expected = {**slow_routes(localweb), **redirect_routes(localweb), **garbage_routes(localweb)}
    settings = service_settings(tmp_path, nats_server.url, **{"fetcher.total_timeout": 2.0})
    async with RunningService(settings), Client(settings) as client:
        for url in expected:
            await client.submit_url(url)
        await client.events.wait_for(len(expected), timeout=90)
        records = await client.get(list(expected))
        dead = await client.dead_letters()
    assert dead == []
    for (url, want), record in zip(expected.items(), records):
        wanted = (want,) if isinstance(want, str) else want
        assert [e["status"] for e in client.events.for_url(url)] in [[w] for w in wanted], url
        assert record["status"] in wanted, (url, record)
        if record["status"] != "OK":
            assert record.get("error"), (url, record)
