"""Per-domain request slots: a bounded queue drained at the domain's rate.

Modelled on Scrapy's downloader Slot. Each registrable domain has one slot;
`turn()` returns when the domain's next request may start, so consecutive
request starts to one domain are at least 1/rate seconds apart. Waiters are
served in arrival order (asyncio.Lock is FIFO). A slot with `queue_size`
waiters refuses more with QueueFull (RESOURCE_EXHAUSTED over gRPC).
"""
from __future__ import annotations

import asyncio
import time
from typing import Awaitable, Callable, Mapping


class QueueFull(Exception):
    def __init__(self, domain: str, size: int):
        super().__init__(f"request queue of {domain} is full ({size} waiting)")
        self.domain = domain


class DomainSlot:
    def __init__(self, domain: str, interval: float, capacity: int, clock: Callable[[], float],
                 sleep: Callable[[float], Awaitable[None]]):
        self.domain = domain
        self.interval = interval
        self.capacity = capacity
        self.waiting = 0
        self.last_start = float("-inf")
        self.last_used = clock()
        self._clock = clock
        self._sleep = sleep
        self._lock = asyncio.Lock()

    async def turn(self) -> float:
        """Wait for this domain's next start time; returns the seconds waited."""
        if self.waiting >= self.capacity:
            raise QueueFull(self.domain, self.waiting)
        self.waiting += 1
        arrived = self._clock()
        try:
            async with self._lock:
                delay = self.last_start + self.interval - self._clock()
                if delay > 0:
                    await self._sleep(delay)
                self.last_start = self._clock()
                self.last_used = self.last_start
        finally:
            self.waiting -= 1
        return self.last_start - arrived


class Politeness:
    def __init__(self, *, default_rate: float, rate_overrides: Mapping[str, float] | None = None,
                 queue_size: int = 1000, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        if default_rate <= 0:
            raise ValueError("fetcher.default_rate must be positive")
        self._default_rate = default_rate
        self._overrides = {d.lower(): r for d, r in (rate_overrides or {}).items()}
        self._queue_size = queue_size
        self._clock = clock
        self._sleep = sleep
        self._slots: dict[str, DomainSlot] = {}

    def rate_for(self, domain: str) -> float:
        rate = self._overrides.get(domain.lower(), self._default_rate)
        return rate if rate > 0 else self._default_rate

    def slot(self, domain: str) -> DomainSlot:
        slot = self._slots.get(domain)
        if slot is None:
            slot = DomainSlot(domain, 1.0 / self.rate_for(domain), self._queue_size,
                              self._clock, self._sleep)
            self._slots[domain] = slot
        return slot

    def evict_idle(self, idle_seconds: float) -> list[str]:
        """Drop slots nobody waits on and nobody used for `idle_seconds`."""
        now = self._clock()
        idle = [d for d, s in self._slots.items()
                if s.waiting == 0 and now - s.last_used >= max(idle_seconds, s.interval)]
        for domain in idle:
            del self._slots[domain]
        return idle

    def __len__(self) -> int:
        return len(self._slots)
