"""The scheduler role: wiring for start and stop."""
from __future__ import annotations

import asyncio
import contextlib
import logging

from nats.errors import Error as NatsError

from common import bus
from common.config import Settings
from common.errors import BusError
from common.stores.open import open_content_store, open_metadata_store
from scheduler.consumer import Consumer
from scheduler.fetcher_client import FetcherClient, StaticRouter
from scheduler.pipeline import build_pipeline
from spiderduck.v1 import events_pb2

log = logging.getLogger("spiderduck.scheduler")


def event_publisher(js):
    async def publish(event: events_pb2.UrlProcessed) -> None:
        try:
            await js.publish(bus.PROCESSED_SUBJECT, event.SerializeToString(),
                             headers={"Content-Type": bus.PROTOBUF_CONTENT_TYPE})
        except (NatsError, asyncio.TimeoutError) as exc:
            raise BusError(f"cannot publish to {bus.PROCESSED_SUBJECT}: {exc}") from exc
    return publish


async def run_scheduler(settings: Settings, stop: asyncio.Event) -> None:
    """Consume spiderduck.urls.submit until `stop` is set; drain intake, then close in reverse."""
    async with contextlib.AsyncExitStack() as stack:
        nc = await bus.connect(bus.nats_url(settings), name="spiderduck-scheduler")
        stack.push_async_callback(nc.close)
        js = nc.jetstream()
        await bus.ensure_streams(js, events_max_age=settings.scheduler.events_max_age)
        metadata = await stack.enter_async_context(
            await open_metadata_store(settings.metadata_store_url))
        content = await stack.enter_async_context(
            await open_content_store(settings.content_store_url))
        client = FetcherClient(StaticRouter(settings.fetcher_addresses, settings.fetcher.shards),
                               hop_timeout=settings.scheduler.hop_timeout)
        stack.push_async_callback(client.close)
        pipeline = build_pipeline(settings, metadata=metadata, content=content,
                                  fetch_hop=client.fetch, publish=event_publisher(js))
        stack.push_async_callback(pipeline.close)
        log.info("scheduler pipeline: %r; fetchers: %s", pipeline, settings.fetcher_addresses)
        await Consumer(js, pipeline, settings.scheduler).run(stop)
