"""Stage 6: tell subscribers — one UrlProcessed per submitted URL, whatever the outcome.

Input: the task; output: the Outcome of the stages after it, unchanged. It hands the Outcome to
`publish` (scheduler.events: the protobuf edge) and counts it. Failure: a failed publish raises
BusError (retryable), and the message is retried as an outage.
"""
from __future__ import annotations

import time

from common import metrics
from scheduler.events import Publish
from scheduler.stage import Next
from scheduler.task import CrawlTask, Outcome


class Notifier:
    def __init__(self, publish: Publish):
        self._publish = publish
        self._metrics = metrics.recorder("scheduler")

    async def __call__(self, task: CrawlTask, next: Next) -> Outcome:
        outcome: Outcome = await next(task)
        await self._publish(outcome, f"{task.submitted}\n{task.received_at!r}")
        self._metrics.count("processed", status=outcome.record.status.name,
                            resolution=outcome.resolution.name)
        self._metrics.observe("latency_seconds", outcome.latency(time.time()))
        self._metrics.observe("origin_seconds", outcome.origin_seconds)
        return outcome
