"""A fetcher: one hop, polite on its domain, allowed by robots.txt, through the guard.

    Fetcher.fetch(url)
      -> validate (http/https only)
      -> domain slot (bounded queue; FetcherBusy when full; a halted domain answers at once)
      -> robots.txt for the origin (cached under the origin; fetched by robots.fetch, redirects
         followed as RFC 9309 says, each hop taking a turn on this slot);
         its Crawl-delay for our user agent is told to the slot
      -> a turn on the slot, at the domain's pace (politeness, pacing, domain_health)
      -> HttpClient.get (never follows redirects; a re-fetch's validators as If-None-Match and
         If-Modified-Since, on the page request only; a file's part as Range) -> the slot
         observes the outcome

A page hop whose answer declares a type other than HTML (a file) is read up to
fetcher.file_head_bytes only; the scheduler's File Reader asks for what else the file's format
needs by `range` requests (issue 41), each one more Fetcher.fetch: the same slot, robots.txt
and guard as any other.

A hop with profile "browser" (issue 43's second look) is sent as a person's browser would send it
(src/spiderduck/fetcher/browser_profile.py: fetcher.browser_user_agent and a navigation's headers)
and is otherwise the same page hop: the same ownership, slot, robots.txt verdict (for our
crawler's user agent), guard, caps and rendering; it is counted under purpose "honesty".
"""
from __future__ import annotations

import os
import socket
import time

from spiderduck.core import metrics

from spiderduck.core import byte_ranges, urls
from spiderduck.core.config import FetcherSettings, RenderSettings
from spiderduck.core.errors import FetcherBusy, WrongFetcher
from spiderduck.core.fetch import FetchResult
from spiderduck.core.freshness import Validators
from spiderduck.core.status import Status
from spiderduck.fetcher import browser_profile, render_hop
from spiderduck.fetcher.domain_health import HealthPolicy
from spiderduck.fetcher.guard import AddressGuard
from spiderduck.fetcher.http import HttpClient, Limits
from spiderduck.fetcher.ownership import Ownership
from spiderduck.fetcher.pacing import PacingPolicy
from spiderduck.fetcher.politeness import DomainHalted, DomainSlot, Politeness
from spiderduck.fetcher.resolver import GuardedResolver
from spiderduck.fetcher.robots.cache import RobotsCache
from spiderduck.fetcher.robots.fetch import fetch_robots
from spiderduck.fetcher.robots.store import SharedRobotsStore
from spiderduck.fetcher.robots.verdict import RobotsVerdict, VerdictCodec
from spiderduck.fetcher.subresource_pace import LocalBuckets
from spiderduck.fetcher.vulture import Vulture
from spiderduck.core.frozen import evolve


# Known FetchRequest.purpose values; anything else is counted as "other" (labels stay bounded).
# A browser-profile hop is counted as "honesty", whatever its purpose.
_PURPOSES = {"": "page", "page": "page", "image": "image", "oembed": "oembed", "render": "render",
             "file": "file", "manifest": "manifest", "honesty": "honesty"}


def fetcher_id(settings: FetcherSettings) -> str:
    """fetcher.id, or this process's host:pid."""
    return settings.id or f"{socket.gethostname()}:{os.getpid()}"


def politeness_for(settings: FetcherSettings, **kw) -> Politeness:
    """The domain slots a fetcher's settings ask for (built before the Fetcher in the fetcher
    role: the lease keeper's quiet_for and the operators' controls read them). `kw` go to
    Politeness as they are (a test's clock and sleep)."""
    return Politeness(default_rate=settings.default_rate, rate_overrides=settings.rate_overrides,
                      queue_size=settings.queue_size, pacing=PacingPolicy.from_settings(settings),
                      health=HealthPolicy.from_settings(settings), **kw)


