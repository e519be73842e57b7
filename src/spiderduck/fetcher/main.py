"""The fetcher role: wiring for start and stop.

A Fetcher is given its ownership (which shards it serves) at construction and keeps it for
life, so everything the lease keeper needs comes first, in this order:
  1. NATS, the operators' domain controls, and the Politeness they act on (politeness_for);
  2. the gRPC server's port, bound but not yet serving (GrpcServer.bind): the address the
     leases advertise when fetcher.advertise is unset (a `:0` listen gets its port here);
  3. the LeaseKeeper (address, and quiet_for read from the Politeness) or, for `spiderduck
     up`, AllShards; then the Fetcher, its servicers, and the server's start.
The keeper writes nothing until run(), inside the started server, and on stop hands its
leases back before the server closes.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Callable

from spiderduck.bus import streams as bus

from spiderduck.bus import credentials as nats_auth
from spiderduck.core.config import Settings
from spiderduck.fetcher import admin, domain_controls, server
from spiderduck.fetcher.domain_controls import ControlStore, DomainControls
from spiderduck.fetcher.fetcher import Fetcher, fetcher_id, politeness_for
from spiderduck.fetcher.gauges import FetcherGauges
from spiderduck.fetcher.ownership import AllShards, LeaseKeeper, quiet_for
from spiderduck.fetcher.robots.store import open_robots_store
from spiderduck.fetcher.subresource_pace import LocalBuckets

log = logging.getLogger("spiderduck.fetcher")


def renderer_for(settings: Settings):
    """With render.enabled, what makes the fetcher's headless browser renderer from its
    `subresource` fetch (src/spiderduck/fetcher/render_hop.py); else None."""
    if not settings.render.enabled:
        return None
    from spiderduck.fetcher.render import Renderer      # only a fetcher that renders loads it
    return lambda fetch: Renderer(settings.render, fetch, user_agent=settings.fetcher.user_agent,
                                  accept_language=settings.fetcher.accept_language)


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
    member = fetcher_id(s)
    nc = await nats_auth.connect_role(settings, "fetcher", f"spiderduck-fetcher-{member}")
    try:
        js = nc.jetstream()
        # Operators' controls are in force before the first request is served.
        store = ControlStore(await domain_controls.open_bucket(js, replicas=settings.nats_replicas),
                             max_rate=s.max_rate)
        politeness = politeness_for(s)
        async with DomainControls(politeness, store, writer=member) as controls:
            kv = None if hold_all_shards else await bus.lease_bucket(
                js, s.lease_ttl, replicas=settings.nats_replicas)
            grpc_server = server.grpc_server(settings)
            address = grpc_server.bind()
            keeper = None if kv is None else LeaseKeeper(
                kv, member_id=member, address=s.advertise or address, shards=s.shards,
                ttl=s.lease_ttl, margin=s.lease_margin, quiet_for=quiet_for(politeness, s.shards),
                release_wait=settings.handback_seconds)
            ownership = AllShards() if keeper is None else keeper
            robots_store = open_robots_store(settings.robots_cache, timeout=s.robots_store_timeout)
            buckets = LocalBuckets(settings.render.subresource_rate, capacity=s.queue_size)
            async with Fetcher(s, ownership=ownership, politeness=politeness, robots_store=robots_store,
                               renderer=renderer_for(settings), buckets=buckets) as fetcher:
                gauges = FetcherGauges(politeness, ownership, shards=s.shards,  # noqa: F841 (read while held)
                                       domain_series=settings.metrics_domain_series)
                server.register(grpc_server, fetcher)
                admin.register(grpc_server, fetcher, controls)
                async with grpc_server:
                    await _serve(fetcher, keeper, stop, address, on_ready)
    finally:
        await nc.close()


async def _serve(fetcher: Fetcher, keeper: LeaseKeeper | None, stop: asyncio.Event, address: str,
                 on_ready: Callable[[Fetcher], None] | None) -> None:
    if keeper is None:
        if on_ready is not None:
            on_ready(fetcher)
        log.info("fetcher %s serving every shard on %s", fetcher.id, address)
        await stop.wait()
        return
    log.info("fetcher %s serving leased shards on %s", fetcher.id, address)
    await keeper.run(stop)
