"""Where to send a hop: the fetcher that owns the hop's domain.

LeaseRouter watches the KV bucket of shard leases (DESIGN "Ownership of domain
queues") and keeps shard -> fetcher address; StaticRouter spreads shards over a fixed
list (`scheduler.fetchers`, or `spiderduck up`'s single fetcher holding every shard).
"""
from __future__ import annotations

import asyncio
import logging

from spiderduck.bus.shards import MalformedLease, decode_lease, shard_number, shard_of


log = logging.getLogger("spiderduck.scheduler")


class StaticRouter:
    def __init__(self, addresses: list[str], shards: int):
        if not addresses:
            raise ValueError("at least one fetcher address is needed")
        self.addresses = list(addresses)
        self.shards = shards

    def shard(self, domain: str) -> int:
        return shard_of(domain, self.shards)

    def route(self, domain: str) -> str | None:
        return self.addresses[self.shard(domain) % len(self.addresses)]

    async def changed(self, shard: int, timeout: float) -> None:
        await asyncio.sleep(timeout)

    async def close(self) -> None:
        pass


class LeaseRouter:
    def __init__(self, kv, shards: int):
        self._kv = kv
        self.shards = shards
        self._owners: dict[int, str] = {}
        self._changed = asyncio.Condition()
        self._task: asyncio.Task | None = None

    async def start(self) -> "LeaseRouter":
        self._watcher = await self._kv.watchall()
        self._task = asyncio.create_task(self._follow())
        return self

    async def _follow(self) -> None:
        # `async for` (not updates(timeout=...)): asyncio.wait_for in Python 3.11 can swallow
        # a cancellation, which would leave this task running after close.
        async for entry in self._watcher:
            if entry is None:               # the initial values have all been delivered
                continue
            shard = shard_number(entry.key)
            if shard is None:
                continue
            async with self._changed:
                if entry.operation in ("DEL", "PURGE") or not entry.value:
                    self._owners.pop(shard, None)
                else:
                    try:
                        self._owners[shard] = decode_lease(entry.value).address
                    except MalformedLease as exc:   # held, but by whom is unknown: no route
                        self._owners.pop(shard, None)
                        log.warning("unreadable lease %s: %s", entry.key, exc)
                self._changed.notify_all()

    def shard(self, domain: str) -> int:
        return shard_of(domain, self.shards)

    def route(self, domain: str) -> str | None:
        return self._owners.get(self.shard(domain))

    def owners(self) -> dict[int, str]:
        """shard -> the owning fetcher's address, as last seen."""
        return dict(self._owners)

    async def changed(self, shard: int, timeout: float) -> None:
        """Wait until the lease of `shard` changes hands (or `timeout` passes)."""
        before = self._owners.get(shard)
        async with self._changed:
            try:
                await asyncio.wait_for(
                    self._changed.wait_for(lambda: self._owners.get(shard) != before), timeout)
            except asyncio.TimeoutError:
                pass

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
        try:
            await self._watcher.stop()
        except Exception:
            pass
