"""Stage 3, the Notifier: the announcement, one UrlProcessed per submitted URL, whatever the outcome.

Input: a CrawlTask. Output: the Outcome of the stages inside it, unchanged, once announced: it
hands the Outcome to `publish` (scheduler.events, the protobuf edge) after the stages inside have
stored it, so an event always describes stored state, and counts it
(spiderduck_scheduler_processed_total, latency_seconds, origin_seconds). Failure: a failed
publish raises BusError (retryable), and the message is retried in place as an outage.
"""
from __future__ import annotations

import time

from spiderduck.core.metrics import Recorder
from spiderduck.scheduler.events import Publish
from spiderduck.scheduler.stages.chain import Next
from spiderduck.scheduler.task import CrawlTask, Outcome


class Notifier:
    def __init__(self, publish: Publish, *, metrics: Recorder, clock=time.time):
        self._publish = publish
        self._metrics = metrics
        self._clock = clock

    async def __call__(self, task: CrawlTask, next: Next[CrawlTask, Outcome]) -> Outcome:
        outcome: Outcome = await next(task)
        await self._publish(outcome, f"{task.submitted}\n{task.received_at!r}")
        self._metrics.count("processed", status=outcome.record.status.name,
                            resolution=outcome.resolution.name)
        self._metrics.observe("latency_seconds", outcome.latency(self._clock()))
        self._metrics.observe("origin_seconds", outcome.origin_seconds)
        return outcome
