"""Refresh hops (issue 41) through the wired stages over a real fetcher and real loopback origins:
a page with no card of its own that refreshes (<meta http-equiv=refresh>, a Refresh header) within
process.meta_refresh_max_delay is a hop of its kind in the record; a page that refreshes later, has
a card, or shows an article is the final page; a refresh hop is a page request (Accept-Language),
through the address guard and the denylist, and counts against fetcher.max_redirects. Real SQLite
and WARC files (support.scheduler_stores)."""
from __future__ import annotations

import pytest
from aiohttp import web

from spiderduck.bus.denylist import Denylist, Entry
from spiderduck.core import config, metrics
from spiderduck.core.record import HTTP_REDIRECT, META_REFRESH, REFRESH_HEADER, Redirect
from spiderduck.core.status import Status
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.ownership import AllShards
from spiderduck.scheduler.events import processed_event
from spiderduck.scheduler.pipeline import build_pipeline
from spiderduck.scheduler.task import Resolution, Submission
from support.scheduler_stores import stores  # noqa: F401 -- the fixture

LOCAL = {"fetcher.allowed_networks": ["127.0.0.0/8"], "fetcher.dns_overrides": {"*.test": "127.0.0.1"},
         "fetcher.default_rate": 100.0, "process.related_fetches": False,
         # the crawler's own hops are counted here; a browser's second look (issue 43) follows a
         # refresh on a page with a card, and is tests/scheduler/test_honesty_check.py's
         "process.honesty": "off"}
FINAL = ("<!DOCTYPE html><html><head><title>The final page</title>"
         '<meta property="og:title" content="The final page"></head><body><p>Content.</p></body></html>')


def page(head: str = "", body: str = "") -> str:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>"


def meta(content: str) -> str:
    return f'<meta http-equiv="refresh" content="{content}">'


REDIRECTING = "<title>Redirecting…</title>"


class Wired:
    """The pipeline on a real Fetcher and real stores; its outcomes and events kept."""

    def __init__(self, stores, fetcher: Fetcher, settings, denylist: Denylist | None = None):
        self.metadata, self.content = stores
        self.events = []

        async def publish(outcome, key):
            self.events.append(processed_event(outcome))
        self.pipeline = build_pipeline(settings, metadata=self.metadata, content=self.content,
                                       fetch_hop=fetcher.fetch, publish=publish,
                                       metrics=metrics.recorder("test"), denylist=denylist)

    async def submit(self, url: str):
        (outcome,) = await self.pipeline(Submission(f'{{"urls": ["{url}"]}}'.encode()))
        return outcome


@pytest.fixture
async def wired(stores, request):
    overrides = {**LOCAL, **getattr(request, "param", {})}
    settings = config.load(env={}, overrides=overrides)
    async with Fetcher(settings.fetcher, ownership=AllShards()) as fetcher:
        yield Wired(stores, fetcher, settings)


def assert_final_is_itself(outcome, url: str) -> None:
    assert outcome.record.status is Status.OK, outcome.record
    assert outcome.record.final_url == url and outcome.record.redirects == ()


async def test_a_meta_refresh_of_a_redirecting_page_is_a_hop(wired, localweb):
    final = localweb.page("dest.test", "/story", FINAL)
    start = localweb.page("short.test", "/a", page(REDIRECTING + meta(f"0; url={final}"), "Redirecting…"))
    outcome = await wired.submit(start)
    record = outcome.record
    assert outcome.resolution is Resolution.CRAWLED and record.status is Status.OK
    assert record.final_url == final and record.title == "The final page"
    assert record.redirects == (Redirect(start, 200, META_REFRESH),)
    # The kind reaches the event (its UrlMetadata) and the stored record.
    assert [(r.url, r.http_status, r.kind) for r in wired.events[-1].metadata.redirects] == [
        (start, 200, META_REFRESH)]
    assert (await wired.metadata.get(start)).redirects == (Redirect(start, 200, META_REFRESH),)


async def test_a_refresh_header_is_a_hop(wired, localweb):
    localweb.page("hdr.test", "/b", FINAL)
    start = localweb.page("hdr.test", "/a", "", headers={"Refresh": "0; url=/b"})
    record = (await wired.submit(start)).record
    assert record.final_url == localweb.url("hdr.test", "/b") and record.title == "The final page"
    assert record.redirects == (Redirect(start, 200, REFRESH_HEADER),)


async def test_each_hop_says_how_it_moved_on(wired, localweb):
    final = localweb.page("mix.test", "/c", FINAL)
    localweb.page("mix.test", "/b", page(REDIRECTING, "One moment…"), headers={"Refresh": "1;url=/c"})
    localweb.page("mix.test", "/a2", page(REDIRECTING + meta("0;url=/b")))
    start = localweb.redirect("mix.test", "/a", localweb.url("mix.test", "/a2"))
    record = (await wired.submit(start)).record
    assert record.final_url == final
    assert [(r.http_status, r.kind) for r in record.redirects] == [
        (301, HTTP_REDIRECT), (200, META_REFRESH), (200, REFRESH_HEADER)]


