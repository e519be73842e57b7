"""Related fetches over real sockets: the page's images, oEmbed document and favicon.ico are
fetched through the fetchers (robots.txt and the address guard apply), fill the record, and are
remembered. An image that fails or is too small gives way to the page's next one."""
from __future__ import annotations

import asyncio
import io
import json
import os

import pytest
from aiohttp import web as aio_web
from PIL import Image as PILImage

from spiderduck.cli.nats_server import port_open
from support.service import Client, RunningService, service_settings
from support.warc import warc_records


def png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", (width, height)).save(out, "PNG")
    return out.getvalue()


def noise_png(width: int, height: int) -> bytes:
    """A PNG that does not compress: bigger than the probe reads."""
    out = io.BytesIO()
    PILImage.frombytes("RGB", (width, height), os.urandom(width * height * 3)).save(out, "PNG")
    return out.getvalue()


def jpeg(width: int, height: int) -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", (width, height)).save(out, "JPEG")
    return out.getvalue()


async def test_image_and_oembed_complete_the_record(tmp_path, nats_server, localweb):
    web = localweb
    logo = web.page("cdn.test", "/logo.png", png(1200, 630), content_type="image/png")
    moved = web.redirect("cdn.test", "/old.jpg", web.url("cdn.test", "/new.jpg"))
    web.page("cdn.test", "/new.jpg", jpeg(640, 360), content_type="image/jpeg")
    web.page("cdn.test", "/thumb.png", png(480, 360), content_type="image/png")
    big = web.page("cdn.test", "/big.png", noise_png(300, 300), content_type="image/png")
    oembed_doc = {"type": "video", "version": "1.0", "title": "From oEmbed", "author_name": "Olga Embed",
                  "provider_name": "Video Test", "thumbnail_url": web.url("cdn.test", "/thumb.png"),
                  "thumbnail_width": 480, "thumbnail_height": 360}
    web.page("video.test", "/oembed", json.dumps(oembed_doc), content_type="application/json")
    web.robots("private.test", "User-agent: *\nDisallow: /secret\n")
    web.page("private.test", "/secret/pic.png", png(100, 100), content_type="image/png")
    web.page("news.test", "/stated.png", png(80, 60), content_type="image/png")

    pages = {
        # og:image without size: probed. Two pages share it: probed once.
        "a": web.page("news.test", "/a", f'<title>A</title><meta property="og:image" content="{logo}">'),
        "b": web.page("news.test", "/b", f'<title>B</title><meta property="og:image" content="{logo}">'),
        # An image URL that redirects; the probe follows it.
        "moved": web.page("blog.test", "/p", f'<title>P</title><meta name="twitter:image" content="{moved}">'),
        # No title, author or image: oEmbed fills them, and its thumbnail is probed for its type.
        "video": web.page("video.test", "/watch", '<link rel="alternate" type="application/json+oembed" '
                          'href="/oembed"><meta name="description" content="d">'),
        # The page's own title wins over oEmbed's.
        "titled": web.page("video.test", "/titled", '<title>Own title</title><link rel="alternate" '
                           'type="application/json+oembed" href="/oembed">'),
        # Sizes the page gives are kept; the image is still read, to know that it loads.
        "sized": web.page("news.test", "/sized", '<meta property="og:image" content="/stated.png">'
                          '<meta property="og:image:width" content="100"><meta property="og:image:height" '
                          'content="50"><meta property="og:image:type" content="image/png">'),
        # robots.txt forbids the image: it is not fetched, and stands unverified (a browser loads it).
        "robots": web.page("news.test", "/r", '<title>R</title><meta property="og:image" '
                           f'content="{web.url("private.test", "/secret/pic.png")}">'),
        # An image on a private address is refused by the fetcher's guard: no image.
        "guarded": web.page("news.test", "/g", '<title>G</title>'
                            '<meta property="og:image" content="http://10.1.2.3/x.png">'),
        # An image bigger than the probe: its first 64 KiB say its size.
        "big": web.page("news.test", "/big", f'<title>Big</title><meta property="og:image" content="{big}">'),
        # A URL that is itself an image.
        "image": logo,
    }
    settings = service_settings(tmp_path, nats_server.url, **{
        "fetcher.dns_overrides": {"*.test": "127.0.0.1"},
        "fetcher.rate_overrides": {"news.test": 20.0, "cdn.test": 20.0, "video.test": 20.0}})
    async with RunningService(settings), Client(settings) as client:
        for url in pages.values():
            await client.submit_url(url)
        await client.events.wait_for(len(pages), timeout=60)
        got = dict(zip(pages, await client.get(list(pages.values()))))

    image = {"url": logo, "width": 1200, "height": 630, "content_type": "image/png"}
    assert got["a"]["image"] == image and got["b"]["image"] == image
    assert len(web.hits_for("cdn.test", "/logo.png")) == 2       # once for page a and b, once as a URL

    assert got["moved"]["image"] == {"url": moved, "width": 640, "height": 360, "content_type": "image/jpeg"}

    video = got["video"]
    assert (video["title"], video["author"], video["site_name"]) == ("From oEmbed", "Olga Embed", "Video Test")
    assert video["image"] == {"url": web.url("cdn.test", "/thumb.png"), "width": 480, "height": 360,
                              "content_type": "image/png"}
    assert got["titled"]["title"] == "Own title" and got["titled"]["author"] == "Olga Embed"
    assert len(web.hits_for("video.test", "/oembed")) == 1       # remembered for the second page

    assert got["sized"]["image"] == {"url": web.url("news.test", "/stated.png"), "width": 100, "height": 50,
                                     "content_type": "image/png"}
    assert len(web.hits_for("news.test", "/stated.png")) == 1

    assert got["robots"]["status"] == "OK" and got["robots"]["image"] == {     # unverified, as the page chose
        "url": web.url("private.test", "/secret/pic.png")}
    assert web.hits_for("private.test", "/secret/pic.png") == []

    assert got["guarded"]["status"] == "OK" and got["guarded"].get("image") is None

    assert got["big"]["image"] == {"url": big, "width": 300, "height": 300, "content_type": "image/png"}
    # The related fetches are in the content log, after their page; a probe is marked truncated.
    logged = {headers["WARC-Target-URI"]: (headers, block) for headers, block in
              warc_records(tmp_path / "var" / "content")}
    headers, block = logged[big]
    assert headers.get("WARC-Truncated") == "length" and len(block) < 66_000
    assert web.url("video.test", "/oembed") in logged and "WARC-Truncated" not in logged[logo][0]
    # ... tied to their page's record, so forgetting the page finds them (issue 39).
    assert headers["WARC-Concurrent-To"] == logged[pages["big"]][0]["WARC-Record-ID"]

    assert got["image"]["status"] == "OK" and got["image"]["image"] == image
    assert got["image"]["content_length"] == len(png(1200, 630))        # a number in JSON


