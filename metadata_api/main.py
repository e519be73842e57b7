"""The metadata-api role: wiring for start and stop."""
from __future__ import annotations

import asyncio
import contextlib
import logging

from common import bus
from common.config import Settings
from common.pending import PendingLookup, queued_bucket
from common.grpc_server import GrpcServer
from common.stores.open import open_metadata_store
from metadata_api import server

log = logging.getLogger("spiderduck.metadata_api")


async def run_metadata_api(settings: Settings, stop: asyncio.Event) -> None:
    """Serves the metadata store; with nats_url set it also asks NATS which URLs are pending
    (common.pending), and fails at start, as the other roles do, if that NATS cannot be reached."""
    async with contextlib.AsyncExitStack() as stack:
        store = await stack.enter_async_context(await open_metadata_store(settings.metadata_store_url))
        pending = None
        if settings.nats_url:
            nc = await bus.connect(settings.nats_url, name="spiderduck-metadata-api",
                                   timeout=settings.nats_connect_timeout)
            stack.push_async_callback(nc.close)
            js = nc.jetstream()
            pending = PendingLookup(
                await bus.claim_bucket(js, settings.scheduler.claim_ttl, replicas=settings.nats_replicas),
                await queued_bucket(js, settings.streams.queued_ttl, replicas=settings.nats_replicas))
        else:
            log.info("metadata-api without NATS (nats_url not set): `pending` is never told")
        api = settings.metadata_api
        grpc_server = GrpcServer(api.listen, max_concurrent_rpcs=api.max_concurrent_calls,
                                 stop_grace=settings.drain_seconds)
        server.register(grpc_server, store, api.max_urls, api.max_response_bytes, pending)
        async with grpc_server:
            log.info("metadata-api serving on %s", grpc_server.address)
            await stop.wait()
