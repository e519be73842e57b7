"""The two looks at a URL that issue 43 compares (spiderduck.extract.honesty.Look).

`first_look(outcome)` is what the crawl saw: its chain, final status and the card its final page
stated. `browser_look(...)` fetches the URL again as a person's browser would: every hop through
the fetcher that owns its domain with the browser profile (FetchRequest.profile "browser": the
browser's user agent and request headers; the same guard, politeness and robots.txt verdict), the
cookies each answer sets sent back on the hops after it (an RFC 6265 jar, per host and path,
within MAX_COOKIE_CHARS), HTTP redirects followed as the crawl follows them, and also a meta refresh
or Refresh header on a page with a card (the crawl follows only card-less ones) and a redirect an
inline script states with a literal URL when the page loads (spiderduck.extract.script_redirect).
A shell renders as the crawl's does (render.enabled). The final page's card is read by the same
extraction as the crawl's, and a rendered page from its DOM. A URL on the denylist is not fetched.
"""
from __future__ import annotations

import http.cookies
from dataclasses import dataclass
from typing import Awaitable, Callable

import aiohttp
from yarl import URL

from spiderduck.core import redirects, urls
from spiderduck.core.fetch import HTML_TYPES, MAX_COOKIE_CHARS, RENDER_OK, RENDERED_TYPE, FetchResult
from spiderduck.core.record import PageMetadata
from spiderduck.core.status import Status
from spiderduck.extract import refresh
from spiderduck.extract.honesty import Look
from spiderduck.extract.script_redirect import script_redirect
from spiderduck.scheduler.file_record import media_type
from spiderduck.scheduler.forgetting import Forgetting
from spiderduck.scheduler.task import FetchHop, Outcome

SCRIPT = "script"           # a hop's kind: an inline script's redirect

Extract = Callable[..., Awaitable[PageMetadata]]


@dataclass(frozen=True)
class BrowserLook:
    look: Look | None           # None: the URL was forgotten on the way
    forgotten: bool = False     # a hop's URL is on the denylist: nothing is recorded
    answered: bool = True       # False: its last hop got no answer (where it went still tells)


def first_look(outcome: Outcome) -> Look:
    """What the crawl saw: its final URL, the URLs before it, the final status, and the card
    the final page stated (none when it was not a page)."""
    hops = outcome.task.hops
    final = hops[-1] if hops else None
    return _look(final.url if final is not None else outcome.record.final_url,
                 tuple(h.url for h in hops[:-1]), final.http_status if final is not None else 0,
                 outcome.page)


async def browser_look(fetch_hop: FetchHop, url: str, *, extract: Extract, max_redirects: int,
                       refresh_max_delay: float, forgetting: Forgetting | None = None,
                       crawled: Outcome | None = None) -> BrowserLook:
    """The URL again as a person's browser sees it (see the module). `crawled`: the crawl's
    outcome; a final answer byte for byte the crawl's, at the same URL, is not read again (its
    card is the crawl's page)."""
    forgotten = forgetting or Forgetting()
    jar = aiohttp.CookieJar(unsafe=True, quote_cookie=False)

    async def hop(at: str) -> FetchResult:
        if forgotten(at):
            return FetchResult(url=at, status=Status.FORGOTTEN)
        cookie = _cookie_header(jar, at)
        result = await fetch_hop(at, profile="browser", **({"cookie": cookie} if cookie else {}))
        _keep_cookies(jar, result)
        return result

    def moved(result: FetchResult) -> tuple[str, str] | None:
        found = refresh.next_hop_of(result, max_delay=refresh_max_delay, even_with_card=True)
        if found is not None:
            return found
        if result.status is not Status.OK or not 200 <= result.http_status < 300 or not _is_html(result):
            return None
        target = script_redirect(_page_markup(result), result.url)
        try:
            return (SCRIPT, urls.canonicalize(target)) if target else None
        except urls.InvalidUrl:
            return None

    chain = await redirects.follow(hop, urls.canonicalize(url), max_redirects=max_redirects, refresh=moved)
    final = chain.hops[-1]
    if final.status is Status.FORGOTTEN:
        return BrowserLook(None, forgotten=True)
    before = tuple(h.url for h in chain.hops[:-1])
    if final.status is not Status.OK or not final.http_status:
        # No answer at the end: where it went still tells (compared by domain), nothing else does.
        return BrowserLook(Look(final.url, before, status=0), answered=False)
    page = None
    if chain.failure is None and 200 <= final.http_status < 300 and _is_html(final):
        page = _same_page(final, crawled)
        if page is None:
            page = await extract(_page_markup(final), final.url,
                                 RENDERED_TYPE if _rendered(final) else final.header("content-type"),
                                 final.http_status)
    return BrowserLook(_look(final.url, before, final.http_status, page))


def _same_page(final: FetchResult, crawled: Outcome | None) -> PageMetadata | None:
    """The crawl's page, when the browser's final answer is the crawl's own, byte for byte."""
    if crawled is None or crawled.page is None or not crawled.task.hops:
        return None
    first = crawled.task.hops[-1]
    if first.url != final.url or _page_markup(first) != _page_markup(final):
        return None
    return crawled.page


def _look(final_url: str, chain: tuple[str, ...], status: int, page: PageMetadata | None) -> Look:
    if page is None:
        return Look(final_url, chain, status)
    return Look(final_url, chain, status, title=page.title, description=page.description,
                image=page.image.url if page.image is not None else "", claimed_url=page.claimed_url,
                site_name=page.site_name)


def _rendered(result: FetchResult) -> bool:
    return result.render_outcome == RENDER_OK and bool(result.rendered)


def _page_markup(result: FetchResult) -> bytes:
    return result.rendered if _rendered(result) else result.body


def _is_html(result: FetchResult) -> bool:
    return media_type(result) in HTML_TYPES


def _cookie_header(jar: aiohttp.CookieJar, at: str) -> str:
    """The jar's cookies for `at`, as one Cookie header of at most MAX_COOKIE_CHARS (whole cookies)."""
    try:
        found = jar.filter_cookies(URL(at, encoded=True))
    except (ValueError, TypeError):
        return ""
    header = ""
    for name, morsel in found.items():
        pair = f"{name}={morsel.coded_value}"       # as the origin set it (quotes kept)
        if any(c in pair for c in "\r\n\0") or len(header) + len(pair) + 2 > MAX_COOKIE_CHARS:
            continue
        header = f"{header}; {pair}" if header else pair
    return header


def _keep_cookies(jar: aiohttp.CookieJar, result: FetchResult) -> None:
    """The cookies an answer sets, kept for the hops after it (a malformed one, or one for a
    public suffix, is left out)."""
    for name, value in result.headers:
        if name.lower() != "set-cookie":
            continue
        cookie: http.cookies.SimpleCookie = http.cookies.SimpleCookie()
        try:
            cookie.load(value[:MAX_COOKIE_CHARS])
            for key in [k for k, m in cookie.items() if m["domain"] and urls.is_public_suffix(m["domain"])]:
                del cookie[key]     # `Domain=com`: a browser refuses it (RFC 6265 §5.3 step 5)
            jar.update_cookies(cookie, response_url=URL(result.url, encoded=True))
        except (http.cookies.CookieError, ValueError, TypeError):
            continue
