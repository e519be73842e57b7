"""Per-domain request slots: a bounded queue drained at the domain's pace (the mechanism).

Modelled on Scrapy's downloader Slot. Each registrable domain has one slot;
`turn()` returns when the domain's next request may start. When that is depends on
two policies, each testable alone:

    pacing.DomainPacing          spacing (1/rate, Crawl-delay) and holds (Retry-After,
                                 back-off after errors)
    domain_health.DomainHealth   a sliding window of outcomes: paused or halted

Waiters are served in arrival order (asyncio.Lock is FIFO); the one at the head sleeps
until the start time and re-plans whenever the slot changes (an answer set a hold, an
operator paused it or changed its rate). A slot with `queue_size` waiters refuses more
with FetcherBusy (RESOURCE_EXHAUSTED over gRPC); the caller backs off and retries. So is a
request that could not start before its caller's deadline (`check_wait`).

Operators' controls (src/spiderduck/fetcher/domain_controls.py: pause, set-rate, and halts, which only an
operator lifts) are kept per domain here even while the domain has no slot, and are put in
force when its slot is created: `restore` takes them as kept in NATS KV.

While a domain is paused its requests wait in the queue (a pause is short, and waiting
keeps every URL's answer); they still count against `queue_size`, and a caller's
deadline still ends the wait. While a domain is halted its requests fail fast with
DomainHalted, queued ones included: a halt lasts until an operator resumes the domain,
so nobody should wait for it. The fetcher answers those hops CONNECTION_ERROR with the
reason, so each URL still gets a record (and is retried after recrawl_failed_after).
"""
from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from dataclasses import dataclass
from typing import Awaitable, Callable, Iterable, Mapping

from spiderduck.core.errors import FetcherBusy, SpiderDuckError
from spiderduck.core.fetch import FetchResult
from spiderduck.fetcher.domain_controls import OPERATOR_PAUSE, DomainControl
from spiderduck.fetcher.domain_health import DomainHealth, HealthChange, HealthPolicy
from spiderduck.fetcher.pacing import DomainPacing, PacingPolicy

log = logging.getLogger("spiderduck.fetcher.politeness")


class DomainHalted(SpiderDuckError):
    """The domain is halted until an operator resumes it; its requests fail fast."""

    def __init__(self, domain: str, reason: str):
        super().__init__(f"domain {domain} is halted ({reason}); "
                         f"an operator can resume it: spiderduck domains resume {domain}")
        self.domain = domain


@dataclass(frozen=True)
class DomainInfo:
    """What an operator sees of one domain (FetcherAdmin.ListDomains)."""
    domain: str
    state: str                  # active | paused | halted
    reason: str                 # why paused or halted
    paused_for: float           # seconds left of a pause; 0 when not paused
    queue_depth: int            # requests waiting for a turn
    rate: float                 # requests per second configured
    rate_source: str            # default | config (rate_overrides) | operator (set-rate)
    interval: float             # effective seconds between starts: max(1/rate, Crawl-delay, back-off)
    crawl_delay: float          # robots.txt Crawl-delay in force (capped)
    backoff: float              # current back-off; 0 after a healthy answer
    hold: float                 # seconds left of a Retry-After or back-off hold
    hold_reason: str
    status_counts: dict[str, int]   # over the window: HTTP code, or the Status name
    requests: int               # outcomes over the window
    errors: int
    error_rate: float
    consecutive_failures: int
    window: float               # seconds of outcomes counted
    idle: float                 # seconds since the last start or answer


