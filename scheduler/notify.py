"""Stage 6: tell subscribers — one UrlProcessed per submitted URL, whatever the outcome."""
from __future__ import annotations

from typing import Awaitable, Callable

from common import metrics
from scheduler.events import processed_event
from scheduler.stage import Next
from scheduler.task import CrawlTask, Outcome
from spiderduck.v1 import events_pb2

# publish(event, dedupe_id): the same dedupe_id for the same submission of the same URL, so a
# message redelivered after its event went out (an ack lost in a NATS failover) is not
# announced twice in the stream (JetStream's duplicate window drops the repeat).
Publish = Callable[[events_pb2.UrlProcessed, str], Awaitable[None]]


class Notifier:
    def __init__(self, publish: Publish):
        self._publish = publish
        self._metrics = metrics.recorder("scheduler")

    async def __call__(self, task: CrawlTask, next: Next) -> Outcome:
        outcome: Outcome = await next(task)
        event = processed_event(outcome)
        await self._publish(event, f"{task.submitted}\n{task.received_at!r}")
        self._metrics.count("processed", status=outcome.record.status.name,
                            resolution=outcome.resolution.name)
        self._metrics.observe("latency_seconds", event.latency_seconds)
        self._metrics.observe("origin_seconds", event.origin_seconds)
        return outcome
