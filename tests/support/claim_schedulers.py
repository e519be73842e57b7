"""Schedulers' Claims (spiderduck.bus.claims) on a real nats-server, for the tests of claims."""
from __future__ import annotations

import contextlib
from typing import AsyncIterator

import nats

from spiderduck.bus import streams as bus
from spiderduck.bus.claims import Claims


@contextlib.asynccontextmanager
async def claim_schedulers(url: str, ttl: float, count: int = 2) -> AsyncIterator[list[Claims]]:
    """`count` schedulers' Claims (owners scheduler-0, scheduler-1, ...), each on its own NATS
    connection, one bucket with claim_ttl `ttl`."""
    conns = [await nats.connect(url) for _ in range(count)]
    try:
        kvs = [await bus.claim_bucket(nc.jetstream(), ttl) for nc in conns]
        yield [Claims(kv, owner=f"scheduler-{n}", ttl=ttl) for n, kv in enumerate(kvs)]
    finally:
        for nc in conns:
            await nc.close()
