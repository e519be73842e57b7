"""Stage 5, the Crawl Recorder: records the crawl, once per crawl.

Input: a CrawlTask the decider chose to crawl. Output: the Outcome of the stages inside it, as
stored. What the crawl fetched goes to the content store (one WARC record per fetch: the chain's
hops first, then the related fetches, so `content_ref` names the final hop's record), then the
record and one resolution row per URL of the chain go to the metadata store. It sits inside the
crawl decider's single-flight window, so the next sighting of the URL finds the record and a
URL is never crawled twice because its record was not written yet.
Failure: a store's StoreError (retryable: retried in place as an outage).

Recording the crawl is one of two writes; the other, recording the sighting (its share, and the
record of an answer no crawl produced), is stages/sighting.py, outside the decider. Both store a
record through `store_outcome`.
"""
from __future__ import annotations

import dataclasses

from common.fetch import FetchResult
from common.record_limits import bounded
from common.stores.content import ContentStore, FetchedContent
from common.stores.metadata import MetadataStore
from scheduler.stages.chain import Next
from scheduler.task import CrawlTask, Outcome


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
        refs = [await self._log(f) for f in outcome.fetches if f.http_status]
        final_logged = bool(outcome.fetches) and bool(outcome.fetches[-1].http_status)
        for f in outcome.related:       # after the chain: content_ref names the page's record
            if f.http_status:
                await self._log(f)
        return await store_outcome(self._metadata, outcome, refs[-1] if final_logged else "")

    async def _log(self, f: FetchResult) -> str:
        return await self._content.append(FetchedContent(
            url=f.url, http_status=f.http_status, headers=f.headers, body=f.body,
            fetched_at=f.fetched_at, remote_address=f.remote_address, truncated=f.truncated))
