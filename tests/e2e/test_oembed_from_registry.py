"""oEmbed without a discovery link (issue 41), over real sockets: a page on a host the providers
registry names (here through process.oembed_providers) gets its provider's oEmbed title, author
and thumbnail though it links no document; a page on a host no provider names, or a URL no
scheme of a named host matches, costs no oEmbed request."""
from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

from support.service import crawl, service_settings
from test_related_fetches import png


async def test_a_named_hosts_page_gets_its_providers_oembed_without_a_link(tmp_path, nats_server, localweb):
    web = localweb
    web.page("cdn.test", "/thumb.png", png(480, 360), content_type="image/png")
    document = {"type": "video", "version": "1.0", "title": "From the registry", "author_name": "Reg Istry",
                "provider_name": "Clips", "thumbnail_url": web.url("cdn.test", "/thumb.png"),
                "thumbnail_width": 480, "thumbnail_height": 360}
    providers = tmp_path / "providers.json"
    providers.write_text(json.dumps([{
        "provider_name": "Clips", "provider_url": "https://clips.test/",
        "endpoints": [{"schemes": ["https://clips.test/watch/*"], "url": web.url("api.test", "/oembed.{format}")}]}]))
    web.page("api.test", "/oembed.json", json.dumps(document), content_type="application/json")
    pages = {
        "named": web.page("clips.test", "/watch/42", '<meta name="description" content="d">'),
        "other_path": web.page("clips.test", "/about", '<meta name="description" content="d">'),
        "unnamed": web.page("plain.test", "/watch/42", '<meta name="description" content="d">'),
    }
    settings = service_settings(tmp_path, nats_server.url, **{
        "process.oembed_providers": str(providers),
        "fetcher.rate_overrides": {"api.test": 20.0, "clips.test": 20.0, "cdn.test": 20.0}})
    got = await crawl(settings, pages)

    named = got["named"]
    assert (named["title"], named["author"], named["site_name"]) == ("From the registry", "Reg Istry", "Clips")
    assert named["image"] == {"url": web.url("cdn.test", "/thumb.png"), "width": 480, "height": 360,
                              "content_type": "image/png"}
    sources = {p["field"]: p["source"] for p in named["provenance"]}
    assert sources["title"] == "oembed:title" and sources["image"] == "oembed:thumbnail_url"

    asked = [h for h in web.hits if h.host == "api.test" and h.path != "/robots.txt"]
    assert len(asked) == 1, asked                       # for the named page only
    query = parse_qs(urlsplit(asked[0].path).query)
    assert urlsplit(asked[0].path).path == "/oembed.json"
    assert query == {"url": [pages["named"]], "format": ["json"]}
    for name in ("other_path", "unnamed"):
        assert got[name]["status"] == "OK" and not got[name].get("title"), got[name]
