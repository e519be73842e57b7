"""The whole path over real sockets: local web, fetcher (gRPC), scheduler (JetStream), metadata-api."""
from __future__ import annotations

import asyncio
import json

from aiohttp import web

from spiderduck.stores.warc_files import WarcFileStore

from support.service import Client, RunningService, service_settings
from support.warc import gzip_members

STORY = """<!doctype html><html lang="en"><head><title>The Story</title>
<link rel="canonical" href="/story">
<meta property="og:site_name" content="News Test"></head><body>hi</body></html>"""

# "Привет, мир" in windows-1251; the charset is only in <meta>.
CYRILLIC_TITLE = "Привет, мир"
META_CHARSET = ('<html><head><meta charset="windows-1251"><title>' + CYRILLIC_TITLE +
                "</title></head><body></body></html>").encode("windows-1251")

JITTER = 0.05     # seconds an arrival at a loopback origin may be late on a loaded machine


async def test_submitted_urls_are_resolved_stored_and_announced(tmp_path, nats_server, localweb):
    web = localweb
    final = web.page("news.test", "/story", STORY)
    mid = web.redirect("mid.test", "/b", final, status=302)
    short = web.redirect("short.test", "/a", mid, status=301)
    web.robots("closed.test", "User-agent: *\nDisallow: /private\n")
    web.page("closed.test", "/private/page", "<title>secret</title>")
    disallowed = web.url("closed.test", "/private/page")
    missing = web.url("news.test", "/missing")
    meta_page = web.page("cyr.test", "/page", META_CHARSET, content_type="text/html")
    tweeted = web.page("tweeted.example.org", "/post", "<title>Tweeted</title>")
    for n in range(4):
        web.page("news.test", f"/more/{n}", f"<title>More {n}</title>")

    settings = service_settings(tmp_path, nats_server.url, **{
        "fetcher.dns_overrides": {"*.test": "127.0.0.1", "*.example.org": "127.0.0.1"},
        "fetcher.rate_overrides": {"news.test": 4.0}})
    async with RunningService(settings), Client(settings) as client:
        for url in (short, disallowed, missing, meta_page):
            await client.submit_url(url)
        await client.publish(json.dumps({"tweet": f"look at this {tweeted} !"}))
        more = [web.url("news.test", f"/more/{n}") for n in range(4)]
        for url in more:
            await client.publish(url)                     # bare URL messages
        submitted = [short, disallowed, missing, meta_page, tweeted, *more]
        await client.events.wait_for(len(submitted), timeout=60)

        for url in submitted:
            assert len(client.events.for_url(url)) == 1, url
        short_rec, mid_rec, final_rec, dis_rec, missing_rec, meta_rec, tweet_rec = await client.get(
            [short, mid, final, disallowed, missing, meta_page, tweeted])

    assert short_rec["status"] == "OK"
    assert short_rec["title"] == "The Story"
    assert short_rec["canonical_url"] == final
    assert short_rec["site_name"] == "News Test"
    assert short_rec["redirects"] == [{"url": short, "http_status": 301},
                                      {"url": mid, "http_status": 302}]
    # Every URL of the chain resolves to the one record, which names the URL asked for.
    assert [r["url"] for r in (short_rec, mid_rec, final_rec)] == [short, mid, final]
    assert {**mid_rec, "url": short} == short_rec and {**final_rec, "url": short} == short_rec

    assert dis_rec["status"] == "ROBOTS_DISALLOWED"
    assert web.hits_for("closed.test", "/private/page") == []
    assert len(web.hits_for("closed.test", "/robots.txt")) == 1

    assert missing_rec["status"] == "HTTP_ERROR" and missing_rec["http_status"] == 404

    assert meta_rec["status"] == "OK"
    assert meta_rec["title"] == CYRILLIC_TITLE
    assert meta_rec["charset"] == "windows-1251"

    assert tweet_rec["status"] == "OK" and tweet_rec["title"] == "Tweeted"

    # One WARC record per fetch (3 hops of the chain, the 404, the charset page, the tweeted
    # page, 4 x more; robots.txt is the fetcher's own business), and content_ref finds the final one.
    content = tmp_path / "var" / "content"
    members = [m for f in content.glob("*.warc.gz") for m in gzip_members(f.read_bytes())]
    assert len(members) == 13          # + one /favicon.ico probe per site (news, cyr, tweeted)
    store = WarcFileStore(str(content))
    headers, block = await store.read(short_rec["content_ref"])
    await store.close()
    assert headers["WARC-Target-URI"] == final and b"The Story" in block

    news_hits = sorted((h.at, h.path) for h in web.hits_for("news.test"))
    assert len(news_hits) >= 6                       # robots, story, missing, 4 x more
    # A page right after robots.txt is not compared: the fetcher sends it only once robots.txt
    # was answered, so an origin slow to take the robots.txt request shrinks the gap it records
    # (225 ms seen on a loaded CI run, as in test_failover).
    # Arrivals are measured at the origin, so one request the loaded machine delivers late makes
    # the next gap look short (229 ms seen): each gap may lose JITTER, and the pages after
    # robots.txt, taken together, still span their number of intervals at news.test's rate.
    pages = [at for at, path in news_hits if path != "/robots.txt"]
    gaps = [b - a for a, b in zip(pages, pages[1:])]
    assert min(gaps) >= 1 / 4.0 - JITTER, gaps        # never closer than the rate allows, give or take
    assert pages[-1] - pages[0] >= (len(pages) - 1) / 4.0 - JITTER, pages


