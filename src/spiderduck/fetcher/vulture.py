"""The Vulture: a background task that evicts idle domain queues and idle host entries.

Every `interval` seconds it asks Politeness to drop the slots nobody waited on or used
for `idle_after` seconds (never a paused or halted one, nor one holding back after
errors) and the per-host Crawl-delay entries not seen for as long, and logs what went.

    async with Vulture(politeness, interval=60, idle_after=300):
        ...   # sweeps in the background until the block ends
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Awaitable, Callable

from spiderduck.fetcher.politeness import Politeness

log = logging.getLogger("spiderduck.fetcher.vulture")


@dataclass(frozen=True)
class Carrion:
    """What one sweep evicted."""
    domains: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()


class Vulture:
    def __init__(self, politeness: Politeness, *, interval: float, idle_after: float,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        if interval <= 0:
            raise ValueError("fetcher.vulture_interval must be positive")
        self._politeness = politeness
        self._interval = interval
        self._idle_after = idle_after
        self._sleep = sleep
        self._task: asyncio.Task | None = None
        self.sweeps = 0

    def sweep(self) -> Carrion:
        carrion = Carrion(tuple(self._politeness.evict_idle(self._idle_after)),
                          tuple(self._politeness.evict_idle_hosts(self._idle_after)))
        self.sweeps += 1
        if carrion.domains or carrion.hosts:
            log.info("vulture evicted %d idle domain queue(s) %s and %d idle host entr%s %s; "
                     "%d queue(s) left", len(carrion.domains), _sample(carrion.domains),
                     len(carrion.hosts), "y" if len(carrion.hosts) == 1 else "ies",
                     _sample(carrion.hosts), len(self._politeness))
        return carrion

    async def run(self) -> None:
        while True:
            await self._sleep(self._interval)
            try:
                self.sweep()
            except Exception:       # a bad sweep must not end the task
                log.exception("vulture sweep failed")

    async def __aenter__(self) -> "Vulture":
        self._task = asyncio.create_task(self.run(), name="vulture")
        return self

    async def __aexit__(self, *exc) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


def _sample(names: tuple[str, ...], limit: int = 10) -> str:
    shown = ", ".join(names[:limit])
    return f"[{shown}{', ...' if len(names) > limit else ''}]"