async def test_related_fetches_can_be_turned_off(tmp_path, nats_server, localweb):
    web = localweb
    logo = web.page("cdn.test", "/logo.png", png(30, 20), content_type="image/png")
    page = web.page("news.test", "/a", f'<title>A</title><meta property="og:image" content="{logo}">')
    settings = service_settings(tmp_path, nats_server.url, **{
        "fetcher.dns_overrides": {"*.test": "127.0.0.1"}, "process.related_fetches": False})
    async with RunningService(settings), Client(settings) as client:
        await client.submit_url(page)
        await client.events.wait_for(1, timeout=30)
        (record,) = await client.get([page])
    assert record["image"] == {"url": logo}
    assert web.hits_for("cdn.test") == []


async def test_a_slow_image_does_not_hold_the_page_past_related_timeout(tmp_path, nats_server, localweb):
    web = localweb
    release = asyncio.Event()

    async def never_answers(request):
        await release.wait()
        return aio_web.Response(body=png(5, 5), content_type="image/png")

    slow = web.route("cdn.test", "/slow.png", never_answers)
    page = web.page("news.test", "/a", f'<title>A</title><meta property="og:image" content="{slow}">')
    settings = service_settings(tmp_path, nats_server.url, **{
        "fetcher.dns_overrides": {"*.test": "127.0.0.1"}, "process.related_timeout": "0.5s",
        "fetcher.total_timeout": "120s"})    # only related_timeout can end the wait within the test
    try:
        async with RunningService(settings), Client(settings) as client:
            await client.submit_url(page)
            await client.events.wait_for(1, timeout=15)
            (record,) = await client.get([page])
            assert web.hits_for("cdn.test", "/slow.png")      # it was asked for ...
    finally:
        release.set()
    assert record["status"] == "OK" and record["title"] == "A"
    assert record["image"] == {"url": slow}                   # ... and given up on


