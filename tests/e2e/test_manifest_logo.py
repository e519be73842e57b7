"""The publisher's logo from the web app manifest (issue 41), over real sockets: a page naming no
logo and linking a manifest gets the manifest's largest icon, provenance manifest:icons, the
manifest read once for the pages sharing it; a page with a JSON-LD logo costs no manifest
request; hostile manifests (huge, endless, not JSON, deep, 10,000 icons, a javascript: src, one
on a private address the guard refuses) leave no logo and never fail the page."""
from __future__ import annotations

import asyncio
import json

from aiohttp import web as aio_web

from support.service import crawl, service_settings

APP = "app.test"


def manifest(*icons) -> str:
    return json.dumps({"name": "News", "icons": list(icons)})


async def endless(request):
    """A manifest that never ends (stops when the reader hangs up, or after 64 MiB)."""
    response = aio_web.StreamResponse(headers={"Content-Type": "application/manifest+json"})
    await response.prepare(request)
    chunk = b'{"src": "/i.png", "sizes": "512x512"}, ' * 1000
    try:
        await response.write(b'{"icons": [')
        for _ in range((64 << 20) // len(chunk)):
            await response.write(chunk)
            await asyncio.sleep(0)
    except (ConnectionError, RuntimeError):
        pass
    return response


def linking(href: str, extra: str = "") -> str:
    return f'<title>T</title><link rel="manifest" href="{href}">{extra}'


async def test_a_pages_logo_is_its_manifests_largest_icon_and_hostile_manifests_give_none(
        tmp_path, nats_server, localweb):
    web = localweb
    good = web.page(APP, "/app/site.webmanifest", manifest(
        {"src": "icons/192.png", "sizes": "192x192", "type": "image/png"},
        {"src": "icons/512.png", "sizes": "512x512", "type": "image/png"},
        {"src": "icons/mask.png", "sizes": "1024x1024", "type": "image/png", "purpose": "maskable"}),
        content_type="application/manifest+json")
    unused = web.page(APP, "/unused.webmanifest", manifest({"src": "/x.png", "sizes": "512x512"}))
    hostile = {
        "huge": web.page(APP, "/huge.webmanifest", manifest(*[{"src": f"/i{n}.png", "sizes": "512x512"}
                                                               for n in range(60_000)])),
        "endless": web.route(APP, "/endless.webmanifest", endless),
        "not_json": web.page(APP, "/html.webmanifest", "<html><body>Not found</body></html>"),
        "deep": web.page(APP, "/deep.webmanifest", "[" * 50_000 + "]" * 50_000),
        "many": web.page(APP, "/many.webmanifest", manifest(*[{"src": "javascript:alert(1)", "sizes": "9x9"}] * 10_000)
                         .replace(", ", ",").replace(": ", ":")),
        "script": web.page(APP, "/script.webmanifest", manifest({"src": "javascript:alert(1)", "sizes": "512x512"})),
        "not_object": web.page(APP, "/list.webmanifest", '[{"src": "/a.png"}]'),
        "guarded": "http://10.1.2.3/site.webmanifest",
    }
    ld_logo = ('<script type="application/ld+json">{"@context": "https://schema.org", "@type": "NewsArticle", '
               '"headline": "H", "publisher": {"@type": "Organization", "name": "News", '
               '"logo": {"@type": "ImageObject", "url": "https://news.test/ld-logo.png"}}}</script>')
    pages = {
        "manifest": web.page("news.test", "/a", linking(good)),
        "shared": web.page("news.test", "/b", linking(good)),
        "ld_logo": web.page("news.test", "/c", linking(unused, ld_logo)),
        **{name: web.page("news.test", f"/h/{name}", linking(url)) for name, url in hostile.items()},
    }
    settings = service_settings(tmp_path, nats_server.url, **{
        "fetcher.dns_overrides": {"*.test": "127.0.0.1"},
        "fetcher.rate_overrides": {"news.test": 50.0, APP: 50.0},
        "process.oembed_max_bytes": 1 << 20})      # 10,000 icons are read whole; "huge" is over it
    got = await crawl(settings, pages)

    icon = {"url": web.url(APP, "/app/icons/512.png"), "width": 512, "height": 512, "content_type": "image/png"}
    for name in ("manifest", "shared"):
        assert got[name]["status"] == "OK" and got[name]["logo"] == icon, got[name]
        assert {p["field"]: p["source"] for p in got[name]["provenance"]}["logo"] == "manifest:icons"
        assert got[name].get("favicon") != icon["url"]            # the favicon stays apart
    assert len(web.hits_for(APP, "/app/site.webmanifest")) == 1     # remembered for the second page

    assert got["ld_logo"]["logo"] == {"url": "https://news.test/ld-logo.png"}
    assert web.hits_for(APP, "/unused.webmanifest") == []            # never asked

    for name in hostile:
        assert got[name]["status"] == "OK" and got[name]["title"] == "T", (name, got[name])
        assert got[name].get("logo") is None, (name, got[name])
    assert len(web.hits_for(APP, "/endless.webmanifest")) == 1 and len(web.hits_for(APP, "/many.webmanifest")) == 1
