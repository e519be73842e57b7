"""The metadata-api role: wiring for start and stop."""
from __future__ import annotations

import asyncio
import logging

from common.config import Settings
from common.grpc_server import GrpcServer
from common.stores.open import open_metadata_store
from metadata_api import server

log = logging.getLogger("spiderduck.metadata_api")


async def run_metadata_api(settings: Settings, stop: asyncio.Event) -> None:
    async with await open_metadata_store(settings.metadata_store_url) as store:
        api = settings.metadata_api
        grpc_server = GrpcServer(api.listen, max_concurrent_rpcs=api.max_concurrent_calls,
                                 stop_grace=settings.drain_seconds)
        server.register(grpc_server, store, api.max_urls, api.max_response_bytes)
        async with grpc_server:
            log.info("metadata-api serving on %s", grpc_server.address)
            await stop.wait()
