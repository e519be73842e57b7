"""Stage 5, the Crawl Recorder: records the crawl, once per crawl.

Input: a CrawlTask the decider chose to crawl. Output: the Outcome of the stages inside it, as
stored. What the crawl fetched goes to the content store (one WARC record per fetch: the chain's
hops first, then the related fetches, so `content_ref` names the final hop's record), then the
record and one resolution row per URL of the chain go to the metadata store. A 304 to a
conditional re-fetch (REVALIDATED) is logged as a WARC `revisit` record (profile
server-not-modified) referring to the response the record renews, and `content_ref` keeps naming
that full response. It sits inside the
crawl decider's single-flight window, so the next sighting of the URL finds the record and a
URL is never crawled twice because its record was not written yet.
Failure: a store's StoreError (retryable: retried in place as an outage).

Recording the crawl is one of two writes; the other, recording the sighting (its share, and the
record of an answer no crawl produced), is stages/sighting.py, outside the decider. Both store a
record through `store_outcome`.
"""
from __future__ import annotations

import dataclasses
import logging

from common.errors import StoreError
from common.fetch import FetchResult
from common.record import UrlRecord
from common.record_limits import bounded
from common.stores.content import SERVER_NOT_MODIFIED, ContentStore, FetchedContent, Revisit
from common.stores.metadata import MetadataStore
from scheduler.stages.chain import Next
from scheduler.task import CrawlTask, Outcome, Resolution

log = logging.getLogger("spiderduck.scheduler")


async def store_outcome(metadata: MetadataStore, outcome: Outcome, content_ref: str = "") -> Outcome:
    """The outcome with its record as stored, under its key and every URL of its chain."""
    # Bounded here, where every record is stored: what is stored is also what is announced.
    record = bounded(dataclasses.replace(outcome.record, content_ref=content_ref))
    aliases = {outcome.task.url, *record.chain} - {""}
    stored = await metadata.put(outcome.key, record, aliases)
    return dataclasses.replace(outcome, record=stored)


class CrawlRecorder:
    def __init__(self, metadata: MetadataStore, content: ContentStore):
        self._metadata = metadata
        self._content = content

    async def __call__(self, task: CrawlTask, next: Next) -> Outcome:
        outcome: Outcome = await next(task)
        revalidated = outcome.resolution is Resolution.REVALIDATED
        *hops, final = outcome.fetches or (None,)
        for f in hops:
            if f.http_status:
                await self._log(f)
        ref = ""
        if final is not None and final.http_status:
            ref = await self._log(final, await self._revisit(task.previous) if revalidated else None)
        for f in outcome.related:       # after the chain: content_ref names the page's record
            if f.http_status:
                await self._log(f)
        # A 304's record keeps naming the full response it renewed; its revisit refers to that.
        return await store_outcome(self._metadata, outcome, task.previous.content_ref if revalidated else ref)

    async def _revisit(self, previous: UrlRecord) -> Revisit:
        """What the 304's revisit record says of the response it renews: that record's ID, URI
        and date, read from the content store; without them when that record is gone."""
        earlier: dict[str, str] = {}
        if previous.content_ref:
            try:
                earlier, _ = await self._content.read(previous.content_ref)
            except StoreError as exc:
                if exc.retryable:
                    raise
                log.info("revisit of %s: the earlier record is gone (%s)", previous.final_url, exc)
        return Revisit.of(SERVER_NOT_MODIFIED, earlier)

    async def _log(self, f: FetchResult, revisit: Revisit | None = None) -> str:
        return await self._content.append(FetchedContent(
            url=f.url, http_status=f.http_status, headers=f.headers, body=f.body,
            fetched_at=f.fetched_at, remote_address=f.remote_address, truncated=f.truncated,
            revisit=revisit))