async def test_an_image_that_failed_for_a_while_is_tried_again(tmp_path, nats_server, localweb):
    web = localweb
    answers = [aio_web.Response(status=503, text="busy"),
               aio_web.Response(body=png(96, 64), content_type="image/png")]

    async def flaky(request):
        return answers.pop(0)

    image = web.route("cdn.test", "/flaky.png", flaky)
    first = web.page("news.test", "/1", f'<title>1</title><meta property="og:image" content="{image}">')
    second = web.page("news.test", "/2", f'<title>2</title><meta property="og:image" content="{image}">')
    settings = service_settings(tmp_path, nats_server.url, **{
        "fetcher.dns_overrides": {"*.test": "127.0.0.1"},
        "fetcher.rate_overrides": {"news.test": 20.0, "cdn.test": 20.0}, "fetcher.backoff_base": "0.05s"})
    async with RunningService(settings), Client(settings) as client:
        await client.submit_url(first)
        await client.events.wait_for(1, timeout=30)
        await client.submit_url(second)
        await client.events.wait_for(2, timeout=30)
        one, two = await client.get([first, second])
    assert one["image"] == {"url": image}                     # the 503: kept unverified, not remembered
    assert two["image"] == {"url": image, "width": 96, "height": 64, "content_type": "image/png"}


async def test_an_image_domain_holding_back_is_skipped_not_waited_for(tmp_path, nats_server, localweb):
    # The first image answers 503 with Retry-After: 60, so cdn.test may not be asked again for
    # a minute. The second page's image, on the same domain, is then refused by the fetcher at
    # once (its turn is past the related fetches' deadline) instead of holding the page.
    web = localweb
    web.page("cdn.test", "/1.png", "busy", status=503, headers={"Retry-After": "60"})
    web.page("cdn.test", "/2.png", png(8, 8), content_type="image/png")
    first = web.page("news.test", "/1", f'<title>1</title><meta property="og:image" '
                     f'content="{web.url("cdn.test", "/1.png")}">')
    second = web.page("news.test", "/2", f'<title>2</title><meta property="og:image" '
                      f'content="{web.url("cdn.test", "/2.png")}">')
    settings = service_settings(tmp_path, nats_server.url, **{
        "fetcher.dns_overrides": {"*.test": "127.0.0.1"}, "fetcher.rate_overrides": {"news.test": 20.0},
        "process.related_timeout": "30s"})
    async with RunningService(settings), Client(settings) as client:
        await client.submit_url(first)
        await client.events.wait_for(1, timeout=20)
        await client.submit_url(second)
        await client.events.wait_for(2, timeout=10)     # well before the 30 s related_timeout
        one, two = await client.get([first, second])
    assert one["title"] == "1" and two["title"] == "2"
    assert two["image"] == {"url": web.url("cdn.test", "/2.png")}
    assert web.hits_for("cdn.test", "/2.png") == []