async def test_a_refresh_later_than_the_max_delay_is_not_followed(wired, localweb):
    localweb.page("late.test", "/b", FINAL)
    start = localweb.page("late.test", "/a", page(REDIRECTING + meta("10; url=/b")))
    assert_final_is_itself(await wired.submit(start), start)
    assert localweb.hits_for("late.test", "/b") == []


@pytest.mark.parametrize("wired", [{"process.meta_refresh_max_delay": 0}], indirect=True)
async def test_a_max_delay_of_zero_follows_none(wired, localweb):
    localweb.page("off.test", "/b", FINAL)
    start = localweb.page("off.test", "/a", page(REDIRECTING + meta("0; url=/b")), headers={"Refresh": "0;url=/b"})
    assert_final_is_itself(await wired.submit(start), start)
    assert localweb.hits_for("off.test", "/b") == []


async def test_a_page_with_a_card_or_an_article_is_not_left(wired, localweb):
    localweb.page("own.test", "/b", FINAL)
    carded = localweb.page("own.test", "/card", page(
        '<title>Story</title><meta property="og:title" content="A story">' + meta("0; url=/b")))
    article = localweb.page("own.test", "/article", page(
        "<title>Story</title>" + meta("0; url=/b"),
        "<article>" + "<p>The harbour wall will be rebuilt by spring, the council said.</p>" * 30 + "</article>"))
    outcome = await wired.submit(carded)
    assert_final_is_itself(outcome, carded)
    assert outcome.record.title == "A story"
    assert_final_is_itself(await wired.submit(article), article)
    assert localweb.hits_for("own.test", "/b") == []


async def test_a_refresh_loop_ends_at_the_redirect_limit(wired, localweb):
    a = localweb.page("loop.test", "/a", page(REDIRECTING + meta("0; url=/b")))
    localweb.page("loop.test", "/b", page(REDIRECTING, "…"), headers={"Refresh": "0; url=/a"})
    record = (await wired.submit(a)).record
    assert record.status is Status.TOO_MANY_REDIRECTS
    assert record.error == "more than 10 redirects (a redirect loop)"     # fetcher.max_redirects: 10
    assert len(localweb.hits_for("loop.test", "/a")) + len(localweb.hits_for("loop.test", "/b")) == 11
    assert {r.kind for r in record.redirects} == {META_REFRESH, REFRESH_HEADER}


async def test_a_refresh_to_a_private_address_is_refused_as_a_3xx_to_it_is(wired, localweb):
    by_refresh = localweb.page("guard.test", "/refresh", page(REDIRECTING + meta("0; url=http://10.1.2.3/admin")))
    by_redirect = localweb.redirect("guard.test", "/moved", "http://10.1.2.3/admin")
    refreshed, redirected = (await wired.submit(by_refresh)).record, (await wired.submit(by_redirect)).record
    assert refreshed.status is redirected.status is Status.BLOCKED_ADDRESS
    assert refreshed.final_url == redirected.final_url == "http://10.1.2.3/admin"
    assert refreshed.error == redirected.error and "10.1.2.3" in refreshed.error
    assert refreshed.redirects == (Redirect(by_refresh, 200, META_REFRESH),)


async def test_a_refresh_to_a_forgotten_url_is_never_fetched(stores, localweb):
    final = localweb.page("gone.test", "/page", FINAL)
    start = localweb.page("link.test", "/a", page(REDIRECTING + meta(f"0; url={final}")))
    settings = config.load(env={}, overrides=LOCAL)
    async with Fetcher(settings.fetcher, ownership=AllShards()) as fetcher:
        forgetting = Wired(stores, fetcher, settings, denylist=Denylist([Entry(url=final)]))
        outcome = await forgetting.submit(start)
    assert outcome.record.status is Status.FORGOTTEN
    assert localweb.hits_for("gone.test") == []


@pytest.mark.parametrize("content", [
    "0; url=javascript:alert(1)", "0; url=data:text/html,<h1>hi</h1>", "0; url=mailto:x@y.test",
    "0; url=", "5;url=", ";;;", "0", "999999999999999999999; url=/x", "0; url=http://[bad",
    "0; url='" + "x" * 1_000_000,           # a 1 MB content: a body over the scan
    "0; url=/" + "x" * 20_000,              # a 20 KB URL within it
])
async def test_what_is_no_hop_leaves_the_page_final(wired, localweb, content):
    start = localweb.page("odd.test", "/a", page(REDIRECTING + meta(content.replace('"', "&quot;"))))
    assert_final_is_itself(await wired.submit(start), start)


async def test_a_refresh_hop_is_a_page_request_with_accept_language(wired, localweb):
    sent = []

    async def final(request):
        sent.append((request.path, request.headers.get("Accept-Language")))
        return web.Response(text=FINAL, content_type="text/html")

    async def first(request):
        sent.append((request.path, request.headers.get("Accept-Language")))
        return web.Response(text=page(REDIRECTING + meta("0;url=/b")), content_type="text/html")
    start = localweb.route("lang.test", "/a", first)
    localweb.route("lang.test", "/b", final)
    record = (await wired.submit(start)).record
    assert record.final_url == localweb.url("lang.test", "/b")
    assert sent == [("/a", "en-US,en;q=0.9"), ("/b", "en-US,en;q=0.9")]    # fetcher.accept_language
