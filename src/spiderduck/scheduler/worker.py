"""The scheduler role: its wiring (`scheduler_parts`, shared with `spiderduck resolve`), start
and stop."""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import socket
from typing import Any, AsyncIterator

from nats.errors import Error as NatsError

from spiderduck.bus import streams as bus

from spiderduck.core import metrics

from spiderduck.bus import credentials as nats_auth

from spiderduck.bus import submissions
from spiderduck.bus.claims import Claims
from spiderduck.bus.denylist import Denylist
from spiderduck.core.config import Settings
from spiderduck.core.errors import BusError
from spiderduck.extract.pool import ExtractionPool
from spiderduck.extract.signals import robots_token
from spiderduck.rpc.server import GrpcServer
from spiderduck.scheduler.consumer import Consumer
from spiderduck.scheduler.events import event_publisher
from spiderduck.scheduler.fetcher_client import FetcherClient, GrpcTransport, hop_backoff
from spiderduck.scheduler.forgetting import follow_forgets
from spiderduck.scheduler.pipeline import build_pipeline
from spiderduck.scheduler.routing import LeaseRouter, StaticRouter
from spiderduck.scheduler.stages.chain import Pipeline
from spiderduck.stores.content import ContentStore
from spiderduck.stores.metadata import MetadataStore
from spiderduck.stores.open import open_content_store, open_metadata_store
from spiderduck.stores.retention import RetentionSweeper

log = logging.getLogger("spiderduck.scheduler")


def publisher(js, subject: str):
    """publish(data, headers) to `subject` through JetStream; a failure is a (retryable) BusError."""
    async def publish(data: bytes, headers: dict[str, str]) -> None:
        try:
            await js.publish(subject, data, headers=headers)
        except (NatsError, asyncio.TimeoutError) as exc:
            raise BusError(f"cannot publish to {subject}: {exc}") from exc
    return publish


def replier(nc):
    """reply(subject, data) over core NATS; a failure is a (retryable) BusError."""
    async def reply(subject: str, data: bytes) -> None:
        try:
            await nc.publish(subject, data)
        except (NatsError, asyncio.TimeoutError) as exc:
            raise BusError(f"cannot reply on {subject}: {exc}") from exc
    return reply


async def open_router(settings: Settings, js, static: bool):
    """Static over `scheduler.fetchers` (or `up`'s one fetcher), else by the lease bucket."""
    if static or settings.scheduler.fetchers:
        return StaticRouter(settings.fetcher_addresses, settings.fetcher.shards)
    kv = await bus.lease_bucket(js, settings.fetcher.lease_ttl, replicas=settings.nats_replicas)
    return await LeaseRouter(kv, settings.fetcher.shards).start()


@dataclasses.dataclass(frozen=True)
class SchedulerParts:
    """What `scheduler_parts` opened: the NATS connection, the pipeline and what it runs on."""
    nc: Any
    js: Any
    pipeline: Pipeline
    router: Any
    pool: ExtractionPool
    metadata: MetadataStore
    content: ContentStore
    denylist: Denylist


@contextlib.asynccontextmanager
async def scheduler_parts(settings: Settings, *, static_routing: bool = False, transport=None,
                          workers: int | None = None,
                          name: str = "spiderduck-scheduler") -> AsyncIterator[SchedulerParts]:
    """The scheduler's one wiring: NATS and its streams, the metadata and content stores, the
    router and FetcherClient, the extraction pool (`workers`, default the settings'), the event
    publisher, the denylist (spiderduck.bus.denylist) and the pipeline over them; all closed in
    reverse on exit. run_scheduler feeds the pipeline from the stream; `spiderduck resolve`
    runs it on one URL."""
    async with contextlib.AsyncExitStack() as stack:
        nc = await nats_auth.connect_role(settings, "scheduler", name)
        stack.push_async_callback(nc.close)
        js = nc.jetstream()
        await bus.ensure_streams(js, settings.streams, replicas=settings.nats_replicas)
        metadata = await stack.enter_async_context(
            await open_metadata_store(settings.metadata_store_url, retention=settings.retention.metadata))
        content = await stack.enter_async_context(
            await open_content_store(settings.content_store_url,
                                     max_file_age=settings.retention.roll_content_after))
        router = await open_router(settings, js, static_routing)
        stack.push_async_callback(router.close)
        client = FetcherClient(router, hop_timeout=settings.scheduler.hop_timeout,
                               render_timeout=settings.render.timeout if settings.render.enabled else 0.0,
                               max_hops_per_domain=settings.scheduler.max_hops_per_domain,
                               backoff=hop_backoff(settings.scheduler),
                               transport=transport or GrpcTransport(settings.tls))
        stack.push_async_callback(client.close)
        p = settings.process
        pool = await stack.enter_async_context(ExtractionPool(
            workers=settings.extraction_workers if workers is None else workers,
            budget=p.extract_timeout, parser=p.parser,
            robots_token=robots_token(settings.fetcher.user_agent)))
        events = event_publisher(publisher(js, bus.PROCESSED_SUBJECT), nc.max_payload, reply=replier(nc))
        denylist = await Denylist.open(js, replicas=settings.nats_replicas)
        stack.push_async_callback(denylist.close)
        claims = Claims(await bus.claim_bucket(js, settings.scheduler.claim_ttl, replicas=settings.nats_replicas),
                        owner=f"{socket.gethostname()}:{os.getpid()}", ttl=settings.scheduler.claim_ttl)
        pipeline = build_pipeline(settings, metadata=metadata, content=content,
                                  fetch_hop=client.fetch, publish=events,
                                  metrics=metrics.recorder("scheduler"), claims=claims,
                                  extract=pool.extract, file_card=pool.file_card, file_range=pool.next_range,
                                  resubmit=submissions.publisher(js),
                                  dead_letter=submissions.dead_letterer(js), denylist=denylist,
                                  dispute=event_publisher(publisher(js, bus.DISPUTED_SUBJECT), nc.max_payload))
        stack.push_async_callback(pipeline.close)
        yield SchedulerParts(nc, js, pipeline, router, pool, metadata, content, denylist)


async def run_scheduler(settings: Settings, stop: asyncio.Event, *, static_routing: bool = False,
                        transport=None, erase_forgotten_content: bool = False) -> None:
    """Consume spiderduck.urls.submit until `stop` is set; drain intake, then close in reverse.

    `transport` carries hops to fetchers (default: gRPC; `spiderduck up` passes the in-process one).
    `erase_forgotten_content`: this scheduler's file:// content log is out of the metadata API's
    reach (the `scheduler` role of a deployment), so it erases what the denylist gains from it
    itself (spiderduck.scheduler.forgetting.follow_forgets); where the metadata API shares the
    folder (`up`, one process), its Forget erases and counts it."""
    async with contextlib.AsyncExitStack() as stack:
        parts = await stack.enter_async_context(
            scheduler_parts(settings, static_routing=static_routing, transport=transport))
        if settings.scheduler.listen:      # health checking for probes (no service of its own)
            await stack.enter_async_context(GrpcServer(settings.scheduler.listen, tls=settings.tls))
        log.info("scheduler pipeline: %r; routing: %s; %r", parts.pipeline,
                 type(parts.router).__name__, parts.pool)
        # The retention sweep (off the per-URL path): stopped before the stores close.
        await stack.enter_async_context(
            RetentionSweeper(settings.retention, parts.metadata, parts.content).running())
        await stack.enter_async_context(follow_forgets(parts.denylist, parts.content, erase=erase_forgotten_content))
        await Consumer(parts.nc, parts.js, parts.pipeline, settings.scheduler).run(
            stop, drain_for=settings.drain_seconds)
