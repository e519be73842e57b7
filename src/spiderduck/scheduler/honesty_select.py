"""Which crawled URLs get a second look as a browser (issue 43; process.honesty and
process.honesty_budget), for the Honesty Selector (stages/honesty_selection.py).

`reasons(outcome, refresh_max_delay)` names what in the first fetch gives a reason to look, in
REASONS' order; empty when nothing does:

    cross_domain_hop    the chain passes through, or ends on, another registrable domain than the
                        URL asked for (a shortener, a redirector)
    refresh             a hop moved on by a meta refresh or a Refresh header, or the final page
                        states one a browser follows (one the crawler left alone: it has a card)
    script_redirect     the final page's inline script sends the reader on when it loads
    vary                an answer's Vary names User-Agent or Cookie (or is `*`)
    cookie_on_redirect  a redirect set a cookie (a browser brings it back; the crawler does not)
    claimed_domain      og:url or the canonical URL (or an og:site_name that is a domain name) on
                        another registrable domain than the final URL
    interstitial        the final page is a wall (Status.INTERSTITIAL)

Only a crawl whose final hop got an answer from an origin is eligible (`eligible`): a chain that
ended refused (robots.txt, the guard, the denylist) or failed (a timeout, too many redirects) is
not looked at again, and a 304 keeps the verdict of the record it renews. `Budget` caps the share of the URLs
crawled in any minute that are checked.
"""
from __future__ import annotations

import collections
import math
import time

from spiderduck.core.fetch import FetchResult
from spiderduck.core.record import META_REFRESH, REFRESH_HEADER
from spiderduck.core.status import Status
from spiderduck.extract import honesty, refresh
from spiderduck.scheduler.task import Outcome, Resolution

REASONS = ("cross_domain_hop", "refresh", "script_redirect", "vary", "cookie_on_redirect",
           "claimed_domain", "interstitial")
ALL = ("all",)                  # the reason of every URL in `all` mode
WINDOW_SECONDS = 60.0           # "in any minute" (process.honesty_budget)
_VARIED = ("user-agent", "cookie", "*")


def eligible(outcome: Outcome) -> bool:
    """A crawl whose final hop got an answer from an origin: not a 304 (the stored record, and
    its verdict, stand), nor a chain that ended in a failure (its look has nothing to weigh)."""
    if outcome.resolution not in (Resolution.CRAWLED, Resolution.REVALIDATED) or not outcome.task.hops:
        return False
    final = outcome.task.hops[-1]
    return (final.status is Status.OK and final.http_status > 0 and final.http_status != 304
            and outcome.task.failure is None)


def reasons(outcome: Outcome, refresh_max_delay: float) -> tuple[str, ...]:
    """What in the first fetch gives a reason to look again as a browser (see the module)."""
    hops = outcome.task.hops
    found = set()
    asked = honesty.domain_of(outcome.task.url or outcome.task.submitted)
    if any(honesty.domain_of(h.url) != asked for h in hops):
        found.add("cross_domain_hop")
    if META_REFRESH in outcome.task.hop_kinds or REFRESH_HEADER in outcome.task.hop_kinds:
        found.add("refresh")
    final = hops[-1] if hops else None
    if final is not None and refresh.next_hop_of(final, max_delay=refresh_max_delay, even_with_card=True):
        found.add("refresh")
    page = outcome.page
    if page is not None and page.script_redirect:
        found.add("script_redirect")
    if any(_varies(h) for h in hops):
        found.add("vary")
    if any(300 <= h.http_status < 400 and h.header("set-cookie") is not None for h in hops):
        found.add("cookie_on_redirect")
    if page is not None and final is not None and honesty.claimed_domain(honesty.Look(
            final_url=final.url, claimed_url=page.claimed_url, site_name=page.site_name)):
        found.add("claimed_domain")
    if outcome.record.status is Status.INTERSTITIAL:
        found.add("interstitial")
    return tuple(r for r in REASONS if r in found)


def _varies(hop: FetchResult) -> bool:
    vary = hop.header("vary")
    if not vary:
        return False
    names = {part.strip().lower() for part in vary[:1024].split(",")}
    return any(name in names for name in _VARIED)


class Budget:
    """At most `share` of the URLs crawled in any WINDOW_SECONDS are checked: a URL due for a
    check is admitted while the checks of the last minute are fewer than `share` of the URLs
    crawled in it (rounded up, so the first due URL of a quiet minute is checked)."""

    def __init__(self, share: float, *, window: float = WINDOW_SECONDS, clock=time.monotonic):
        self._share = share
        self._window = window
        self._clock = clock
        self._crawled: collections.deque[float] = collections.deque()
        self._checked: collections.deque[float] = collections.deque()

    def crawled(self) -> None:
        """One more URL crawled (due for a check or not)."""
        now = self._clock()
        self._crawled.append(now)
        self._expire(now)

    def admit(self) -> bool:
        """Whether one more check fits the last minute's share; counted when it does."""
        now = self._clock()
        self._expire(now)
        if len(self._checked) >= math.ceil(self._share * len(self._crawled) - 1e-9):
            return False
        self._checked.append(now)
        return True

    def _expire(self, now: float) -> None:
        for seen in (self._crawled, self._checked):
            while seen and now - seen[0] > self._window:
                seen.popleft()
