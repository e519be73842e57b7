"""When may a domain's next request start? (policy only; the slot in politeness.py waits)

    next start = max(last start + spacing, hold until)
    spacing    = max(1/rate, robots.txt Crawl-delay (capped by max_crawl_delay))
    hold until = when the last answer came + max(Retry-After on 429/503 (capped by
                 max_retry_after), back-off after an error)
    back-off   = base * factor**(n-1) after the n-th error in a row, plus up to `jitter`
                 of itself at random, capped by backoff_max; a healthy answer resets it

Errors are those of domain_health.is_error (connection errors, timeouts, DNS errors, 5xx,
429). Crawl-delay is kept per host: hosts of one domain share its slot, and the largest
delay any of them asks for applies. No clock inside: callers pass `now`.
"""
from __future__ import annotations

import datetime
import email.utils
import math
import random
from dataclasses import dataclass
from typing import Callable

from spiderduck.core.backoff import Backoff
from spiderduck.core.config import FetcherSettings
from spiderduck.core.fetch import FetchResult
from spiderduck.core.status import Status
from spiderduck.fetcher.domain_health import is_error, outcome_label

RETRY_AFTER_CODES = frozenset({429, 503})


@dataclass(frozen=True)
class PacingPolicy:
    """The fetcher.* keys of the same names (defaults in src/spiderduck/core/settings.py)."""
    max_crawl_delay: float   # robots.txt Crawl-delay is capped at this
    max_retry_after: float   # Retry-After is capped at this many seconds
    backoff_base: float      # back-off after the first error in a row
    backoff_factor: float    # each further error multiplies it by this
    backoff_max: float       # back-off never exceeds this
    backoff_jitter: float    # up to this fraction is added at random

    @classmethod
    def from_settings(cls, s: FetcherSettings) -> "PacingPolicy":
        return cls(max_crawl_delay=s.max_crawl_delay, max_retry_after=s.max_retry_after,
                   backoff_base=s.backoff_base, backoff_factor=s.backoff_factor,
                   backoff_max=s.backoff_max, backoff_jitter=s.backoff_jitter)

    @property
    def backoff(self) -> Backoff:
        """The back-off as the one type: the jitter only adds, and the cap bounds the total."""
        return Backoff(self.backoff_base, self.backoff_max, factor=self.backoff_factor,
                       jitter=self.backoff_jitter, cap_jittered=True)


def retry_after_seconds(value: str | None, *, now_wall: float, date: str | None = None) -> float | None:
    """RFC 9110 §10.2.3: `Retry-After: 120` or `Retry-After: Fri, 31 Dec 1999 23:59:59 GMT`.

    An HTTP-date is read against the response's own Date header when it has one (so clock
    skew between us and the origin does not matter), else against our wall clock."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(int(value))
    when = _http_date(value)
    if when is None:
        return None
    reference = _http_date(date) if date else None
    return max(0.0, when - (now_wall if reference is None else reference))


def _http_date(text: str) -> float | None:
    try:
        parsed = email.utils.parsedate_to_datetime(text.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return parsed.timestamp()


def backoff_delay(policy: PacingPolicy, failures: int, rnd: float) -> float:
    """Back-off after the `failures`-th error in a row; `rnd` in [0, 1) draws the jitter.

    The jitter only adds (up to `backoff_jitter` of the step), so with jitter <= factor - 1
    each step is at least as long as the longest previous one."""
    if failures <= 0:
        return 0.0
    return policy.backoff.delay(failures - 1, rnd)


class DomainPacing:
    """One domain's spacing and holds. `rate` may be changed by an operator at any time."""

    def __init__(self, policy: PacingPolicy, rate: float, rng: Callable[[], float] = random.random):
        self.policy = policy
        self.rate = rate
        self._rng = rng
        self._crawl_delays: dict[str, tuple[float, float]] = {}   # host -> (seconds, last told)
        self.failures = 0
        self.backoff = 0.0
        self.hold_until = -math.inf
        self.hold_reason = ""

    # --- what robots.txt and the origin told us ----------------------------------------
    def tell_crawl_delay(self, host: str, seconds: float | None, now: float) -> None:
        self._crawl_delays[host] = (min(seconds or 0.0, self.policy.max_crawl_delay), now)

    def observe(self, result: FetchResult, now: float, now_wall: float) -> float:
        """Note an answer (or its absence) that came at `now`; returns the hold it set, if any."""
        hold, reason = 0.0, ""
        if is_error(result):
            self.failures += 1
            self.backoff = backoff_delay(self.policy, self.failures, self._rng())
            hold, reason = self.backoff, f"back-off after {outcome_label(result)} ({self.failures} in a row)"
        else:
            self.failures, self.backoff = 0, 0.0
        if result.status is Status.OK and result.http_status in RETRY_AFTER_CODES:
            wait = retry_after_seconds(result.header("retry-after"), now_wall=now_wall,
                                       date=result.header("date"))
            if wait is not None and min(wait, self.policy.max_retry_after) >= hold:
                hold = min(wait, self.policy.max_retry_after)
                reason = f"Retry-After {hold:g}s on {result.http_status}"
        if hold > 0 and now + hold > self.hold_until:
            self.hold_until, self.hold_reason = now + hold, reason
        return hold

    def reset(self) -> None:
        """Forget back-off and holds (an operator resumed the domain)."""
        self.failures, self.backoff = 0, 0.0
        self.hold_until, self.hold_reason = -math.inf, ""

    # --- reading ------------------------------------------------------------------------
    @property
    def crawl_delay(self) -> float:
        return max((d for d, _ in self._crawl_delays.values()), default=0.0)

    def spacing(self) -> float:
        """Seconds between request starts: 1/rate or Crawl-delay, whichever is longer."""
        return max(1.0 / self.rate, self.crawl_delay)

    def interval(self) -> float:
        """The effective interval an operator sees: spacing, or the back-off if longer."""
        return max(self.spacing(), self.backoff)

    def earliest(self, last_start: float) -> float:
        return max(last_start + self.spacing(), self.hold_until)

    def held(self, now: float) -> float:
        """Seconds until the current hold ends (0 when none)."""
        return max(0.0, self.hold_until - now)

    # --- forgetting -----------------------------------------------------------------------
    def evict_hosts(self, now: float, idle_seconds: float) -> list[str]:
        """Drop the Crawl-delay of hosts not seen for `idle_seconds`; the hosts dropped."""
        idle = [h for h, (_, seen) in self._crawl_delays.items() if now - seen >= idle_seconds]
        for host in idle:
            del self._crawl_delays[host]
        return idle

    def hosts(self) -> list[str]:
        return list(self._crawl_delays)