async def test_many_urls_are_in_flight_at_once_bounded_by_config(tmp_path, nats_server, localweb):
    now = {"in_flight": 0, "max": 0}

    async def slow(request):
        now["in_flight"] += 1
        now["max"] = max(now["max"], now["in_flight"])
        await asyncio.sleep(0.2)                  # a slow origin
        now["in_flight"] -= 1
        return web.Response(text="<title>slow</title>", content_type="text/html")

    urls = [localweb.route(f"site{n}.test", "/", slow) for n in range(12)]
    settings = service_settings(tmp_path, nats_server.url, **{"scheduler.max_in_flight": 4})
    async with RunningService(settings), Client(settings) as client:
        for url in urls:
            await client.submit_url(url)
        await client.events.wait_for(len(urls), timeout=60)
    assert now["max"] == 4          # many at once, never more than scheduler.max_in_flight


async def test_a_slow_domain_never_starves_the_others(tmp_path, nats_server, localweb):
    gate = asyncio.Event()

    async def stuck(request):
        await gate.wait()
        return web.Response(text="<title>finally</title>", content_type="text/html")

    slow = [localweb.route("slow.test", f"/{n}", stuck) for n in range(10)]
    fast = [localweb.page(f"fast{n}.test", "/", f"<title>fast {n}</title>") for n in range(3)]
    settings = service_settings(tmp_path, nats_server.url, **{
        "scheduler.max_in_flight": 6, "scheduler.max_hops_per_domain": 1,
        "scheduler.busy_retry": 0.1})
    async with RunningService(settings), Client(settings) as client:
        for url in slow + fast:                   # the slow domain's URLs come first
            await client.submit_url(url)
        await client.events.wait_for(len(fast), timeout=30)
        assert {e["url"] for e in client.events.items} == set(fast)   # while slow.test hangs
        gate.set()
        await client.events.wait_for(len(slow) + len(fast), timeout=60)
        records = await client.get(slow)
    assert all(r["status"] == "OK" for r in records)


async def test_a_viral_link_is_fetched_once_and_every_sighting_counts(tmp_path, nats_server, localweb):
    gate = asyncio.Event()

    async def page(request):
        await gate.wait()
        return web.Response(text="<title>viral</title>", content_type="text/html")

    url = localweb.route("viral.test", "/", page)
    settings = service_settings(tmp_path, nats_server.url)
    async with RunningService(settings), Client(settings) as client:
        for _ in range(10):
            await client.submit_url(url)
        while not localweb.hits_for("viral.test", "/"):
            await asyncio.sleep(0.01)             # the one crawl is at the origin
        gate.set()
        await client.events.wait_for(10, timeout=30)
        [record] = await client.get([url])
    assert len(localweb.hits_for("viral.test", "/")) == 1
    assert sorted(e["resolution"] for e in client.events.items).count("CRAWLED") == 1
    assert record["share_count"] == 10
