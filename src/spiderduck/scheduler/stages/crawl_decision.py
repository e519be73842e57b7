"""Stage 5, the Crawl Decider: the decision whether to crawl. Canonical form; fresh enough
already? already in flight?

Input: a CrawlTask as submitted. Output: an Outcome. It answers on its own, without calling next,
when the URL is invalid (REJECTED), when it is on the denylist (FORGOTTEN, resolution REJECTED,
before any store read or fetch: spiderduck.scheduler.forgetting; a sighting that joined a crawl
forgotten meanwhile too), when a stored record is still fresh (FRESH: before its
expires_at, see spiderduck.core.freshness; for a refresh, also fetched within min_refresh_interval), when
an OK record expired less than serve_stale_for ago and the task is no refresh (STALE: answered at
once, and a refresh of the URL is submitted, deduplicated per record by its Nats-Msg-Id), or when
the same URL is being crawled right now (JOINED: waits for that crawl and shares its result; see
spiderduck.core.single_flight for what cancellation and failure do; sightings that come while the record
answers one get the same answer, and a refresh among them tries again, as it wants a fetch);
otherwise it claims the URL across schedulers (spiderduck.bus.claims: a sighting whose URL another
scheduler is crawling waits for that crawl and joins its record, JOINED) and passes the task, with
its canonical `url` and the stored record it renews (`previous`, for a conditional re-fetch), to
the stages inside (CRAWLED, or REVALIDATED when the origin answered 304). The claim stops renewing
as the crawl ends, but its key is deleted in the background: the outcome (and the event announcing
it) waits for no KV round trip; `close` awaits the deletes still in flight, for at most
`release_wait` seconds (None: no limit; a claim never deleted lapses within scheduler.claim_ttl).
Failure: a store's StoreError reading the stored record, a BusError submitting a refresh; a crawl's
failure is every joined sighting's failure.
With traces on, each read of the stored record is a `metadata get` span (src/spiderduck/scheduler/traced_stores.py).
"""
from __future__ import annotations

import asyncio
import logging
import time

from spiderduck.bus.claims import Claim, Claims
from spiderduck.bus.submissions import Resubmit
from spiderduck.bus.submissions import stale_refresh
from spiderduck.core import urls
from spiderduck.core.errors import BusError
from spiderduck.core.freshness import Freshness
from spiderduck.core.record import UrlRecord
from spiderduck.core.single_flight import SingleFlight
from spiderduck.core.status import Status
from spiderduck.scheduler.forgetting import Forgetting, forgotten_outcome
from spiderduck.scheduler.stages.chain import Next
from spiderduck.scheduler.storing import record_key
from spiderduck.scheduler.task import CrawlTask, Outcome, Resolution
from spiderduck.stores.metadata import MetadataStore
from spiderduck.wire.record_diff import changed_fields
from spiderduck.core.frozen import evolve

log = logging.getLogger("spiderduck.scheduler")


