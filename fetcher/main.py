"""The fetcher role: wiring for start and stop."""
from __future__ import annotations

import asyncio
import logging
from typing import Callable

from common import bus
from common.config import Settings
from common.grpc_server import GrpcServer
from fetcher import admin, domain_controls, server
from fetcher.domain_controls import ControlStore, DomainControls
from fetcher.fetcher import Fetcher
from fetcher.ownership import AllShards, LeaseKeeper
from fetcher.robots.store import open_robots_store

log = logging.getLogger("spiderduck.fetcher")


async def run_fetcher(settings: Settings, stop: asyncio.Event, *, hold_all_shards: bool = False,
                      on_ready: Callable[[Fetcher], None] | None = None) -> None:
    """Serve FetcherService until `stop`.

    With leases (the default for the `fetcher` role), the fetcher serves only the shards
    whose leases it holds, and on stop hands them back before the server closes.
    `spiderduck up` passes hold_all_shards: one process simply holds every shard, and
    `on_ready`, which is given the open Fetcher for the scheduler in the same process.
    Either way, operators' domain controls are loaded from NATS KV first and kept there.
    """
    s = settings.fetcher
    robots_store = open_robots_store(settings.robots_cache, timeout=s.robots_store_timeout)
    async with Fetcher(s, robots_store=robots_store) as fetcher:
        nc = await bus.connect(bus.nats_url(settings), name=f"spiderduck-fetcher-{fetcher.id}",
                               timeout=settings.nats_connect_timeout)
        try:
            js = nc.jetstream()
            # Operators' controls are in force before the first request is served.
            store = ControlStore(await domain_controls.open_bucket(js, replicas=settings.nats_replicas))
            async with DomainControls(fetcher.politeness, store, writer=fetcher.id) as controls:
                await _serve(settings, stop, fetcher, controls, js, hold_all_shards, on_ready)
        finally:
            await nc.close()


async def _serve(settings: Settings, stop: asyncio.Event, fetcher: Fetcher, controls: DomainControls,
                 js, hold_all_shards: bool, on_ready: Callable[[Fetcher], None] | None) -> None:
    s = settings.fetcher
    grpc_server = GrpcServer(s.listen, stop_grace=settings.drain_seconds)
    server.register(grpc_server, fetcher)
    admin.register(grpc_server, fetcher, controls)
    async with grpc_server:
        if hold_all_shards:
            fetcher.ownership = AllShards()
            if on_ready is not None:
                on_ready(fetcher)
            log.info("fetcher %s serving every shard on %s", fetcher.id, grpc_server.address)
            await stop.wait()
            return
        kv = await bus.lease_bucket(js, s.lease_ttl, replicas=settings.nats_replicas)
        keeper = LeaseKeeper(kv, member_id=fetcher.id, address=s.advertise or grpc_server.address,
                             shards=s.shards, ttl=s.lease_ttl, margin=s.lease_margin,
                             quiet_for=fetcher.quiet_for)
        fetcher.ownership = keeper
        log.info("fetcher %s serving leased shards on %s", fetcher.id, grpc_server.address)
        await keeper.run(stop)
