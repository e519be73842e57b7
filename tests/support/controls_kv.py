"""The domain-controls KV bucket on a real nats-server, for a test's while."""
from __future__ import annotations

import asyncio
import contextlib

import nats

from spiderduck.fetcher import domain_controls


@contextlib.asynccontextmanager
async def bucket(url: str):
    """The `spiderduck_domain_controls` bucket of the nats-server at `url` (made if missing)."""
    nc = await nats.connect(url)
    try:
        yield await domain_controls.open_bucket(nc.jetstream())
    finally:
        await nc.close()


async def eventually(condition, timeout: float = 10.0) -> None:
    """Until `condition()` is true (a watch has delivered); TimeoutError after `timeout` seconds."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)
