"""Stage 6: tell subscribers — one UrlProcessed per submitted URL, whatever the outcome."""
from __future__ import annotations

from typing import Awaitable, Callable

from scheduler.events import processed_event
from scheduler.stage import Next
from scheduler.task import CrawlTask, Outcome
from spiderduck.v1 import events_pb2

Publish = Callable[[events_pb2.UrlProcessed], Awaitable[None]]


class Notifier:
    def __init__(self, publish: Publish):
        self._publish = publish

    async def __call__(self, task: CrawlTask, next: Next) -> Outcome:
        outcome: Outcome = await next(task)
        await self._publish(processed_event(outcome))
        return outcome
