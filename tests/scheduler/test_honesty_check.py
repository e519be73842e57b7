"""Issue 43 through the wired stages over a real fetcher, real loopback origins and real stores: the
first card is stored and announced as before; a URL the Honesty Selector finds due gets a second
look as a browser (the browser profile, its cookies kept across its redirects), the verdict is
stored and announced with changed_fields `honesty`, and a `differs` goes to the disputed
publisher too. Triggered mode leaves an ordinary page alone, and the budget records `unchecked`."""
from __future__ import annotations

import pytest
from aiohttp import web

from spiderduck.core import config, metrics
from spiderduck.core.errors import FetcherUnavailable
from spiderduck.core.record import Honesty
from spiderduck.core.status import Status
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.ownership import AllShards
from spiderduck.scheduler.events import processed_event
from spiderduck.scheduler.pipeline import build_pipeline
from spiderduck.scheduler.task import Resolution, Submission
from support.scheduler_stores import stores  # noqa: F401 -- the fixture

LOCAL = {"fetcher.allowed_networks": ["127.0.0.0/8"], "fetcher.dns_overrides": {"*.test": "127.0.0.1"},
         "fetcher.default_rate": 100.0, "process.related_fetches": False}


def page(title: str, image: str = "", extra: str = "") -> str:
    img = f'<meta property="og:image" content="{image}">' if image else ""
    return (f'<!DOCTYPE html><html><head><title>{title}</title><meta property="og:title" content="{title}">'
            f'{img}{extra}</head><body><p>{title}. ' + "Words of the article. " * 30 + "</p></body></html>")


def browser(request: web.Request) -> bool:
    return "Chrome/" in request.headers.get("User-Agent", "")


class Wired:
    """The pipeline on a real Fetcher and real stores; its events and disputes kept."""

    def __init__(self, stores, fetch_hop, settings):
        self.metadata, self.content = stores
        self.events, self.disputed = [], []

        async def publish(outcome, key):
            self.events.append(processed_event(outcome))

        async def dispute(outcome, key):
            self.disputed.append(processed_event(outcome))
        self.pipeline = build_pipeline(settings, metadata=self.metadata, content=self.content,
                                       fetch_hop=fetch_hop, publish=publish, dispute=dispute,
                                       metrics=metrics.recorder("test"))

    async def submit(self, url: str):
        (outcome,) = await self.pipeline(Submission(f'{{"urls": ["{url}"]}}'.encode()))
        return outcome

    async def stored(self, url: str):
        return await self.metadata.get(url)


@pytest.fixture
async def wired(stores, request):
    settings = config.load(env={}, overrides={**LOCAL, **getattr(request, "param", {})})
    async with Fetcher(settings.fetcher, ownership=AllShards()) as fetcher:
        yield Wired(stores, fetcher.fetch, settings)


def ua_cloak(localweb) -> str:
    """A 200 card for crawlers; browsers are sent to another registrable domain."""
    localweb.page("phish.test", "/login", page("Sign in to your bank"))

    async def handler(request):
        if browser(request):
            raise web.HTTPFound(localweb.url("phish.test", "/login"))
        return web.Response(text=page("Quarterly results"), content_type="text/html")
    return localweb.route("news.test", "/story", handler)


def checks(verdict: str) -> float:
    from prometheus_client import REGISTRY
    return REGISTRY.get_sample_value("spiderduck_honesty_checks_total", {"verdict": verdict}) or 0.0


@pytest.mark.parametrize("wired", [{"process.honesty": "all"}], indirect=True)
async def test_a_browser_sent_elsewhere_differs_after_the_first_card(wired, localweb):
    url = ua_cloak(localweb)
    counted = checks("differs")
    outcome = await wired.submit(url)
    assert checks("differs") == counted + 1
    assert outcome.record.title == "Quarterly results" and outcome.record.honesty is None   # the first card
    first, update = wired.events
    assert "honesty" not in first.metadata.ListFields() and first.changed_fields != ["honesty"]
    assert list(update.changed_fields) == ["honesty"]
    assert update.metadata.honesty.verdict == "differs"
    assert list(update.metadata.honesty.differences) == ["final_domain", "redirects", "title", "description"]
    assert update.metadata.honesty.browser_final_url == localweb.url("phish.test", "/login")
    assert [e.url for e in wired.disputed] == [url]
    stored = await wired.stored(url)
    assert stored.honesty.verdict == "differs" and stored.honesty.checked_at > 0
    assert stored.title == "Quarterly results"          # the card is the crawler's, still
    crawler, second = (h for h in localweb.hits_for("news.test", "/story"))
    assert second.at > crawler.at


