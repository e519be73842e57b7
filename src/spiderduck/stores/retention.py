"""The retention sweep (settings `retention`): every `sweep_interval`, the records not crawled or
refreshed within `retention.metadata` and the content-log files whose newest record is older
than `retention.content` are deleted. The scheduler runs it (src/spiderduck/scheduler/worker.py),
off the per-URL path; several schedulers sweeping one store is harmless (each deletion is
idempotent). A store that cannot expire (MetadataStore.expire, ContentStore.expire) is said so
once at WARNING and left alone."""
from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import AsyncIterator

from spiderduck.core.errors import StoreError
from spiderduck.core.settings_retention import RetentionSettings
from spiderduck.stores.content import ContentStore
from spiderduck.stores.metadata import MetadataStore

log = logging.getLogger("spiderduck.retention")


class RetentionSweeper:
    def __init__(self, settings: RetentionSettings, metadata: MetadataStore, content: ContentStore,
                 *, clock=time.time):
        self._settings = settings
        # What each part keeps for (seconds; 0 = forever), its store, and what it removes.
        self._parts = {"metadata": (settings.metadata, metadata, "records"),
                       "content": (settings.content, content, "content-log files")}
        self._unable: set[str] = set()          # parts whose store cannot expire (said once)
        self._clock = clock

    @property
    def active(self) -> bool:
        return any(keep and name not in self._unable for name, (keep, _, _) in self._parts.items())

    async def sweep(self) -> dict[str, int]:
        """One sweep of every part with a retention; how many of each it removed."""
        removed: dict[str, int] = {}
        for name, (keep, store, what) in self._parts.items():
            if not keep or name in self._unable:
                continue
            try:
                removed[name] = n = await store.expire(self._clock() - keep)
            except NotImplementedError as exc:
                log.warning("retention.%s is set, but nothing is deleted: %s", name, exc)
                self._unable.add(name)
                continue
            except StoreError as exc:
                log.warning("retention sweep of %s failed (tried again in %gs): %s", what,
                            self._settings.sweep_interval, exc)
                continue
            log.log(logging.INFO if n else logging.DEBUG,
                    "retention: removed %d %s older than retention.%s (%gs)", n, what, name, keep)
        return removed

    async def run(self) -> None:
        """Sweep now and then every sweep_interval, until cancelled."""
        while self.active:
            try:
                await self.sweep()
            except Exception:             # a bug must not end the sweeps unseen
                log.exception("retention sweep failed (tried again in %gs)", self._settings.sweep_interval)
            await asyncio.sleep(self._settings.sweep_interval)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator["RetentionSweeper"]:
        """run() in the background while the block runs (nothing when no retention is set)."""
        task = asyncio.create_task(self.run(), name="retention-sweep") if self.active else None
        try:
            yield self
        finally:
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
