"""Fetching one origin's robots.txt: redirects and status codes as RFC 9309 §2.3.1 says.

    fetch_robots(http, url, slot, settings, check_owner) -> (RobotsVerdict, ttl)

      GET <origin of url>/robots.txt, then each redirect's target, through the address guard
        no answer (DNS, refused, timeout, guard)   UNREACHABLE   disallow all, error TTL  §2.3.1.4
        301 302 303 307 308 + a usable Location    the next hop, up to MAX_REDIRECTS      §2.3.1.2
        more redirects than MAX_REDIRECTS          ALLOW_ALL     "unavailable"            §2.3.1.2
        other 3xx, no Location, non-http(s) one    ALLOW_ALL     "unavailable"            §2.3.1.3
        2xx                                        PARSED        the body's rules         §2.3.1.1
        400-499 (401, 403, 404 and 429 too)        ALLOW_ALL     "unavailable"            §2.3.1.3
        500-599, or any other code                 DISALLOW_ALL  error TTL                §2.3.1.4

The chain is followed by spiderduck.core.redirects.follow (RFC 9110 §15.4: which codes redirect, the
Location joined against the requested URL); what ends it is mapped onto a verdict here.

Decisions the RFC leaves open:
- Redirects are followed across authorities and registrable domains; every hop is a new
  request, so the address guard checks its resolved and connected address (fetcher.http).
- A hop the guard refuses (a redirect into private space) is UNREACHABLE, so disallow all:
  the hop reports BLOCKED_ADDRESS, not ROBOTS_DISALLOWED.
- 429 is a 4xx, so "unavailable" and allow all, as the RFC says (Google treats it as a 5xx).
  The origin's Retry-After still holds the slot back (pacing), for a same-domain hop.
- The verdict is the original origin's: it is cached under that origin (RobotsCache), and the
  target's rules apply to the original site's paths. Nothing is cached for the target.

Politeness: every hop waits for a turn on the slot of the original URL's domain, so that one
slot paces the whole chain. A hop to another domain does not touch that domain's slot (its
owner may be another fetcher: one owner per domain), and its answer is not observed by our
slot, so another domain's errors or Retry-After never pause, halt or hold ours. What that
domain sees from us this way is bounded: at most MAX_REDIRECTS requests per robots.txt fetch of
an origin (one in flight, then cached), at our slot's pace.
"""
from __future__ import annotations

import logging
from typing import Callable

from spiderduck.core import metrics

from spiderduck.core import redirects

from spiderduck.core import urls
from spiderduck.core.config import FetcherSettings
from spiderduck.core.fetch import FetchResult
from spiderduck.core.status import Status
from spiderduck.fetcher.http import HttpClient
from spiderduck.fetcher.politeness import DomainSlot
from spiderduck.fetcher.robots.verdict import RobotsVerdict, VerdictKind

__all__ = ["MAX_REDIRECTS", "fetch_robots", "verdict_for"]

log = logging.getLogger("spiderduck.fetcher.robots")
_metrics = metrics.recorder("fetcher")

# RFC 9309 §2.3.1.2: crawlers "SHOULD follow at least five consecutive redirects, even across
# authorities"; past five they "MAY assume that the robots.txt file is unavailable".
MAX_REDIRECTS = 5

ACCEPT = "text/plain,*/*"


async def fetch_robots(http: HttpClient, url: str, slot: DomainSlot, settings: FetcherSettings,
                       check_owner: Callable[[str], None]) -> tuple[RobotsVerdict, float]:
    """The verdict for `url`'s origin and the seconds it may be trusted (see the module doc).

    `slot` is the domain slot of `url`; `check_owner(domain)` raises when this fetcher has lost
    that domain. Raises what `slot.turn()` raises (DomainHalted, FetcherBusy)."""
    first = urls.origin_of(url) + "/robots.txt"
    chain = await redirects.follow(lambda target: _get(http, target, slot, settings, check_owner),
                                   first, max_redirects=MAX_REDIRECTS)
    last = chain.hops[-1]
    if chain.failure is not None and chain.failure[0] is Status.TOO_MANY_REDIRECTS:
        return _decided(first, last.url, RobotsVerdict.allow_all(), settings.robots_ttl, chain.failure[1])
    verdict, ttl, why = verdict_for(last, settings)     # a Location not to follow: a 3xx
    return _decided(first, last.url, verdict, ttl, why)


async def _get(http: HttpClient, target: str, slot: DomainSlot, settings: FetcherSettings,
               check_owner: Callable[[str], None]) -> FetchResult:
    """One hop, on a turn of the original domain's slot; observed there only if it is ours."""
    await slot.turn()
    check_owner(slot.domain)
    result = await http.get(target, max_bytes=settings.robots_max_bytes, accept=ACCEPT,
                            on_sent=slot.mark_sent)
    if urls.registrable_domain(urls.host_of(target)) == slot.domain:
        slot.observe(result)
    return result


def verdict_for(result: FetchResult, settings: FetcherSettings) -> tuple[RobotsVerdict, float, str]:
    """(verdict, TTL, why) for an answer that is not a redirect to follow (RFC 9309 §2.3.1.3-4)."""
    if result.status is not Status.OK:
        return RobotsVerdict.unreachable(result), settings.robots_error_ttl, result.status.name
    code = result.http_status
    if 200 <= code < 300:
        return RobotsVerdict.parsed(result.body), settings.robots_ttl, f"HTTP {code}"
    if 300 <= code < 400:
        return RobotsVerdict.allow_all(), settings.robots_ttl, f"HTTP {code} without a usable Location"
    if 400 <= code < 500:
        return RobotsVerdict.allow_all(), settings.robots_ttl, f"HTTP {code}"
    return RobotsVerdict.disallow_all(), settings.robots_error_ttl, f"HTTP {code}"


def _decided(first: str, last: str, verdict: RobotsVerdict, ttl: float,
             why: str) -> tuple[RobotsVerdict, float]:
    _metrics.count("robots_verdicts", kind=verdict.kind.value)
    if verdict.kind is not VerdictKind.PARSED:
        via = "" if last == first else f" (redirected to {last})"
        log.info("robots.txt %s%s: %s, %s for %gs", first, via, why, verdict.kind.value, ttl)
    return verdict, ttl
