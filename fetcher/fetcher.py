"""A fetcher: one hop, polite on its domain, allowed by robots.txt, through the guard.

    Fetcher.fetch(url)
      -> validate (http/https only)
      -> domain slot (bounded queue, fixed rate; QueueFull when full)
      -> robots.txt for the origin (cached; its fetch takes a turn on the slot too)
      -> a turn on the slot -> HttpClient.get (never follows redirects)
"""
from __future__ import annotations

import dataclasses
import logging
import os
import socket
import time

from common import urls
from common.config import FetcherSettings
from common.fetch import FetchResult
from common.status import Status, is_redirect
from fetcher.guard import AddressGuard
from fetcher.http import HttpClient, Limits
from fetcher.politeness import DomainSlot, Politeness
from fetcher.resolver import GuardedResolver
from fetcher.robots import RobotsRules
from fetcher.robots_cache import RobotsCache

log = logging.getLogger("spiderduck.fetcher")

ROBOTS_MAX_REDIRECTS = 5   # RFC 9309 §2.3.1.2: follow at least five


@dataclasses.dataclass(frozen=True)
class RobotsVerdict:
    """The rules for an origin, or the network failure that kept us from reading them.

    An unreachable robots.txt means "disallow all" (RFC 9309 §2.3.1.4); the hop
    then reports why (DNS_ERROR, BLOCKED_ADDRESS, ...) rather than ROBOTS_DISALLOWED.
    """
    rules: RobotsRules
    failure: FetchResult | None = None


class Fetcher:
    def __init__(self, settings: FetcherSettings, *, http: HttpClient | None = None,
                 politeness: Politeness | None = None, robots: RobotsCache | None = None,
                 clock=time.monotonic):
        self.settings = settings
        self.id = settings.id or f"{socket.gethostname()}:{os.getpid()}"
        guard = AddressGuard(settings.allowed_networks)
        self.http = http or HttpClient(
            user_agent=settings.user_agent, guard=guard,
            resolver=GuardedResolver(guard, settings.dns_overrides),
            limits=Limits(settings.max_body_bytes, settings.connect_timeout, settings.total_timeout))
        self.politeness = politeness or Politeness(
            default_rate=settings.default_rate, rate_overrides=settings.rate_overrides,
            queue_size=settings.queue_size)
        self.robots = robots or RobotsCache(max_entries=settings.robots_cache_size)
        self._clock = clock

    async def __aenter__(self) -> "Fetcher":
        await self.http.__aenter__()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.http.__aexit__(*exc)

    async def fetch(self, url: str) -> FetchResult:
        """One hop. Raises politeness.QueueFull when the domain's queue is full."""
        try:
            url = urls.canonicalize(url)
        except urls.InvalidUrl as exc:
            return FetchResult(url=url, status=Status.INVALID_URL, error=str(exc), fetcher_id=self.id)
        host = urls.host_of(url)
        slot = self.politeness.slot(urls.registrable_domain(host))
        started = self._clock()
        verdict = await self.robots.rules_for(urls.origin_of(url),
                                              lambda: self._fetch_robots(url, slot))
        robots_seconds = self._clock() - started
        if verdict.failure is not None:
            return dataclasses.replace(
                verdict.failure, url=url, fetcher_id=self.id, robots_seconds=robots_seconds,
                error=f"robots.txt unreachable: {verdict.failure.error}")
        if not verdict.rules.allowed(url, self.settings.user_agent):
            return FetchResult(url=url, status=Status.ROBOTS_DISALLOWED, fetcher_id=self.id,
                               error="disallowed by robots.txt", robots_seconds=robots_seconds)
        queued = await slot.turn()
        result = await self.http.get(url)
        return dataclasses.replace(result, queued_seconds=queued, robots_seconds=robots_seconds,
                                   fetcher_id=self.id)

    async def _fetch_robots(self, url: str, slot: DomainSlot) -> tuple[RobotsVerdict, float]:
        """RFC 9309 §2.3.1: 2xx parse; 4xx allow all; 5xx or unreachable disallow all."""
        target = urls.origin_of(url) + "/robots.txt"
        s = self.settings
        for _ in range(ROBOTS_MAX_REDIRECTS + 1):
            await slot.turn()
            result = await self.http.get(target, max_bytes=s.robots_max_bytes, accept="text/plain,*/*")
            if result.status is not Status.OK:
                log.info("robots.txt %s unreachable (%s): disallow all for %gs",
                         target, result.status.name, s.robots_error_ttl)
                return RobotsVerdict(RobotsRules.disallow_all(), result), s.robots_error_ttl
            code = result.http_status
            location = result.header("location")
            if is_redirect(code, location):
                nxt = urls.join(target, location)
                if nxt is None or urls.registrable_domain(urls.host_of(nxt)) != slot.domain:
                    # Off-domain robots redirects are not followed here, to keep one owner per domain.
                    return RobotsVerdict(RobotsRules.allow_all()), s.robots_ttl
                target = nxt
                continue
            if 200 <= code < 300:
                return RobotsVerdict(RobotsRules.parse(result.body)), s.robots_ttl
            if 400 <= code < 500:
                return RobotsVerdict(RobotsRules.allow_all()), s.robots_ttl
            return RobotsVerdict(RobotsRules.disallow_all()), s.robots_error_ttl
        return RobotsVerdict(RobotsRules.allow_all()), s.robots_ttl