@pytest.mark.parametrize("wired", [{"process.honesty": "all"}], indirect=True)
async def test_an_honest_page_is_consistent_and_nothing_is_disputed(wired, localweb):
    url = localweb.page("plain.test", "/a", page("Harbour wall rebuilt"))
    await wired.submit(url)
    assert (await wired.stored(url)).honesty.verdict == "consistent"
    assert wired.events[-1].metadata.honesty.verdict == "consistent" and wired.disputed == []


@pytest.mark.parametrize("wired", [{"process.honesty": "all"}], indirect=True)
async def test_the_browser_keeps_the_cookies_its_redirects_set(wired, localweb):
    """A cookie set on the first redirect comes back on the next hop: the origin answers a
    browser with the cookie with another page (a cookie-gated cloak)."""
    seen_cookies = []
    localweb.page("elsewhere.test", "/win", page("You won a prize"))

    async def start(request):
        return web.Response(status=302, headers={"Location": "/land", "Set-Cookie": "gate=1; Path=/"})

    async def land(request):
        seen_cookies.append(request.headers.get("Cookie", ""))
        if request.cookies.get("gate") == "1" and browser(request):
            raise web.HTTPFound(localweb.url("elsewhere.test", "/win"))
        return web.Response(text=page("Recipe of the day"), content_type="text/html")
    url = localweb.route("cookie.test", "/go", start)
    localweb.route("cookie.test", "/land", land)
    await wired.submit(url)
    assert seen_cookies == ["", "gate=1"]               # the crawler sends none; the browser its own
    honesty = (await wired.stored(url)).honesty
    assert honesty.verdict == "differs" and "final_domain" in honesty.differences


async def test_triggered_leaves_an_ordinary_page_alone_and_checks_a_cross_domain_hop(wired, localweb):
    plain = localweb.page("plain.test", "/ordinary", page("An ordinary page"))
    target = localweb.page("target.test", "/article", page("The article"))
    short = localweb.redirect("short.test", "/x", target, status=301)
    await wired.submit(plain)
    assert (await wired.stored(plain)).honesty is None
    assert len(localweb.hits_for("plain.test", "/ordinary")) == 1        # no second look
    await wired.submit(short)
    assert (await wired.stored(short)).honesty.verdict == "consistent"
    assert len(localweb.hits_for("short.test", "/x")) == 2


@pytest.mark.parametrize("wired", [{"process.honesty_budget": 0.5}], indirect=True)
async def test_past_the_budget_a_due_url_is_unchecked_in_its_first_record(wired, localweb):
    """Two cross-domain hops in one minute at a 0.5 share: the first is checked, the second is
    recorded unchecked at once, with no second look and no second event."""
    target = localweb.page("target.test", "/t", page("Target"))
    first = localweb.redirect("short.test", "/1", target, status=301)
    second = localweb.redirect("short.test", "/2", target, status=301)
    await wired.submit(first)
    events, counted = len(wired.events), checks("unchecked")
    outcome = await wired.submit(second)
    assert outcome.record.honesty == Honesty("unchecked") and checks("unchecked") == counted + 1
    assert len(wired.events) == events + 1 and wired.events[-1].metadata.honesty.verdict == "unchecked"
    assert len(localweb.hits_for("short.test", "/2")) == 1


@pytest.mark.parametrize("wired", [{"process.honesty": "off"}], indirect=True)
async def test_off_never_looks_twice(wired, localweb):
    url = ua_cloak(localweb)
    await wired.submit(url)
    assert (await wired.stored(url)).honesty is None and len(wired.events) == 1
    assert len(localweb.hits_for("news.test", "/story")) == 1


async def test_a_check_that_gets_no_fetcher_leaves_the_first_record_and_its_event(stores, localweb):
    """The second look's fetcher does not answer: the URL keeps its record and its one event."""
    settings = config.load(env={}, overrides={**LOCAL, "process.honesty": "all"})
    async with Fetcher(settings.fetcher, ownership=AllShards()) as fetcher:
        async def fetch_hop(url, **kw):
            if kw.get("profile") == "browser":
                raise FetcherUnavailable("no fetcher answered")
            return await fetcher.fetch(url, **kw)
        wired = Wired(stores, fetch_hop, settings)
        url = localweb.page("plain.test", "/b", page("A page"))
        outcome = await wired.submit(url)
    assert outcome.resolution is Resolution.CRAWLED and outcome.record.status is Status.OK
    assert len(wired.events) == 1 and (await wired.stored(url)).honesty is None


