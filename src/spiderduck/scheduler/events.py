"""The scheduler's event edge: an Outcome -> spiderduck.v1.UrlProcessed on spiderduck.events.processed.

    publish = event_publisher(send, max_payload)
    await publish(outcome, dedupe_id)

`send(data, headers)` puts bytes on the subject (scheduler.worker.publisher). The event is cut to
fit the server's max payload (`fitted`), and `dedupe_id` (the same for the same submission of
the same URL) becomes its Nats-Msg-Id, so a message redelivered after its event went out (an ack
lost in a NATS failover) is not announced twice in the stream. A failed send raises BusError.
With traces on (src/spiderduck/core/telemetry.py) the event's headers carry the URL's trace (traceparent), from
a `publish UrlProcessed` span.
"""
from __future__ import annotations

import hashlib
import time
from typing import Awaitable, Callable

from google.protobuf.timestamp_pb2 import Timestamp

from opentelemetry.trace import SpanKind

from spiderduck.bus import streams as bus

from spiderduck.wire import record_proto

from spiderduck.core import telemetry
from spiderduck.scheduler.task import Outcome
from spiderduck.v1 import events_pb2

HEADER_ROOM = 4096      # bytes of a message's max payload kept for its headers and framing

Publish = Callable[[Outcome, str], Awaitable[None]]


def fitted(event: events_pb2.UrlProcessed, max_bytes: int) -> events_pb2.UrlProcessed:
    """`event` within `max_bytes` (NATS's max payload, less room for headers): a record bounded
    by spiderduck.wire.record_limits fits the default 1 MiB; on a server that allows less, the event
    loses its record's structured data, then the whole record (GetUrlMetadata still has it)."""
    if event.ByteSize() <= max_bytes:
        return event
    event.metadata.ClearField("structured_data")
    if event.ByteSize() > max_bytes:
        event.ClearField("metadata")
    return event


def processed_event(outcome: Outcome, *, now: float | None = None) -> events_pb2.UrlProcessed:
    now = time.time() if now is None else now
    at = Timestamp()
    at.FromNanoseconds(int(now * 1e9))
    task = outcome.task
    metadata = record_proto.to_proto(outcome.record)
    metadata.url = task.submitted        # the URL asked for, not the one the record was first stored under
    return events_pb2.UrlProcessed(
        url=task.submitted, canonical_url=outcome.record.canonical_url or task.url,
        status=int(outcome.record.status), resolution=int(outcome.resolution),
        metadata=metadata, processed_at=at,
        latency_seconds=outcome.latency(now), origin_seconds=outcome.origin_seconds,
        changed_fields=outcome.changed_fields, submission_id=task.submission_id, source=task.source,
        url_index=task.place[0], url_count=task.place[1], fetch_mode=outcome.record.fetch_mode)


def event_publisher(send: Callable[[bytes, dict[str, str]], Awaitable[None]],
                    max_payload: int, reply: Callable[[str, bytes], Awaitable[None]] | None = None) -> Publish:
    """`reply(subject, data)` sends the event of a ResolveUrl's submission (task.reply_to) to the
    waiting call instead of the stream (core NATS: a call gone by then misses nothing)."""
    limit = max(max_payload - HEADER_ROOM, 1024)

    async def publish(outcome: Outcome, dedupe_id: str = "") -> None:
        with telemetry.span("publish UrlProcessed", kind=SpanKind.PRODUCER,
                            attributes={"url.full": outcome.task.submitted}):
            await _publish(outcome, dedupe_id)

    async def _publish(outcome: Outcome, dedupe_id: str) -> None:
        event = fitted(processed_event(outcome), limit)
        if outcome.task.reply_to and reply is not None:
            await reply(outcome.task.reply_to, event.SerializeToString())
            return
        headers = telemetry.inject({"Content-Type": bus.PROTOBUF_CONTENT_TYPE})
        if dedupe_id:
            digest = hashlib.blake2b(dedupe_id.encode("utf-8", "surrogatepass"), digest_size=16)
            headers["Nats-Msg-Id"] = f"spiderduck-event-{digest.hexdigest()}"
        await send(event.SerializeToString(), headers)
    return publish
