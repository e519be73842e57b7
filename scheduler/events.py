"""Outcome -> spiderduck.v1.UrlProcessed (the scheduler's protobuf edge)."""
from __future__ import annotations

import time

from google.protobuf.timestamp_pb2 import Timestamp

from common import record_proto
from scheduler.task import Outcome
from spiderduck.v1 import events_pb2


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
