"""Stage 2, the Crawl Decider: canonical form; fresh enough already? already in flight?

Answers on its own, without calling next, when the URL is invalid (REJECTED),
when a stored record is still fresh (FRESH), or when the same URL is being
crawled right now (JOINED: waits for that crawl and shares its result).
"""
from __future__ import annotations

import asyncio
import dataclasses
import time

from common import urls
from common.record import UrlRecord
from common.status import Status
from common.stores.metadata import MetadataStore
from scheduler.stage import Next
from scheduler.task import CrawlTask, Outcome, Resolution

# Outcomes that say more about the network than about the page: kept fresh for less long.
TRANSIENT = frozenset({Status.DNS_ERROR, Status.CONNECTION_ERROR, Status.TIMEOUT})


def record_key(record: UrlRecord) -> str:
    return record.final_url or record.url


class CrawlDecider:
    def __init__(self, store: MetadataStore, *, recrawl_after: float, recrawl_failed_after: float,
                 clock=time.time):
        self._store = store
        self._recrawl_after = recrawl_after
        self._recrawl_failed_after = recrawl_failed_after
        self._clock = clock
        self._in_flight: dict[str, asyncio.Future] = {}

    def is_fresh(self, record: UrlRecord) -> bool:
        window = (self._recrawl_failed_after if record.status in TRANSIENT or record.http_status >= 500
                  else self._recrawl_after)
        return self._clock() - record.fetched_at < window

    async def __call__(self, task: CrawlTask, next: Next) -> Outcome:
        try:
            url = urls.canonicalize(task.submitted)
        except urls.InvalidUrl as exc:
            key = task.submitted.strip()
            record = UrlRecord(url=task.submitted, status=Status.INVALID_URL, error=str(exc),
                               fetched_at=self._clock())
            return Outcome(task, record, Resolution.REJECTED, key=key)
        task = dataclasses.replace(task, url=url)
        pending = self._in_flight.get(url)
        if pending is not None:
            first: Outcome = await asyncio.shield(pending)
            return dataclasses.replace(first, task=task, resolution=Resolution.JOINED, fetches=())
        # Registered before the first await, so concurrent sightings join this one.
        future = asyncio.get_running_loop().create_future()
        self._in_flight[url] = future
        try:
            stored = await self._store.get(url)
            if stored is not None and stored.fetched_at and self.is_fresh(stored):
                outcome = Outcome(task, stored, Resolution.FRESH, key=record_key(stored))
            else:
                outcome = await next(task)
            future.set_result(outcome)
            return outcome
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()      # retrieved: waiters re-raise it, no "never retrieved" noise
            raise
        finally:
            del self._in_flight[url]
