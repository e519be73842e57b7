"""A hostile web on loopback (support.localweb): pages that attack the extraction and bodies
that attack the reader. Shared by the e2e tests and bench/hostile_up."""
from __future__ import annotations

import asyncio
import gzip
import io
import json
import zlib

import brotli
from aiohttp import web
from PIL import Image as PILImage


def jsonld(*blocks: str) -> str:
    return "".join(f'<script type="application/ld+json">{b}</script>' for b in blocks)


def hostile_pages(localweb) -> dict[str, str]:
    """path -> page; every one must come out OK with its title."""
    thumb = io.BytesIO()
    PILImage.new("RGB", (64, 64)).save(thumb, "PNG")
    localweb.page("evil.test", "/thumb.png", thumb.getvalue(), content_type="image/png")
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


CAP = 1 << 20      # fetcher.max_body_bytes in the size tests


def bomb_routes(localweb) -> dict[str, str]:
    """url -> what it is: each sends far more than CAP, decoded (a page read up to CAP; "huge", a
    file, read up to fetcher.file_head_bytes)."""
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
        try:
            while True:                        # chunked, never ending (until the reader leaves)
                await response.write(b"x" * 65536)
        except ConnectionError:
            return response
    urls[localweb.route("bomb.test", "/endless", endless)] = "endless"

    async def huge(request):                   # says 1 GB, sends it for as long as it is read
        response = web.StreamResponse(headers={"Content-Type": "application/octet-stream",
                                               "Content-Length": str(1 << 30)})
        await response.prepare(request)
        try:
            for _ in range((1 << 30) // 65536):
                await response.write(b"\0" * 65536)
        except ConnectionError:
            pass
        return response
    urls[localweb.route("bomb.test", "/huge", huge)] = "huge"
    return urls


def slow_routes(localweb) -> dict[str, str | tuple[str, ...]]:
    """url -> expected status: origins that waste a reader's time (fetcher.total_timeout cuts them)."""
    async def hang(request):                   # accepts, never answers
        await asyncio.Event().wait()

    async def trickle(request):                # a byte every 200 ms, until the reader leaves
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        try:
            while True:
                await response.write(b"<")
                await asyncio.sleep(0.2)
        except ConnectionError:
            return response

    async def headers_then_nothing(request):   # says 10 kB, sends 10 bytes, then waits
        response = web.StreamResponse(headers={"Content-Type": "text/html", "Content-Length": "10000"})
        await response.prepare(request)
        await response.write(b"<title>Wai")
        await asyncio.Event().wait()
    return {localweb.route("slow.test", "/hang", hang): "TIMEOUT",
            localweb.route("slow.test", "/trickle", trickle): "TIMEOUT",
            localweb.route("slow.test", "/stalled-body", headers_then_nothing): "TIMEOUT"}


def redirect_routes(localweb) -> dict[str, str | tuple[str, ...]]:
    """url -> expected status: redirect chains an attacker builds."""
    loop_a = localweb.url("loop.test", "/a")
    localweb.redirect("loop.test", "/a", localweb.url("loop.test", "/b"))
    localweb.redirect("loop.test", "/b", loop_a)
    return {
        loop_a: "TOO_MANY_REDIRECTS",
        localweb.redirect("jump.test", "/private", "http://10.1.2.3/admin"): "BLOCKED_ADDRESS",
        localweb.redirect("jump.test", "/metadata", "http://169.254.169.254/latest/meta-data/"):
            "BLOCKED_ADDRESS",
        localweb.redirect("jump.test", "/v6-mapped", "http://[::ffff:10.0.0.1]/"): "BLOCKED_ADDRESS",
        localweb.redirect("jump.test", "/decimal", "http://167772161/"): "BLOCKED_ADDRESS",
        localweb.redirect("jump.test", "/bad-location", "http://exa mple.test:99999/"): "INVALID_URL",
        localweb.redirect("jump.test", "/javascript", "javascript:alert(1)"): "INVALID_URL",
    }


def garbage_routes(localweb) -> dict[str, str | tuple[str, ...]]:
    """url -> expected status (or statuses): bodies and headers that are not what they claim."""
    return {
        localweb.page("junk.test", "/binary", bytes(range(256)) * 4000): "OK",
        localweb.page("junk.test", "/bad-charset", b"<title>\xff\xfe\xfa</title>",
                      content_type="text/html; charset=no-such-charset"): "OK",
        # Parsed in a worker: done within process.extract_timeout, or recorded TIMEOUT saying so.
        localweb.page("junk.test", "/nested", "<div>" * 100_000 + "<title>Deep</title>"): ("OK", "TIMEOUT"),
        localweb.page("junk.test", "/not-html", b"%PDF-1.7 garbage", content_type="application/pdf"):
            "OK",           # a file: its card, titled from its name (issue 41)
        localweb.page("junk.test", "/bad-gzip", b"not gzip at all",
                      headers={"Content-Encoding": "gzip"}): "CONNECTION_ERROR",
        localweb.page("junk.test", "/huge-header", "<title>H</title>",
                      headers={"X-Big": "h" * 60_000}): "CONNECTION_ERROR",
    }
