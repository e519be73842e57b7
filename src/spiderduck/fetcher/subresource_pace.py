"""The pace of a rendered page's requests to domains another fetcher owns (issue 38).

A domain this fetcher owns is paced by its politeness slot. A domain another fetcher owns has
no slot here (one owner per domain), so a page's requests to it take a turn on a local bucket
instead: one per domain, at `render.subresource_rate` requests per second, starts spaced by
1 / rate in arrival order. Each bucket is used as a slot is by robots.fetch (turn, mark_sent,
observe), so the domain's robots.txt is fetched at the same pace. A domain's bucket never
waits on another's. Buckets with nobody waiting and their next start passed hold nothing and
are dropped when there are more than MAX_IDLE.

Halts and pauses are not decided here: the fetcher checks the domain's controls before and
after the turn (Fetcher.subresource).
"""
from __future__ import annotations

import asyncio
import math
import time
from typing import Awaitable, Callable

from spiderduck.core.errors import FetcherBusy
from spiderduck.core.fetch import FetchResult

MAX_IDLE = 1024         # buckets kept before the idle ones are dropped


class LocalBucket:
    """One non-owned domain's turns: starts spaced by `interval` seconds, first come first served."""

    def __init__(self, domain: str, interval: float, capacity: int,
                 clock: Callable[[], float], sleep: Callable[[float], Awaitable[None]]):
        self.domain = domain
        self.interval = interval
        self.capacity = capacity
        self.waiting = 0
        self.next_start = -math.inf
        self._clock, self._sleep = clock, sleep
        self._lock = asyncio.Lock()             # FIFO: waiters are served in arrival order

    async def turn(self) -> float:
        """Wait for this domain's next start; the seconds waited. FetcherBusy when `capacity`
        requests already wait."""
        if self.waiting >= self.capacity:
            raise FetcherBusy(f"subresource queue of {self.domain} is full ({self.waiting} waiting)")
        self.waiting += 1
        arrived = self._clock()
        try:
            async with self._lock:
                delay = self.next_start - self._clock()
                if delay > 0:
                    await self._sleep(delay)
                now = self._clock()
                self.next_start = now + self.interval
        finally:
            self.waiting -= 1
        return now - arrived

    def mark_sent(self) -> None:
        """The request has gone out: space the next one from now (connect time or not)."""
        self.next_start = max(self.next_start, self._clock() + self.interval)

    def observe(self, result: FetchResult) -> None:
        """Answers are the owner's to judge (its slot pauses or halts the domain, kept in KV)."""

    def idle(self) -> bool:
        return self.waiting == 0 and not self._lock.locked() and self.next_start <= self._clock()


class LocalBuckets:
    """The buckets of every non-owned domain a rendered page asked for."""

    def __init__(self, rate: float, *, capacity: int = 256, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        """`rate`: render.subresource_rate; `capacity`: requests one domain may have waiting."""
        if not (rate > 0 and math.isfinite(rate)):
            raise ValueError(f"render.subresource_rate must be positive, got {rate}")
        self.interval = 1.0 / rate
        self._capacity = capacity
        self._clock, self._sleep = clock, sleep
        self._buckets: dict[str, LocalBucket] = {}

    def bucket(self, domain: str) -> LocalBucket:
        bucket = self._buckets.get(domain)
        if bucket is None:
            if len(self._buckets) >= MAX_IDLE:
                self._buckets = {d: b for d, b in self._buckets.items() if not b.idle()}
            bucket = LocalBucket(domain, self.interval, self._capacity, self._clock, self._sleep)
            self._buckets[domain] = bucket
        return bucket

    def __len__(self) -> int:
        return len(self._buckets)