@pytest.fixture
async def private_origin(localweb):
    """The local web answering on 127.0.0.2 as well (its runner's second site): a private address
    where a request would really arrive and be recorded by its Host, so a refusal is the absence
    of hits. Yields the port."""
    site = aio_web.TCPSite(localweb._runner, "127.0.0.2", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    assert port_open("127.0.0.2", port)
    yield port
    await site.stop()


async def test_hops_and_related_fetches_into_a_private_address_are_refused(
        tmp_path, nats_server, localweb, private_origin):
    web = localweb
    inside = f"http://intranet.test:{private_origin}"        # 127.0.0.2, outside allowed_networks
    literal = f"http://127.0.0.2:{private_origin}"
    for host in ("intranet.test", "127.0.0.2"):
        web.page(host, "/pic.png", png(10, 10), content_type="image/png")
        web.page(host, "/oembed", json.dumps({"type": "link", "version": "1.0", "title": "Secret"}),
                 content_type="application/json")
    web.page("intranet.test", "/admin", "<title>Admin</title>")
    hop = web.redirect("cdn.test", "/hop.png", f"{inside}/pic.png")
    pages = {
        "image": web.page("news.test", "/i", f'<title>I</title><meta property="og:image" '
                          f'content="{inside}/pic.png">'),
        "literal": web.page("news.test", "/l", f'<title>L</title><meta property="og:image" '
                            f'content="{literal}/pic.png">'),
        # An allowed image URL that redirects into the private address: refused on that hop.
        "image_hop": web.page("news.test", "/h", f'<title>H</title><meta property="og:image" content="{hop}">'),
        "oembed": web.page("news.test", "/o", '<link rel="alternate" type="application/json+oembed" '
                           f'href="{literal}/oembed"><meta name="description" content="d">'),
        # The page itself redirects into the private address.
        "page_hop": web.redirect("news.test", "/jump", f"{inside}/admin"),
    }
    settings = service_settings(tmp_path, nats_server.url, **{
        "fetcher.allowed_networks": ["127.0.0.1/32"],
        "fetcher.dns_overrides": {"*.test": "127.0.0.1", "intranet.test": "127.0.0.2"},
        "fetcher.rate_overrides": {"news.test": 20.0, "cdn.test": 20.0}})
    async with RunningService(settings), Client(settings) as client:
        for url in pages.values():
            await client.submit_url(url)
        await client.events.wait_for(len(pages), timeout=60)
        got = dict(zip(pages, await client.get(list(pages.values()))))

    assert web.hits_for("intranet.test") == [] and web.hits_for("127.0.0.2") == []
    # Refused images are no images: the pages, OK, have none.
    assert got["image"]["status"] == "OK" and got["image"].get("image") is None
    assert got["literal"].get("image") is None
    assert got["image_hop"].get("image") is None
    assert len(web.hits_for("cdn.test", "/hop.png")) == 1      # the allowed hop was fetched
    assert got["oembed"]["status"] == "OK" and got["oembed"].get("title", "") == ""
    jump = got["page_hop"]
    assert jump["status"] == "BLOCKED_ADDRESS" and "127.0.0.2" in jump["error"]
    assert jump["redirects"] == [{"url": pages["page_hop"], "http_status": 301}]
    assert jump["final_url"] == f"{inside}/admin"


def gif(width: int, height: int) -> bytes:
    out = io.BytesIO()
    PILImage.new("P", (width, height)).save(out, "GIF")
    return out.getvalue()


def og(*images: str) -> str:
    return "".join(f'<meta property="og:image" content="{url}">' for url in images)


async def test_an_image_that_fails_to_load_or_is_tiny_gives_way_to_the_next(tmp_path, nats_server, localweb):
    web = localweb
    good = web.page("cdn.test", "/good.png", png(400, 200), content_type="image/png")
    spare = web.page("cdn.test", "/spare.jpg", jpeg(300, 300), content_type="image/jpeg")
    dot = web.page("cdn.test", "/dot.gif", gif(1, 1), content_type="image/gif")   # a pixel only its bytes betray
    small = web.page("cdn.test", "/small.png", png(20, 20), content_type="image/png")
    missing = web.url("cdn.test", "/missing.jpg")                                  # 404
    card = web.page("cdn.test", "/card.jpg", "<html><title>Not an image</title></html>")
    unused = web.url("cdn.test", "/unused.png")
    pages = {
        "missing": web.page("news.test", "/missing", "<title>M</title>" + og(missing, good)),
        "pixel": web.page("news.test", "/pixel", f'<title>P</title>{og(dot)}<meta name="twitter:image" '
                          f'content="{good}">'),
        "small": web.page("news.test", "/small", f'<title>S</title>{og(small)}<script type="application/ld+json">'
                          f'{{"@type": "Article", "image": ["{spare}"]}}</script>'),
        "not_image": web.page("news.test", "/card", f'<title>C</title>{og(card)}</head><body>'
                              f'<img src="{spare}" width="300" height="300">'),
        "first_ok": web.page("news.test", "/ok", "<title>O</title>" + og(good, unused)),
        "all_fail": web.page("news.test", "/none", "<title>N</title>" + og(missing, dot, small, card)),
    }
    settings = service_settings(tmp_path, nats_server.url)
    async with RunningService(settings), Client(settings) as client:
        for url in pages.values():
            await client.submit_url(url)
        await client.events.wait_for(len(pages), timeout=60)
        got = dict(zip(pages, await client.get(list(pages.values()))))

    found = {"url": good, "width": 400, "height": 200, "content_type": "image/png"}
    assert got["missing"]["image"] == got["pixel"]["image"] == got["first_ok"]["image"] == found
    assert got["small"]["image"] == {"url": spare, "width": 300, "height": 300, "content_type": "image/jpeg"}
    assert got["not_image"]["image"] == got["small"]["image"]
    assert got["all_fail"]["status"] == "OK" and got["all_fail"].get("image") is None
    assert web.hits_for("cdn.test", "/unused.png") == []          # the first loaded: the next is not read
    for path in ("/missing.jpg", "/dot.gif", "/small.png", "/card.jpg", "/good.png", "/spare.jpg"):
        assert len(web.hits_for("cdn.test", path)) == 1, path     # each answer remembered for all pages


async def test_the_favicon_is_the_sites_favicon_ico_only_when_it_answers(tmp_path, nats_server, localweb):
    web = localweb
    ico = io.BytesIO()
    PILImage.new("RGB", (32, 32)).save(ico, "ICO")
    web.page("icons.test", "/favicon.ico", ico.getvalue(), content_type="image/x-icon")
    web.page("soft.test", "/favicon.ico", "<html><title>Not here</title></html>")   # a 200 that is a page
    pages = {
        "a": web.page("icons.test", "/a", "<title>A</title>"),
        "b": web.page("icons.test", "/b", "<title>B</title>"),
        "bare": web.page("bare.test", "/", "<title>Bare</title>"),                   # /favicon.ico: 404
        "soft": web.page("soft.test", "/", "<title>Soft</title>"),
        "linked": web.page("linked.test", "/", '<title>L</title><link rel="icon" href="/static/icon.svg">'),
    }
    settings = service_settings(tmp_path, nats_server.url)
    async with RunningService(settings), Client(settings) as client:
        for url in pages.values():
            await client.submit_url(url)
        await client.events.wait_for(len(pages), timeout=60)
        got = dict(zip(pages, await client.get(list(pages.values()))))

    assert got["a"]["favicon"] == got["b"]["favicon"] == web.url("icons.test", "/favicon.ico")
    assert len(web.hits_for("icons.test", "/favicon.ico")) == 1          # remembered per site
    assert got["bare"].get("favicon", "") == "" and got["soft"].get("favicon", "") == ""
    assert len(web.hits_for("bare.test", "/favicon.ico")) == 1
    # A page naming its icon keeps it, and nothing is fetched for it.
    assert got["linked"]["favicon"] == web.url("linked.test", "/static/icon.svg")
    assert web.hits_for("linked.test", "/favicon.ico") == web.hits_for("linked.test", "/static/icon.svg") == []
