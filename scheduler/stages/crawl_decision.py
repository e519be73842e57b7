"""Stage 4, the Crawl Decider: the decision whether to crawl. Canonical form; fresh enough
already? already in flight?

Input: a CrawlTask as submitted. Output: an Outcome. It answers on its own, without calling next,
when the URL is invalid (REJECTED), when a stored record is still fresh (FRESH: before its
expires_at; see common.freshness; for a refresh, fetched within min_refresh_interval), or when the
same URL is being crawled right now (JOINED: waits for that crawl and shares its result; see
common.single_flight for what cancellation and failure do; a refresh that joined a sighting the
record answered tries again, as it wants a fetch); otherwise it passes the task, with
its canonical `url` and the stored record it renews (`previous`, for a conditional re-fetch), to
the stages inside (CRAWLED, or REVALIDATED when the origin answered 304).
Failure: a store's StoreError reading the stored record; a crawl's failure is every joined
sighting's failure.
"""
from __future__ import annotations

import dataclasses
import time

from common import urls
from common.freshness import Freshness
from common.record import UrlRecord
from common.single_flight import SingleFlight
from common.status import Status
from common.stores.metadata import MetadataStore
from scheduler.stages.chain import Next
from scheduler.task import CrawlTask, Outcome, Resolution


def record_key(record: UrlRecord) -> str:
    return record.final_url or record.url


class CrawlDecider:
    def __init__(self, store: MetadataStore, *, freshness: Freshness, min_refresh_interval: float,
                 clock=time.time):
        self._store = store
        self._freshness = freshness
        self._min_refresh_interval = min_refresh_interval
        self._clock = clock
        self._in_flight: SingleFlight[Outcome] = SingleFlight()

    def is_fresh(self, record: UrlRecord) -> bool:
        return self._freshness.is_fresh(record, self._clock())

    async def __call__(self, task: CrawlTask, next: Next) -> Outcome:
        try:
            url = urls.canonicalize(task.submitted)
        except urls.InvalidUrl as exc:
            key = task.submitted.strip()
            record = UrlRecord(url=task.submitted, status=Status.INVALID_URL, error=str(exc),
                               fetched_at=self._clock())
            return Outcome(task, record, Resolution.REJECTED, key=key)
        task = dataclasses.replace(task, url=url)
        while True:
            # run() registers the URL before its first await, so concurrent sightings join this crawl.
            joined = url in self._in_flight
            outcome = await self._in_flight.run(url, lambda: self._crawl(task, next))
            if not joined:
                return outcome
            if task.refresh and outcome.resolution is Resolution.FRESH and not self._just_fetched(outcome.record):
                continue        # joined a sighting the record answered: a refresh wants a fetch
            return dataclasses.replace(outcome, task=task, resolution=Resolution.JOINED, fetches=())

    def _just_fetched(self, record: UrlRecord) -> bool:
        """Fetched within min_refresh_interval: a refresh gets the record rather than a fetch."""
        return self._clock() - record.fetched_at < self._min_refresh_interval

    async def _crawl(self, task: CrawlTask, next: Next) -> Outcome:
        stored = await self._store.get(task.url)
        if stored is not None and stored.fetched_at and (
                self._just_fetched(stored) if task.refresh else self.is_fresh(stored)):
            return Outcome(task, stored, Resolution.FRESH, key=record_key(stored))
        return await next(dataclasses.replace(task, previous=stored))