class CrawlDecider:
    """`resubmit` publishes a STALE record's refresh (to spiderduck.urls.submit); without it
    (tests, tools) an expired record is re-fetched before the answer, as with serve_stale_for 0."""

    def __init__(self, store: MetadataStore, *, freshness: Freshness, min_refresh_interval: float,
                 serve_stale_for: float, resubmit: Resubmit | None = None, claims: Claims | None = None,
                 forgetting: Forgetting | None = None, release_wait: float | None = None, clock=time.time):
        self._claims = claims
        self._releasing: set[asyncio.Task] = set()     # claims' deletes in flight (kept: not collected)
        self._release_wait = release_wait
        self._forgotten = forgetting or Forgetting()
        self._store = store
        self._freshness = freshness
        self._min_refresh_interval = min_refresh_interval
        self._serve_stale_for = serve_stale_for if resubmit is not None else 0.0
        self._resubmit = resubmit
        self._clock = clock
        self._in_flight: SingleFlight[Outcome] = SingleFlight()

    def is_fresh(self, record: UrlRecord) -> bool:
        return self._freshness.is_fresh(record, self._clock())

    async def __call__(self, task: CrawlTask, next: Next[CrawlTask, Outcome]) -> Outcome:
        try:
            url = urls.canonicalize(task.submitted)
        except urls.InvalidUrl as exc:
            key = task.submitted.strip()
            record = UrlRecord(url=task.submitted, status=Status.INVALID_URL, error=str(exc),
                               fetched_at=self._clock())
            return Outcome(task, record, Resolution.REJECTED, key=key)
        task = evolve(task, url=url)
        if self._forgotten(url):
            return forgotten_outcome(task)
        while True:
            if url in self._in_flight and not task.refresh:
                # The record may answer without waiting for the crawl in flight (a refresh of a
                # record this sighting gets STALE).
                answered = await self._from_record(task, await self._stored(url))
                if answered is not None:
                    return answered
            # run() registers the URL before its first await, so concurrent sightings join this crawl.
            joined = url in self._in_flight
            outcome = await self._in_flight.run(url, lambda: self._decide(task, next))
            if not joined:
                return outcome
            if outcome.record.status is Status.FORGOTTEN:     # forgotten while crawled
                return forgotten_outcome(task)
            if outcome.resolution not in _FROM_RECORD:
                return evolve(outcome, task=task, resolution=Resolution.JOINED, fetches=())
            answer = self._answer(task, outcome.record)
            if answer is not None:      # the record answers this sighting too
                return evolve(outcome, task=task, resolution=answer)
            # A refresh that joined a sighting the record answered: it wants a fetch; try again.

    def _answer(self, task: CrawlTask, stored: UrlRecord | None) -> Resolution | None:
        """FRESH or STALE when the stored record answers the task without a fetch, else None."""
        if stored is None or not stored.fetched_at:
            return None
        now = self._clock()
        if self._freshness.is_fresh(stored, now) and (
                not task.refresh or now - stored.fetched_at < self._min_refresh_interval):
            return Resolution.FRESH
        if not task.refresh and self._freshness.servable_stale(stored, now, self._serve_stale_for):
            return Resolution.STALE
        return None

    async def _stored(self, url: str) -> UrlRecord | None:
        """The record stored for `url`, if any."""
        return await self._store.get(url)

    async def _from_record(self, task: CrawlTask, stored: UrlRecord | None) -> Outcome | None:
        """The stored record's answer to the task (FRESH, or STALE with its refresh submitted:
        deduplicated by its Nats-Msg-Id, so each sighting may submit it), or None."""
        answer = self._answer(task, stored)
        if answer is None:
            return None
        if answer is Resolution.STALE:
            await self._resubmit(*stale_refresh(task.url, stored))
        return Outcome(task, stored, answer, key=record_key(stored))

    async def _decide(self, task: CrawlTask, next: Next[CrawlTask, Outcome]) -> Outcome:
        stored = await self._stored(task.url)
        answered = await self._from_record(task, stored)
        if answered is not None:
            return answered
        if self._claims is None:
            return await next(evolve(task, previous=stored))
        return await self._claimed(task, stored, next)

    async def _claimed(self, task: CrawlTask, stored: UrlRecord | None,
                       next: Next[CrawlTask, Outcome]) -> Outcome:
        """The crawl, under the URL's claim across schedulers: held by another, this sighting
        waits for it and joins its record; released with no new record (that crawl failed), or
        abandoned by a scheduler that died, the claim is this one's."""
        for _ in range(CLAIM_TRIES):
            claim = await self._claims.take(task.url)
            if claim is None:
                claim = await self._claims.wait(task.url)
            if claim is None:
                joined = await self._joined(task, stored)
                if joined is not None:
                    return joined
                continue
            try:
                # A crawl elsewhere may have ended between this one's read and its claim; not
                # when the claim was fresh (spiderduck.bus.claims.Claim.fresh), which saves a read.
                if not claim.fresh:
                    joined = await self._joined(task, stored)
                    if joined is not None:
                        return joined
                return await next(evolve(task, previous=stored))
            finally:
                self._release(claim)
        raise BusError(f"the claim of {task.url} changed hands {CLAIM_TRIES} times with no record stored",
                       retryable=True)

    def _release(self, claim: Claim) -> None:
        """Renewals stopped now; the key deleted in the background, awaited by close."""
        claim.stop_renewing()
        deleting = asyncio.create_task(claim.delete())
        self._releasing.add(deleting)
        deleting.add_done_callback(self._released)

    def _released(self, deleting: asyncio.Task) -> None:
        self._releasing.discard(deleting)
        if not deleting.cancelled() and deleting.exception() is not None:
            log.error("claim release failed; it lapses within claim_ttl", exc_info=deleting.exception())

    async def close(self) -> None:
        """Await the claims' deletes still in flight, for at most `release_wait` seconds; the
        ones left then are cancelled (those claims lapse within scheduler.claim_ttl)."""
        if not self._releasing:
            return
        _, late = await asyncio.wait(set(self._releasing), timeout=self._release_wait)
        if late:
            log.warning("%d claim release(s) still pending after %gs: left to lapse within claim_ttl",
                        len(late), self._release_wait)
            for deleting in late:
                deleting.cancel()
            await asyncio.gather(*late, return_exceptions=True)

    async def _joined(self, task: CrawlTask, stored: UrlRecord | None) -> Outcome | None:
        """The record another scheduler's crawl stored since `stored` was read, as this
        sighting's JOINED outcome; None when there is none."""
        now = await self._stored(task.url)
        if now is None or now.fetched_at <= (stored.fetched_at if stored is not None else 0.0):
            return None
        return Outcome(task, now, Resolution.JOINED, key=record_key(now),
                       changed_fields=changed_fields(stored, now))


CLAIM_TRIES = 3     # claims taken or waited for before a sighting gives up (retried later)
_FROM_RECORD = (Resolution.FRESH, Resolution.STALE)
