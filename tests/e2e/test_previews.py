"""Previews beyond the peers, through the whole service over real sockets: walls are INTERSTITIAL,
the publisher's robots directives are honoured before storing, tracking parameters are named and
left out of clean_url, adult pages are flagged, embeds come only from allowed hosts, a fediverse
author is kept, canonical guards hold, and a tweet's URLs come back in order with their places.
Every page is hand-written (tests/pages/walls/ and below)."""
from __future__ import annotations

import io
import json
from pathlib import Path

from PIL import Image as PILImage

from support.service import Client, RunningService, service_settings
from support.warc import warc_records

WALLS = Path(__file__).resolve().parents[1] / "pages" / "walls"


def png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", (width, height)).save(out, "PNG")
    return out.getvalue()


ARTICLE = ('<title>{title}</title><meta property="og:title" content="{title}">'
           '<meta property="og:description" content="A description the publisher wrote.">'
           '<meta property="og:image" content="/pic.png">{head}')


def article(web, host: str, path: str, title: str, head: str = "", **kwargs) -> str:
    web.page(host, "/pic.png", png(400, 300), content_type="image/png")
    return web.page(host, path, ARTICLE.format(title=title, head=head), **kwargs)


async def test_previews_through_the_service(tmp_path, nats_server, localweb):
    web = localweb
    walls = json.loads((WALLS / "cases.json").read_text("utf-8"))
    # One host each: a domain answering 403, 429 and 503 in a row is paused by the fetcher.
    wall_urls = {case["file"]: web.page(f"wall{i}.test", "/" + case["file"], (WALLS / case["file"]).read_bytes(),
                                        status=case["http_status"])
                 for i, case in enumerate(walls)}

    video_oembed = {"type": "video", "version": "1.0", "title": "Clip",
                    "html": '<iframe src="https://player.video.test/e/1" width="640" height="360" '
                            'onload="steal()"></iframe><script src="https://evil.test/x.js"></script>'}
    evil_oembed = {"type": "rich", "version": "1.0", "html": '<iframe src="https://evil.test/frame"></iframe>'}
    web.page("video.test", "/oembed/good", json.dumps(video_oembed), content_type="application/json")
    web.page("video.test", "/oembed/evil", json.dumps(evil_oembed), content_type="application/json")
    oembed_link = '<link rel="alternate" type="application/json+oembed" href="{}">'

    pages = {
        "noarchive": article(web, "pub.test", "/noarchive", "Kept out of the archive",
                             '<meta name="robots" content="NOARCHIVE">'),
        "nosnippet": article(web, "pub.test", "/nosnippet", "No snippet", headers={
            "X-Robots-Tag": "spiderduck: nosnippet"}),
        "other-bot": article(web, "pub.test", "/other-bot", "For another bot", headers={
            "X-Robots-Tag": "googlebot: nosnippet, noarchive"}),
        "no-image": article(web, "pub.test", "/no-image", "No image",
                            '<meta name="spiderduck" content="max-image-preview:none">'),
        "tracked": article(web, "pub.test", "/tracked", "Tracked") + "?utm_source=feed&id=3&fbclid=abc&page=2",
        "adult": article(web, "pub.test", "/adult", "Adults only", '<meta name="rating" content="adult">'),
        "fediverse": article(web, "pub.test", "/fedi", "Federated",
                             '<meta name="fediverse:creator" content="@writer@social.test">'),
        "root-canonical": article(web, "pub.test", "/2026/deep/story", "Deep",
                                  '<meta property="og:url" content="/">'),
        "syndicated": article(web, "copies.test", "/wire/123", "Copied",
                              '<link rel="canonical" href="https://original.test/2026/the-story">'),
        "player": article(web, "pub.test", "/player", "Player",
                          '<meta property="og:video:url" content="https://player.video.test/e/2">'),
        "bad-player": article(web, "pub.test", "/bad-player", "Bad player",
                              '<meta property="og:video:url" content="https://evil.test/player">'),
        "oembed": article(web, "pub.test", "/oembed", "With oEmbed",
                          oembed_link.format(web.url("video.test", "/oembed/good"))),
        "evil-oembed": article(web, "pub.test", "/evil-oembed", "Evil oEmbed",
                               oembed_link.format(web.url("video.test", "/oembed/evil"))),
    }
    # twitter-text finds URLs by their top-level domain: .com hosts, mapped to loopback
    tweet_urls = [web.page(f"tweet{i}.com", "/p", f"<title>Tweet link {i}</title>") for i in range(3)]
    tweet = f"first {tweet_urls[2]} then {tweet_urls[0]} and {tweet_urls[2]} again, last {tweet_urls[1]}"

    settings = service_settings(tmp_path, nats_server.url, **{
        "fetcher.dns_overrides": {"*.test": "127.0.0.1", "*.com": "127.0.0.1"},
        "fetcher.rate_overrides": {"pub.test": 50.0, "video.test": 50.0},
        "process.embed_allow_hosts": ["*.video.test"]})
    async with RunningService(settings), Client(settings) as client:
        for url in (*wall_urls.values(), *pages.values()):
            await client.submit_url(url)
        await client.publish(json.dumps({"tweet": tweet, "id": "t1"}))
        await client.events.wait_for(len(wall_urls) + len(pages) + 3, timeout=90)
        got = dict(zip(pages, await client.get(list(pages.values()))))
        wall_records = dict(zip(wall_urls, await client.get(list(wall_urls.values()))))
        events = {e["url"]: e for e in client.events.items}

    # Walls: INTERSTITIAL, the kind named in error, what the page stated kept; near-misses are not
    for case in walls:
        rec = wall_records[case["file"]]
        if case["expected_kind"]:
            assert rec["status"] == "INTERSTITIAL", case
            assert rec["error"].startswith(case["expected_kind"] + ":"), (case, rec["error"])
            assert rec["http_status"] == case["http_status"]
        else:
            assert rec["status"] != "INTERSTITIAL", (case, rec.get("error"))
            assert rec["status"] == ("OK" if case["http_status"] == 200 else "HTTP_ERROR"), case
    assert wall_records["login-wall.html"]["title"] == "Log in to continue"      # what the wall stated
    assert wall_records["cf-challenge.html"]["title"] == "Just a moment…"        # typeset, as every title

    # Robots directives: recorded lower-case, honoured before storing
    logged = {headers["WARC-Target-URI"] for headers, _ in warc_records(tmp_path / "var" / "content")}
    assert got["noarchive"]["robots_directives"] == ["noarchive"]
    assert "content_ref" not in got["noarchive"] and pages["noarchive"] not in logged
    assert got["nosnippet"]["robots_directives"] == ["nosnippet"] and "description" not in got["nosnippet"]
    assert "robots_directives" not in got["other-bot"] and got["other-bot"]["description"]
    assert got["other-bot"]["content_ref"] and pages["other-bot"] in logged
    assert got["no-image"]["robots_directives"] == ["max-image-preview:none"] and "image" not in got["no-image"]
    assert got["nosnippet"]["image"]["width"] == 400          # the rest of the card stands

    # Tracking parameters: named and left out of clean_url; the URL fetched is the URL given
    tracked = got["tracked"]
    assert tracked["clean_url"] == web.url("pub.test", "/tracked?id=3&page=2")
    assert tracked["removed_params"] == ["utm_source", "fbclid"]
    assert tracked["final_url"] == pages["tracked"]
    assert [h.path for h in web.hits if h.path.startswith("/tracked")] == [
        "/tracked?utm_source=feed&id=3&fbclid=abc&page=2"]
    assert got["adult"]["clean_url"] == pages["adult"] and "removed_params" not in got["adult"]

    assert got["adult"]["sensitive"] is True and "sensitive" not in got["tracked"]
    assert got["fediverse"]["fediverse_creator"] == "@writer@social.test"

    # Canonical guards: the root and another site's page are not this page's canonical URL
    assert got["root-canonical"]["canonical_url"] == pages["root-canonical"]
    assert got["syndicated"]["canonical_url"] == pages["syndicated"]

    # Embeds: one rebuilt iframe from an allowed host, never a script, never another host
    assert got["player"]["embed_html"].startswith('<iframe src="https://player.video.test/e/2"')
    oembed = got["oembed"]["embed_html"]
    assert oembed.startswith('<iframe src="https://player.video.test/e/1" width="640" height="360"')
    assert oembed.endswith("></iframe>") and oembed.count("<") == 2
    assert "onload" not in oembed and "<script" not in oembed and "evil" not in oembed
    assert "embed_html" not in got["bad-player"] and "embed_html" not in got["evil-oembed"]

    # A tweet's URLs: every one resolved, each with its place in order of appearance
    places = [(events[u]["url_index"] if "url_index" in events[u] else 0, events[u]["url_count"])
              for u in tweet_urls]
    assert places == [(1, 3), (2, 3), (0, 3)]
    assert all(events[u]["status"] == "OK" and events[u]["submission_id"] == "t1" for u in tweet_urls)
    assert events[pages["adult"]]["url_count"] == 1 and "url_index" not in events[pages["adult"]]