class Fetcher:
    def __init__(self, settings: FetcherSettings, *, ownership: Ownership, http: HttpClient | None = None,
                 politeness: Politeness | None = None, robots: RobotsCache | None = None,
                 robots_store: SharedRobotsStore | None = None, clock=time.monotonic, renderer=None,
                 buckets: LocalBuckets | None = None):
        # ownership: the shards served, fixed for the Fetcher's life (AllShards, or a LeaseKeeper
        # the fetcher role runs); robots_store: the shared (memcached) level of the robots cache;
        # owned, closed on exit. renderer: a fetcher.render.Renderer (render.enabled), or a
        # function making one from this fetcher's `subresource`; owned, closed on exit.
        # buckets: the pace of a rendered page's requests to domains other fetchers own
        # (render.subresource_rate; src/spiderduck/fetcher/subresource_pace.py).
        self.settings = settings
        self.id = fetcher_id(settings)
        guard = AddressGuard(settings.allowed_networks)
        self.http = http if http is not None else HttpClient(
            user_agent=settings.user_agent, guard=guard,
            resolver=GuardedResolver(guard, settings.dns_overrides),
            limits=Limits.from_settings(settings))
        self.politeness = politeness if politeness is not None else politeness_for(settings)
        self.vulture = Vulture(self.politeness, interval=settings.vulture_interval,
                               idle_after=settings.domain_idle_after)
        self.robots = robots if robots is not None else RobotsCache(
            max_entries=settings.robots_cache_size, store=robots_store, codec=VerdictCodec())
        self.robots_store = robots_store
        self._ownership = ownership
        self._metrics = metrics.recorder("fetcher")
        self._clock = clock
        self.buckets = buckets if buckets is not None else LocalBuckets(
            RenderSettings().subresource_rate, capacity=settings.queue_size)
        self.renderer = renderer(self.subresource) if callable(renderer) else renderer

    @property
    def ownership(self) -> Ownership:
        """Given at construction, never swapped (no setter)."""
        return self._ownership

    def check_owner(self, domain: str) -> None:
        """Checked on arrival and again right before each request starts."""
        if not self._ownership.owns(domain):
            raise WrongFetcher(f"fetcher {self.id} does not hold the shard of {domain}")

    async def __aenter__(self) -> "Fetcher":
        await self.http.__aenter__()
        await self.vulture.__aenter__()
        if self.renderer is not None:
            await self.renderer.__aenter__()
        return self

    async def __aexit__(self, *exc) -> None:
        if self.renderer is not None:
            await self.renderer.__aexit__(*exc)
        await self.vulture.__aexit__(*exc)
        await self.http.__aexit__(*exc)
        if self.robots_store is not None:
            await self.robots_store.close()

    async def fetch(self, url: str, *, max_body_bytes: int = 0, purpose: str = "",
                    max_wait: float = 0.0, validators: Validators | None = None,
                    render: bool = False, range: str = "", profile: str = "",
                    cookie: str = "") -> FetchResult:
        """One hop. Raises FetcherBusy when the domain's queue is full, or when its
        turn is more than `max_wait` seconds away (the caller's deadline; 0 = no limit).

        `max_body_bytes` lowers the body cap for this request (an image's first bytes); it never
        raises it above fetcher.max_body_bytes. `purpose` ("page", "image", "oembed") labels
        the request's metrics. `validators` make the request conditional: the well-formed ones
        (Validators.headers) go out as If-None-Match / If-Modified-Since on the page request,
        never on robots.txt's; a 304 answer is an OK result with http_status 304 and the
        response's headers, as any other answer is. A page request (purpose "" or "page": every
        hop of a redirect chain) carries fetcher.accept_language, so an origin that varies by
        language answers one language every time; an image's or oEmbed's does not. With `render`, a page whose answer is an empty
        JavaScript shell is also rendered, when this fetcher has a renderer (src/spiderduck/fetcher/render_hop.py).
        A page hop's answer that declares a type other than HTML is read up to
        fetcher.file_head_bytes only (`truncated` when there was more). `range` ("bytes=START-END",
        spiderduck.core.byte_ranges) asks for a file's part: sent as Range with
        Accept-Encoding: identity (offsets are of the file, not of an encoding of it); its answer
        (a 206, or a 200 from an origin that ignores Range) is read up to fetcher.max_body_bytes.
        A malformed range raises byte_ranges.InvalidRange before anything is sent.

        `profile` "browser" sends the hop as a person's browser (browser_profile.navigation_headers:
        fetcher.browser_user_agent, its Accept, Sec-Fetch-*, ...), a page hop in all else, robots.txt
        included (read and obeyed for fetcher.user_agent); "" is our crawler. `cookie` goes out as
        Cookie. An unknown profile or a cookie that cannot be sent raises
        browser_profile.UnknownProfile / InvalidCookie (ValueErrors) before anything is sent."""
        cap = self.settings.max_body_bytes
        browser_profile.check(profile, cookie)
        if range:
            byte_ranges.parse_range(range, cap)
        try:
            url = urls.canonicalize(url)
        except urls.InvalidUrl as exc:
            return FetchResult(url=url, status=Status.INVALID_URL, error=str(exc), fetcher_id=self.id)
        host = urls.host_of(url)
        domain = urls.registrable_domain(host)
        self.check_owner(domain)
        slot = self.politeness.slot(domain)
        if slot.halted:
            return self._halted(url, slot)
        slot.check_wait(max_wait)
        started = self._clock()
        try:
            verdict = await self.robots.rules_for(urls.origin_of(url), lambda: fetch_robots(
                self.http, url, slot, self.settings, self.check_owner))
        except DomainHalted:              # halted while robots.txt waited for its turn
            return self._halted(url, slot)
        robots_seconds = self._clock() - started
        slot.tell_crawl_delay(host, verdict.rules.crawl_delay(self.settings.user_agent))
        refused = self._robots_refusal(url, verdict, robots_seconds)
        if refused is not None:
            return refused
        try:
            queued = await slot.turn()
        except DomainHalted:
            return self._halted(url, slot)
        self.check_owner(slot.domain)
        headers = validators.headers() if validators else {}
        browser = profile == browser_profile.BROWSER
        page = browser or _PURPOSES.get(purpose) == "page"
        as_browser = {}
        if browser:
            headers.update(browser_profile.navigation_headers(self.settings, cookie))
            as_browser = {"user_agent": headers.pop("User-Agent"), "accept": headers.pop("Accept")}
        elif cookie:
            headers["Cookie"] = cookie
        if self.settings.accept_language and page:
            headers["Accept-Language"] = self.settings.accept_language
        if range:
            headers.update({"Range": range, "Accept-Encoding": "identity"})
        result = await self.http.get(url, on_sent=slot.mark_sent,
                                     max_bytes=min(max_body_bytes, cap) if max_body_bytes > 0 else cap,
                                     headers=headers or None,
                                     file_bytes=self.settings.file_head_bytes if page and not range else 0,
                                     **as_browser)
        slot.observe(result)
        label = _PURPOSES["honesty"] if browser else _PURPOSES.get(purpose, "other")
        self._metrics.count("requests", status=result.status.name, purpose=label,
                            http=f"{result.http_status // 100}xx" if result.http_status else "none")
        self._metrics.observe("origin_seconds", result.origin_seconds)
        self._metrics.observe("queued_seconds", queued)
        result = evolve(result, queued_seconds=queued, robots_seconds=robots_seconds,
                                     fetcher_id=self.id)
        if render and self.renderer is not None and render_hop.wants_render(result):
            result = await render_hop.rendered(self.renderer, result)
        return result

    async def subresource(self, url: str) -> FetchResult:
        """One GET of a request the headless browser makes while rendering a page, whatever its
        domain (issue 38): none at all while the domain is halted or paused (its controls, which
        every fetcher watches); none where the origin's robots.txt disallows it for our user
        agent; paced by the domain's politeness slot where this fetcher owns the domain, else by a
        local bucket at render.subresource_rate (src/spiderduck/fetcher/subresource_pace.py), which
        paces the robots.txt fetch too; through the address guard and the body cap
        (src/spiderduck/fetcher/render_hop.py). Never raises for the URL's sake: a refusal is a
        failed result, and the render goes on without it. It carries fetcher.accept_language, as the
        browser's requests do (the renderer gives the browser the same value)."""
        try:
            url = urls.canonicalize(url)
            host = urls.host_of(url)
            domain = urls.registrable_domain(host)
        except (urls.InvalidUrl, ValueError) as exc:
            return FetchResult(url=url, status=Status.INVALID_URL, error=str(exc), fetcher_id=self.id)
        owned = self._ownership.owns(domain)
        pace = self.politeness.slot(domain) if owned else self.buckets.bucket(domain)
        check = self.check_owner if owned else self._check_held
        try:
            self._check_held(domain)
            verdict = await self.robots.rules_for(urls.origin_of(url), lambda: fetch_robots(
                self.http, url, pace, self.settings, check))
            if owned:
                pace.tell_crawl_delay(host, verdict.rules.crawl_delay(self.settings.user_agent))
            refused = self._robots_refusal(url, verdict, 0.0)
            if refused is not None:
                return refused
            await pace.turn()
            self._check_held(domain)
        except (DomainHalted, FetcherBusy, WrongFetcher) as exc:
            return FetchResult(url=url, status=Status.CONNECTION_ERROR, error=str(exc), fetcher_id=self.id)
        languages = {"Accept-Language": self.settings.accept_language} if self.settings.accept_language else None
        result = await self.http.get(url, accept=render_hop.SUBRESOURCE_ACCEPT, on_sent=pace.mark_sent,
                                     headers=languages)
        pace.observe(result)
        self._metrics.count("requests", status=result.status.name, purpose=_PURPOSES["render"],
                            http=f"{result.http_status // 100}xx" if result.http_status else "none")
        return result

    def _check_held(self, domain: str) -> None:
        """DomainHalted when `domain` is halted or paused (Politeness.held)."""
        reason = self.politeness.held(domain)
        if reason:
            raise DomainHalted(domain, reason)

    def _robots_refusal(self, url: str, verdict: RobotsVerdict, robots_seconds: float) -> FetchResult | None:
        """The failed result when robots.txt could not be read or disallows `url`; else None."""
        if verdict.failure is not None:
            return evolve(
                verdict.failure, url=url, fetcher_id=self.id, robots_seconds=robots_seconds,
                error=f"robots.txt unreachable: {verdict.failure.error}")
        if not verdict.rules.allowed(url, self.settings.user_agent):
            return FetchResult(url=url, status=Status.ROBOTS_DISALLOWED, fetcher_id=self.id,
                               error="disallowed by robots.txt", robots_seconds=robots_seconds)
        return None

    def _halted(self, url: str, slot: DomainSlot) -> FetchResult:
        """A halted domain's hops fail fast: CONNECTION_ERROR with the reason (see politeness)."""
        return FetchResult(url=url, status=Status.CONNECTION_ERROR, fetcher_id=self.id,
                           error=str(DomainHalted(slot.domain, slot.health.reason)))
