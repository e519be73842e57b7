"""robots.txt verdicts per origin: cached with a TTL (LRU-bounded), one fetch per origin in flight."""
from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from typing import Any, Awaitable, Callable

# A fetch function returns the verdict and how many seconds it may be trusted.
RobotsFetch = Callable[[], Awaitable[tuple[Any, float]]]


class RobotsCache:
    def __init__(self, *, max_entries: int = 10_000, clock: Callable[[], float] = time.monotonic):
        self._entries: OrderedDict[str, tuple[Any, float]] = OrderedDict()
        self._pending: dict[str, asyncio.Future] = {}
        self._max = max_entries
        self._clock = clock
        self.fetches = 0

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
        pending = self._pending.get(origin)
        if pending is not None:
            return await asyncio.shield(pending)
        future = asyncio.get_running_loop().create_future()
        self._pending[origin] = future
        try:
            self.fetches += 1
            rules, ttl = await fetch()
            self._entries[origin] = (rules, self._clock() + ttl)
            self._entries.move_to_end(origin)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
            future.set_result(rules)
            return rules
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # consumed here; waiters re-raise it
            raise
        finally:
            del self._pending[origin]