@pytest.mark.parametrize("wired", [{"process.honesty": "all"}], indirect=True)
async def test_a_browser_look_that_gets_no_answer_is_unchecked_unless_it_went_elsewhere(wired, localweb):
    """Sent within the same site to a port where nothing listens: a fault, unchecked. Sent to
    another registrable domain where nothing listens: where it went differs already."""
    async def same_site(request):
        if browser(request):
            raise web.HTTPFound("http://dead.odd.test:1/")       # refused: nothing listens
        return web.Response(text=page("Fine"), content_type="text/html")

    async def elsewhere(request):
        if browser(request):
            raise web.HTTPFound("http://dead.other.test:1/")
        return web.Response(text=page("Fine too"), content_type="text/html")
    fault, gone = localweb.route("odd.test", "/p", same_site), localweb.route("odd.test", "/q", elsewhere)
    await wired.submit(fault)
    await wired.submit(gone)
    assert (await wired.stored(fault)).honesty == Honesty("unchecked")
    went = (await wired.stored(gone)).honesty
    assert went.verdict == "differs" and went.browser_final_url == "http://dead.other.test:1/"
    assert {"final_domain", "status"} <= set(went.differences)


@pytest.mark.parametrize("wired", [{"process.honesty": "all", "process.honesty_timeout": 0.5}], indirect=True)
async def test_a_browser_look_past_its_timeout_is_unchecked(wired, localweb):
    """The origin never answers the browser: past process.honesty_timeout the URL is unchecked,
    announced as such, and its card stands."""
    import asyncio
    never = asyncio.Event()

    async def handler(request):
        if browser(request):
            await never.wait()
        return web.Response(text=page("Answered once"), content_type="text/html")
    url = localweb.route("slow.test", "/p", handler)
    outcome = await wired.submit(url)
    never.set()
    assert outcome.record.title == "Answered once"
    stored = await wired.stored(url)
    assert stored.honesty == Honesty("unchecked") and stored.title == "Answered once"
    assert list(wired.events[-1].changed_fields) == ["honesty"]


@pytest.mark.parametrize("wired", [{"process.honesty": "all"}], indirect=True)
async def test_a_record_renewed_during_the_check_is_left_to_its_own_crawl(wired, localweb):
    """Another crawl stores a newer record while the browser looks: the verdict of the older
    card is not written over it, and nothing is announced for it."""
    async def handler(request):
        if browser(request):                      # meanwhile, a newer crawl's record is stored
            current = await wired.stored(url)
            await wired.metadata.put(wired_key[0], type(current)(**{**current.__dict__, "title": "Newer",
                                                                    "fetched_at": current.fetched_at + 1}),
                                     [url])
        return web.Response(text=page("Older"), content_type="text/html")
    url = localweb.route("race.test", "/p", handler)
    wired_key = [url]
    await wired.submit(url)
    stored = await wired.stored(url)
    assert stored.title == "Newer" and stored.honesty is None
    assert len(wired.events) == 1


async def test_an_answer_identical_to_the_crawls_is_not_read_again(stores, localweb):
    """The browser gets the crawl's own bytes at the crawl's URL: its card is the crawl's, and the
    page is extracted once; a page that differs by a byte is read again."""
    from spiderduck.extract.page import extract_page
    read = []

    async def extract(body, url, content_type, http_status=200):
        read.append(url)
        return extract_page(body, url, content_type, parser="selectolax", robots_token="spiderduck",
                            http_status=http_status)
    settings = config.load(env={}, overrides={**LOCAL, "process.honesty": "all"})
    visits = [0]

    async def counter(request):
        visits[0] += 1
        return web.Response(text=page(f"Live: {visits[0]} readers"), content_type="text/html")
    same = localweb.page("same.test", "/a", page("Always the same"))
    varying = localweb.route("live.test", "/a", counter)
    async with Fetcher(settings.fetcher, ownership=AllShards()) as fetcher:
        wired = Wired(stores, fetcher.fetch, settings)
        wired.pipeline = build_pipeline(settings, metadata=wired.metadata, content=wired.content,
                                        fetch_hop=fetcher.fetch, publish=lambda o, k: _none(),
                                        metrics=metrics.recorder("test"), extract=extract)
        await wired.submit(same)
        await wired.submit(varying)
    assert read == [same, varying, varying]
    assert (await wired.stored(same)).honesty.verdict == "consistent"
    assert (await wired.stored(varying)).honesty.verdict == "consistent"     # a counter is no difference


async def _none():
    return None
