"""robots.txt verdicts per origin: cached with a TTL (LRU-bounded), one fetch per origin in flight.

Two levels, looked up in order, then the origin itself:

    in-process   this OrderedDict (LRU, TTL)
    shared       an optional SharedRobotsStore (memcached), holding payloads made by a codec
    origin       the fetch function, called once per origin in flight in this process
                 (spiderduck.core.single_flight: a request cancelled while it waits leaves the fetch
                 to the others)

A fetched verdict is written to both levels; one read from the shared level is kept
in-process for the rest of its TTL. TTLs are capped at 24 h (RFC 9309 §2.4). The shared
level never fails a lookup: a store that is down is a miss.
"""
from __future__ import annotations

import logging
import time
from collections import OrderedDict
from typing import Any, Awaitable, Callable, Protocol

from spiderduck.core.single_flight import SingleFlight
from spiderduck.fetcher.robots.store import SharedRobotsStore

log = logging.getLogger("spiderduck.fetcher.robots")

# A fetch function returns the verdict and how many seconds it may be trusted.
RobotsFetch = Callable[[], Awaitable[tuple[Any, float]]]

MAX_TTL = 86_400.0   # RFC 9309 §2.4: a cached robots.txt SHOULD NOT be used for more than 24 h


class PayloadCodec(Protocol):
    """Verdict <-> shared-store payload (fetcher.robots.verdict.VerdictCodec)."""
    def encode(self, verdict: Any, ttl: float) -> bytes | None: ...
    def decode(self, payload: bytes) -> tuple[Any, float] | None: ...


class RobotsCache:
    def __init__(self, *, max_entries: int, clock: Callable[[], float] = time.monotonic,
                 store: SharedRobotsStore | None = None, codec: PayloadCodec | None = None):
        """`max_entries`: fetcher.robots_cache_size, the hosts kept in process."""
        if store is not None and codec is None:
            raise ValueError("a shared robots store needs a codec")
        self._entries: OrderedDict[str, tuple[Any, float]] = OrderedDict()
        self._pending: SingleFlight[tuple[Any, float, bool]] = SingleFlight()
        self._max = max_entries
        self._clock = clock
        self._store = store
        self._codec = codec
        self.fetches = 0        # verdicts fetched from origins
        self.shared_hits = 0    # verdicts read from the shared store

    def cached(self, origin: str) -> Any | None:
        entry = self._entries.get(origin)
        if entry is None:
            return None
        rules, expires = entry
        if self._clock() >= expires:
            del self._entries[origin]
            return None
        self._entries.move_to_end(origin)
        return rules

    async def rules_for(self, origin: str, fetch: RobotsFetch) -> Any:
        rules = self.cached(origin)
        if rules is not None:
            return rules
        leads = origin not in self._pending
        rules, ttl, fetched = await self._pending.run(origin, lambda: self._look_up(origin, fetch))
        if leads and fetched:
            await self._shared_set(origin, rules, ttl)   # waiters already have the verdict
        return rules

    async def _look_up(self, origin: str, fetch: RobotsFetch) -> tuple[Any, float, bool]:
        """(verdict, TTL, whether it was fetched from the origin), kept in-process."""
        shared = await self._shared_get(origin)
        if shared is not None:
            self.shared_hits += 1
            rules, ttl = shared
        else:
            self.fetches += 1
            rules, ttl = await fetch()
        ttl = min(ttl, MAX_TTL)
        self._entries[origin] = (rules, self._clock() + ttl)
        self._entries.move_to_end(origin)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)
        return rules, ttl, shared is None

    async def _shared_get(self, origin: str) -> tuple[Any, float] | None:
        if self._store is None:
            return None
        try:
            payload = await self._store.get(origin)
            return None if payload is None else self._codec.decode(payload)
        except Exception:   # a store must not raise; if one does, it is a miss all the same
            log.warning("shared robots store failed on get for %s", origin, exc_info=True)
            return None

    async def _shared_set(self, origin: str, rules: Any, ttl: float) -> None:
        if self._store is None:
            return
        try:
            payload = self._codec.encode(rules, ttl)
            if payload is not None:
                await self._store.set(origin, payload, ttl)
        except Exception:
            log.warning("shared robots store failed on set for %s", origin, exc_info=True)
