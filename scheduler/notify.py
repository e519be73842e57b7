"""Stage 6: tell subscribers — one UrlProcessed per submitted URL, whatever the outcome."""
from __future__ import annotations

from typing import Awaitable, Callable

from common import metrics
from scheduler.events import processed_event
from scheduler.stage import Next
from scheduler.task import CrawlTask, Outcome
from spiderduck.v1 import events_pb2

Publish = Callable[[events_pb2.UrlProcessed], Awaitable[None]]


class Notifier:
    def __init__(self, publish: Publish):
        self._publish = publish
        self._metrics = metrics.recorder("scheduler")

    async def __call__(self, task: CrawlTask, next: Next) -> Outcome:
        outcome: Outcome = await next(task)
        event = processed_event(outcome)
        await self._publish(event)
        self._metrics.count("processed", status=outcome.record.status.name,
                            resolution=outcome.resolution.name)
        self._metrics.observe("latency_seconds", event.latency_seconds)
        self._metrics.observe("origin_seconds", event.origin_seconds)
        return outcome
