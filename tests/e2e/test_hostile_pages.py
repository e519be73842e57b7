"""Hostile pages through the whole service (real NATS, real gRPC, a local web on loopback): each
URL gets exactly one event and a readable, bounded record, whatever its page holds."""
from __future__ import annotations

import gzip
import json
import zlib

import brotli
from aiohttp import web

from common.record_limits import OTHER_TEXT_LIMIT, TEXT_LIMITS
from support.service import Client, RunningService, service_settings


def jsonld(*blocks: str) -> str:
    return "".join(f'<script type="application/ld+json">{b}</script>' for b in blocks)


def hostile_pages(localweb) -> dict[str, str]:
    """path -> page; every one must come out OK with its title."""
    oembed = localweb.page("evil.test", "/oembed.json", json.dumps({
        "type": "photo", "version": "1.0", "title": "Embedded \ud800 title", "author_name": "x" * 5000,
        "thumbnail_url": f"http://evil.test:{localweb.port}/thumb.png",
        "thumbnail_width": 99_999_999_999, "thumbnail_height": -3}, ensure_ascii=True),
        content_type="application/json")
    return {
        "/huge-title": "<title>" + "T" * 1_500_000 + "</title>",
        "/huge-description": '<title>D</title><meta name="description" content="' + "d" * 1_500_000 + '">'
                             '<meta property="og:description" content="' + "o" * 400_000 + '">',
        "/many-blocks": "<title>Blocks</title>" + jsonld(*['{"@type":"Thing","name":"n%d"}' % i
                                                             for i in range(10_000)]),
        "/surrogate": jsonld('{"@type":"NewsArticle","headline":"Head \\ud800 line","author":{"name":"\\udfff"}}'),
        "/deep-jsonld": "<title>Deep</title>" + jsonld("[" * 100_000 + "]" * 100_000,
                                                      '{"a":' * 5000 + "1" + "}" * 5000),
        "/nan": "<title>NaN</title>" + jsonld('{"@type":"Thing","ratio":NaN,"big":Infinity,"n":-Infinity}'),
        "/oembed": f'<link rel="alternate" type="application/json+oembed" href="{oembed}">',
        "/bulky-jsonld": "<title>Bulky</title>" + jsonld(*[json.dumps({"@type": "Thing", "text": "x" * 50_000})
                                                           for _ in range(30)]),
    }


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


CAP = 1 << 20      # fetcher.max_body_bytes in the size tests


def bomb_routes(localweb) -> dict[str, str]:
    """url -> what it is: each sends far more than CAP, decoded; each must be TOO_LARGE."""
    html = b"<!doctype html><title>Bomb</title>" + b" " * (50 * CAP)
    deflater = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS)
    encodings = {"gzip": gzip.compress(html, 6), "deflate": deflater.compress(html) + deflater.flush(),
                 "br": brotli.compress(html, quality=5)}
    urls = {}
    for name, body in encodings.items():
        assert len(body) < CAP // 4          # small on the wire: a bomb
        urls[localweb.page("bomb.test", f"/{name}", body, headers={"Content-Encoding": name})] = name

    async def endless(request):
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        await response.write(b"<title>Endless</title>")
        while True:                            # chunked, never ending (until the reader leaves)
            await response.write(b"x" * 65536)
    urls[localweb.route("bomb.test", "/endless", endless)] = "endless"

    async def huge(request):                   # says 1 GB, sends it for as long as it is read
        response = web.StreamResponse(headers={"Content-Type": "application/octet-stream",
                                               "Content-Length": str(1 << 30)})
        await response.prepare(request)
        for _ in range((1 << 30) // 65536):
            await response.write(b"\0" * 65536)
        return response
    urls[localweb.route("bomb.test", "/huge", huge)] = "huge"
    return urls


async def test_bodies_over_the_cap_are_too_large_whatever_their_encoding(tmp_path, nats_server, localweb):
    urls = bomb_routes(localweb)
    settings = service_settings(tmp_path, nats_server.url, **{"fetcher.max_body_bytes": CAP})
    async with RunningService(settings), Client(settings) as client:
        for url in urls:
            await client.submit_url(url)
        await client.events.wait_for(len(urls), timeout=60)
        records = await client.get(list(urls))
    for (url, name), record in zip(urls.items(), records):
        assert record["status"] == "TOO_LARGE", (name, record)
        assert "fetcher.max_body_bytes" in record["error"]
        assert record["content_length"] == CAP, name          # decoded bytes read, a JSON number
        if name != "huge":
            assert record["title"] in ("Bomb", "Endless"), name
