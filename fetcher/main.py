"""The fetcher role: wiring for start and stop."""
from __future__ import annotations

import asyncio
import logging

from common.config import Settings
from common.grpc_server import GrpcServer
from fetcher import server
from fetcher.fetcher import Fetcher

log = logging.getLogger("spiderduck.fetcher")


async def run_fetcher(settings: Settings, stop: asyncio.Event) -> None:
    async with Fetcher(settings.fetcher) as fetcher:
        grpc_server = GrpcServer(settings.fetcher.listen)
        server.register(grpc_server, fetcher)
        async with grpc_server:
            log.info("fetcher %s serving on %s", fetcher.id, grpc_server.address)
            await stop.wait()
