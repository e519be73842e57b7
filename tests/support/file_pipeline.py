"""The wired pipeline of the file tests (issue 41): a real Fetcher in this process, as `spiderduck
up` has it, its hops through the in-process transport, over the tests' stores."""
from __future__ import annotations

import asyncio
import contextlib

from spiderduck.core import config, metrics
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.local import LocalTransport
from spiderduck.fetcher.ownership import AllShards
from spiderduck.scheduler.fetcher_client import FetcherClient, hop_backoff
from spiderduck.scheduler.pipeline import build_pipeline
from spiderduck.scheduler.routing import StaticRouter
from spiderduck.scheduler.task import Submission

ADDRESS = "127.0.0.1:50052"
CAP = 1024 * 1024               # fetcher.max_body_bytes here


@contextlib.asynccontextmanager
async def wired(stores, **overrides):
    """(pipeline, fetcher) over the stores, the fetcher's hops through the in-process transport."""
    values = {"fetcher.allowed_networks": ["127.0.0.0/8"], "fetcher.dns_overrides": {"*.test": "127.0.0.1"},
              "fetcher.default_rate": 100.0, "fetcher.max_body_bytes": CAP, **overrides}
    settings = config.load(env={}, overrides=values)
    async with Fetcher(settings.fetcher, ownership=AllShards()) as fetcher:
        ready = asyncio.get_running_loop().create_future()
        ready.set_result(fetcher)
        client = FetcherClient(StaticRouter([ADDRESS], 16), hop_timeout=20.0, max_hops_per_domain=8,
                               backoff=hop_backoff(settings.scheduler),
                               transport=LocalTransport(ADDRESS, ready, fallback=None))
        metadata, content = stores

        async def publish(outcome, key):
            pass
        yield build_pipeline(settings, metadata=metadata, content=content, fetch_hop=client.fetch,
                             publish=publish, metrics=metrics.recorder("test")), fetcher


async def crawl(pipeline, url: str):
    (outcome,) = await pipeline(Submission(f'{{"urls": ["{url}"]}}'.encode()))
    return outcome
