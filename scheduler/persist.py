"""Stage 5, persist, in two places of the chain.

CrawlRecorder sits inside the crawl decider's single-flight window: it stores what a
crawl produced (one WARC record per fetch in the content store, the chain's hops first and
then the related fetches, then the record and
one resolution row per URL of the chain in the metadata store) before the decider
lets the next sighting of the URL look at the store, so a URL is never crawled twice
because its record was not written yet.

Persister sits outside the decider: it stores the decider's own answers for URLs that
were never fetched (REJECTED) and counts every sighting, fresh and joined ones too,
as one share.
"""
from __future__ import annotations

import dataclasses

from common.fetch import FetchResult
from common.record_limits import bounded
from common.stores.content import ContentStore, FetchedContent
from common.stores.metadata import MetadataStore
from scheduler.stage import Next
from scheduler.task import CrawlTask, Outcome, Resolution


async def _store(metadata: MetadataStore, outcome: Outcome, content_ref: str = "") -> Outcome:
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
        return await _store(self._metadata, outcome, refs[-1] if final_logged else "")

    async def _log(self, f: FetchResult) -> str:
        return await self._content.append(FetchedContent(
            url=f.url, http_status=f.http_status, headers=f.headers, body=f.body,
            fetched_at=f.fetched_at, remote_address=f.remote_address, truncated=f.truncated))


class Persister:
    def __init__(self, metadata: MetadataStore):
        self._metadata = metadata

    async def __call__(self, task: CrawlTask, next: Next) -> Outcome:
        outcome: Outcome = await next(task)
        if outcome.resolution is Resolution.REJECTED:
            outcome = await _store(self._metadata, outcome)
        shares = await self._metadata.add_share(outcome.key)
        return dataclasses.replace(
            outcome, record=dataclasses.replace(outcome.record, share_count=shares))