class DomainSlot:
    def __init__(self, domain: str, capacity: int, pacing: DomainPacing, health: DomainHealth,
                 clock: Callable[[], float], sleep: Callable[[float], Awaitable[None]],
                 wall: Callable[[], float] = time.time,
                 on_change: Callable[[str, HealthChange], None] | None = None):
        self.domain = domain
        self.capacity = capacity
        self.pacing = pacing
        self.health = health
        self.waiting = 0
        self.last_start = -math.inf
        self.last_used = clock()
        self._clock = clock
        self._sleep = sleep
        self._wall = wall
        self._on_change = on_change          # told each pause or halt the outcomes cause
        self._lock = asyncio.Lock()
        self._changed = asyncio.Event()

    @property
    def interval(self) -> float:
        """The effective seconds between starts (see pacing.DomainPacing.interval)."""
        return self.pacing.interval()

    @property
    def halted(self) -> bool:
        return self.health.halted

    def next_start(self) -> float:
        """The earliest clock time the next request may start (a halt aside)."""
        return max(self.pacing.earliest(self.last_start), self.health.paused_until)

    def expected_wait(self) -> float:
        """Seconds a request queued now would wait for its turn: until the domain's next start
        (spacing, a hold or a pause), then one interval per request already waiting."""
        return max(0.0, self.next_start() - self._clock()) + self.waiting * self.interval

    def check_wait(self, max_wait: float) -> None:
        """Raise FetcherBusy when a request could not start within `max_wait` seconds (a caller's
        deadline; 0 = no limit): better refused now than dropped from the queue later."""
        if max_wait > 0:
            wait = self.expected_wait()
            if wait > max_wait:
                raise FetcherBusy(f"{self.domain}: the next turn is {wait:.1f}s away ({self.waiting} waiting), "
                                  f"past the caller's deadline of {max_wait:.1f}s")

    async def turn(self) -> float:
        """Wait for this domain's next start time; returns the seconds waited.

        Raises DomainHalted (at once, or while waiting) and FetcherBusy."""
        self._check_halted()
        if self.waiting >= self.capacity:
            raise FetcherBusy(f"request queue of {self.domain} is full ({self.waiting} waiting)")
        self.waiting += 1
        arrived = self._clock()
        try:
            async with self._lock:
                await self._wait_for_start()
                self.last_start = self._clock()
                self.last_used = self.last_start
        finally:
            self.waiting -= 1
        return self.last_start - arrived

    async def _wait_for_start(self) -> None:
        while True:
            self._check_halted()
            delay = self.next_start() - self._clock()
            if delay <= 0:
                return
            changed = self._changed
            if await self._nap(delay, changed) and not changed.is_set():
                return              # slept its course and nothing changed meanwhile

    async def _nap(self, delay: float, changed: asyncio.Event) -> bool:
        """Sleep `delay` unless the slot changes first; True when the sleep ran its course."""
        sleeper = asyncio.ensure_future(self._sleep(delay))
        waker = asyncio.ensure_future(changed.wait())
        try:
            done, _ = await asyncio.wait((sleeper, waker), return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            waker.cancel()
        return sleeper in done

    def mark_sent(self) -> None:
        """The request whose turn it was has just gone out (its connection was up): count
        the spacing from now, so what the origin sees is spaced, connect time or not."""
        now = self._clock()
        if now > self.last_start:
            self.last_start = now
            self._wake_waiters()

    def _check_halted(self) -> None:
        if self.health.halted:
            raise DomainHalted(self.domain, self.health.reason)

    def _wake_waiters(self) -> None:
        """Make the waiter at the head re-plan its start."""
        self._changed.set()
        self._changed = asyncio.Event()

    # --- what happened, and what operators decide ---------------------------------------
    def observe(self, result: FetchResult) -> HealthChange | None:
        """Note the answer (or failure) of a request that had its turn."""
        now = self._clock()
        self.last_used = now
        hold = self.pacing.observe(result, now, self._wall())
        change = self.health.record(now, result)
        if change is not None:
            if change.state == "halted":
                log.warning("domain %s halted: %s", self.domain, change.reason)
            else:
                log.warning("domain %s paused for %gs: %s", self.domain, change.until - now,
                            change.reason)
            if self._on_change is not None:
                self._on_change(self.domain, change)
        if hold > 0 or change is not None:
            self._wake_waiters()
        return change

    def tell_crawl_delay(self, host: str, seconds: float | None) -> None:
        """robots.txt of `host` (one of this domain's hosts) asks for this Crawl-delay."""
        before = self.pacing.spacing()
        self.pacing.tell_crawl_delay(host, seconds, self._clock())
        if self.pacing.spacing() != before:
            self._wake_waiters()

    def set_rate(self, rate: float) -> None:
        self.pacing.rate = rate
        self._wake_waiters()

    def pause(self, seconds: float, reason: str) -> None:
        self.health.pause(self._clock(), seconds, reason)
        log.warning("domain %s paused for %gs: %s", self.domain, seconds, reason)
        self._wake_waiters()

    def halt(self, reason: str) -> None:
        self.health.halt(reason)
        log.warning("domain %s halted: %s", self.domain, reason)
        self._wake_waiters()

    def resume(self) -> None:
        self.health.resume(self._clock())
        self.pacing.reset()
        log.warning("domain %s resumed", self.domain)
        self._wake_waiters()

    # --- reading ------------------------------------------------------------------------
    def is_idle(self, idle_seconds: float) -> bool:
        """Nobody waits, nothing pending, no pause or halt to remember, unused for a while."""
        now = self._clock()
        return (self.waiting == 0 and not self._lock.locked() and self.health.is_quiet(now)
                and self.pacing.held(now) == 0
                and now - self.last_used >= max(idle_seconds, self.interval))

    def info(self, rate_source: str) -> DomainInfo:
        now = self._clock()
        requests, errors = self.health.totals(now)
        return DomainInfo(
            domain=self.domain, state=self.health.state(now), reason=self.health.reason,
            paused_for=max(0.0, self.health.paused_until - now), queue_depth=self.waiting,
            rate=self.pacing.rate, rate_source=rate_source, interval=self.interval,
            crawl_delay=self.pacing.crawl_delay, backoff=self.pacing.backoff,
            hold=self.pacing.held(now), hold_reason=self.pacing.hold_reason,
            status_counts=self.health.status_counts(now), requests=requests, errors=errors,
            error_rate=errors / requests if requests else 0.0,
            consecutive_failures=self.health.consecutive_failures,
            window=self.health.policy.window, idle=max(0.0, now - self.last_used))


class Politeness:
    """The slots of every domain this fetcher serves, and the operators' controls over them."""

    def __init__(self, *, default_rate: float, rate_overrides: Mapping[str, float] | None = None,
                 queue_size: int, pacing: PacingPolicy, health: HealthPolicy,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 wall: Callable[[], float] = time.time, rng: Callable[[], float] = random.random):
        """The values are the fetcher's settings (politeness_for in src/spiderduck/fetcher/fetcher.py)."""
        if default_rate <= 0:
            raise ValueError("fetcher.default_rate must be positive")
        self._default_rate = default_rate
        self._overrides = {d.lower(): r for d, r in (rate_overrides or {}).items()}
        self._controls: dict[str, DomainControl] = {}   # kept when a slot is evicted
        self.on_halt: Callable[[str], None] | None = None   # told each domain halted after failures
        self._queue_size = queue_size
        self._clock = clock
        self._sleep = sleep
        self._wall = wall
        self._rng = rng
        self._pacing = pacing
        self._health = health
        self._slots: dict[str, DomainSlot] = {}

    def rate_source(self, domain: str) -> str:
        if self.control(domain).rate is not None:
            return "operator"
        return "config" if self._overrides.get(domain.lower(), 0) > 0 else "default"

    def rate_for(self, domain: str) -> float:
        source = self.rate_source(domain)
        if source == "operator":
            return self.control(domain).rate
        return self._overrides[domain.lower()] if source == "config" else self._default_rate

    def slot(self, domain: str) -> DomainSlot:
        """The domain's slot. A lookup counts as use, so the Vulture never evicts a slot
        a request holds while it reads robots.txt (a second slot would break the pace)."""
        slot = self._slots.get(domain)
        if slot is None:
            slot = DomainSlot(domain, self._queue_size,
                              DomainPacing(self._pacing, self.rate_for(domain), self._rng),
                              DomainHealth(self._health), self._clock, self._sleep, self._wall,
                              on_change=self._health_changed)
            self._slots[domain] = slot
            control = self.control(domain)
            self._enforce(slot, control.resumed(), control)
        slot.last_used = self._clock()
        return slot

    def held(self, domain: str) -> str:
        """Why `domain` may take no request now (halted, or paused: kept in KV for every domain,
        or after errors on this fetcher's slot); "" when it may."""
        slot, control = self._slots.get(domain), self.control(domain)
        if slot is not None and slot.health.state(self._clock()) != "active":
            return f"{slot.health.state(self._clock())}: {slot.health.reason}"
        return f"{'halted' if control.halted else 'paused'}: {control.reason}" if control.holds(self._wall()) else ""

    # --- operators --------------------------------------------------------------------------
    def control(self, domain: str) -> DomainControl:
        """The domain's control in force (an empty one when it has none)."""
        domain = domain.lower()
        return self._controls.get(domain) or DomainControl(domain)

    def controlled(self) -> list[str]:
        """The domains with a control in force, whether they have a slot or not."""
        now = self._wall()
        return sorted(d for d, c in self._controls.items() if not c.is_empty(now))

    def set_rate(self, domain: str, rate: float) -> DomainSlot:
        self.restore(self.control(domain).rated(rate))
        log.warning("domain %s rate set to %g/s by an operator", domain, rate)
        return self.slot(domain)

    def pause(self, domain: str, seconds: float, reason: str = OPERATOR_PAUSE) -> DomainSlot:
        self.restore(self.control(domain).paused(self._wall(), seconds, reason))
        return self.slot(domain)

    def resume(self, domain: str) -> DomainSlot:
        """Lift a pause (an operator's or an automatic one) or a halt; an operator rate stays."""
        self._set(self.control(domain).resumed())
        slot = self.slot(domain)
        slot.resume()
        return slot

    def restore(self, control: DomainControl) -> None:
        """Put `control` in force (as kept in KV, or as an operator changed it): on the domain's
        slot now, or on the slot when it is created."""
        before = self.control(control.domain)
        self._set(control)
        slot = self._slots.get(control.domain)
        if slot is not None:
            self._enforce(slot, before, control)

    def _set(self, control: DomainControl) -> None:
        if control.is_empty(self._wall()):
            self._controls.pop(control.domain, None)
        else:
            self._controls[control.domain] = control

    def _enforce(self, slot: DomainSlot, before: DomainControl, after: DomainControl) -> None:
        """Bring `slot` from the control `before` to the control `after`."""
        now = self._wall()
        if after.rate != before.rate:
            slot.set_rate(self.rate_for(slot.domain))
        if before.holds(now) and not after.holds(now):
            slot.resume()
        if after.halted and not slot.halted:
            slot.halt(after.reason)
        left = after.paused_until - now
        if left > 0 and (after.paused_until, after.reason) != (before.paused_until, before.reason):
            slot.pause(left, after.reason)

    def _health_changed(self, domain: str, change: HealthChange) -> None:
        if change.state == "halted":
            self._set(self.control(domain).halted_for(change.reason))
            if self.on_halt is not None:
                self.on_halt(domain)

    def infos(self, domains: Iterable[str] = ()) -> list[DomainInfo]:
        """Every slot (or those of `domains` that exist), by domain name."""
        wanted = set(domains)
        return [s.info(self.rate_source(d)) for d, s in sorted(self._slots.items())
                if not wanted or d in wanted]

    # --- the Vulture's food ---------------------------------------------------------------------
    def evict_idle(self, idle_seconds: float) -> list[str]:
        """Drop slots nobody waits on and nobody used for `idle_seconds` (never a paused
        or halted one, nor one holding back after errors)."""
        idle = [d for d, s in self._slots.items() if s.is_idle(idle_seconds)]
        for domain in idle:
            del self._slots[domain]
        return idle

    def evict_idle_hosts(self, idle_seconds: float) -> list[str]:
        """Forget the Crawl-delay of hosts not seen for `idle_seconds` (their robots.txt is
        read again when they come back)."""
        now = self._clock()
        return [host for slot in self._slots.values()
                for host in slot.pacing.evict_hosts(now, idle_seconds)]

    def slots(self) -> dict[str, DomainSlot]:
        """The live slots by domain (a copy)."""
        return dict(self._slots)

    def __len__(self) -> int:
        return len(self._slots)
