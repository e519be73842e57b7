"""Outcome -> spiderduck.v1.UrlProcessed (the scheduler's protobuf edge)."""
from __future__ import annotations

import time

from google.protobuf.timestamp_pb2 import Timestamp

from common import record_proto
from scheduler.task import Outcome
from spiderduck.v1 import events_pb2


def fitted(event: events_pb2.UrlProcessed, max_bytes: int) -> events_pb2.UrlProcessed:
    """`event` within `max_bytes` (NATS's max payload, less room for headers): a record bounded
    by common.record_limits fits the default 1 MiB; on a server that allows less, the event
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
    return events_pb2.UrlProcessed(
        url=task.submitted, canonical_url=outcome.record.canonical_url or task.url,
        status=int(outcome.record.status), resolution=int(outcome.resolution),
        metadata=record_proto.to_proto(outcome.record), processed_at=at,
        latency_seconds=max(0.0, now - task.received_at) if task.received_at else 0.0,
        origin_seconds=sum(f.origin_seconds for f in outcome.fetches))
