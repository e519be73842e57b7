"""Stage 5: persist what the inner stages produced, and count the sighting.

Crawled and rejected outcomes are stored: one WARC record per fetch in the
content store, then the record and one resolution row per URL of the chain in
the metadata store. Every outcome (fresh and joined ones too) counts one share.
"""
from __future__ import annotations

import dataclasses

from common.stores.content import ContentStore, FetchedContent
from common.stores.metadata import MetadataStore
from scheduler.stage import Next
from scheduler.task import CrawlTask, Outcome, Resolution


class Persister:
    def __init__(self, metadata: MetadataStore, content: ContentStore):
        self._metadata = metadata
        self._content = content

    async def __call__(self, task: CrawlTask, next: Next) -> Outcome:
        outcome: Outcome = await next(task)
        record = outcome.record
        if outcome.resolution in (Resolution.CRAWLED, Resolution.REJECTED):
            refs = [await self._content.append(FetchedContent(
                        url=f.url, http_status=f.http_status, headers=f.headers, body=f.body,
                        fetched_at=f.fetched_at, remote_address=f.remote_address))
                    for f in outcome.fetches if f.http_status]
            final_logged = outcome.fetches and outcome.fetches[-1].http_status
            record = dataclasses.replace(record, content_ref=refs[-1] if final_logged else "")
            aliases = {outcome.task.url, *record.chain} - {""}
            record = await self._metadata.put(outcome.key, record, aliases)
        shares = await self._metadata.add_share(outcome.key)
        return dataclasses.replace(outcome, record=dataclasses.replace(record, share_count=shares))
