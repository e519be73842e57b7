"""LeaseRouter reads the lease bucket: a value it cannot read leaves the shard unrouted, and
the router keeps following the bucket."""
from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace

from spiderduck.bus.shards import SHARD_KEY, encode_lease
from spiderduck.scheduler.routing import LeaseRouter


class FakeBucket:
    """watchall() yields the entries put in, as nats-py's KV watcher does."""

    def __init__(self):
        self._entries: asyncio.Queue = asyncio.Queue()

    def put(self, key: str, value: bytes, operation: str | None = None) -> None:
        self._entries.put_nowait(SimpleNamespace(key=key, value=value, operation=operation))

    async def watchall(self):
        return self

    def __aiter__(self):
        return self

    async def __anext__(self):
        return await self._entries.get()

    async def stop(self) -> None:
        pass


async def owners_become(router: LeaseRouter, expected: dict) -> None:
    for _ in range(2000):
        if router.owners() == expected:
            return
        await asyncio.sleep(0.001)
    assert router.owners() == expected


async def test_an_unreadable_lease_is_no_route_and_the_router_follows_on(caplog):
    bucket = FakeBucket()
    router = await LeaseRouter(bucket, shards=4).start()
    key = SHARD_KEY.format(1)
    try:
        bucket.put(key, encode_lease("a", "a:1"))
        await owners_become(router, {1: "a:1"})
        with caplog.at_level(logging.WARNING, "spiderduck.scheduler"):
            for bad in (b"[1]", b'"x"', b'{"owner": "b", "address": 2}', b"\xff"):
                bucket.put(key, bad)
                await owners_become(router, {})            # held by whom? no route
                bucket.put(key, encode_lease("a", "a:1"))
                await owners_become(router, {1: "a:1"})    # still following the bucket
        warnings = [r.getMessage() for r in caplog.records]
        assert len(warnings) == 4 and all(w.startswith(f"unreadable lease {key}: lease value ")
                                          for w in warnings), warnings
    finally:
        await router.close()
