"""Stage 6, the Crawl Recorder: records the crawl, once per crawl.

Input: a CrawlTask the decider chose to crawl. Output: the Outcome of the stages inside it, as
stored. What the crawl fetched goes to the content store (one WARC record per fetch: the chain's
hops first, then the related fetches, so `content_ref` names the final hop's record), then the
record and one resolution row per URL of the chain go to the metadata store. A re-crawl's final
response is logged as a WARC `revisit` record referring to the response the record renews, and
the outcome is REVALIDATED, when it is a 304 to the conditional request (profile
server-not-modified) or a 200 with the same payload again (identical-payload-digest: the earlier
record's WARC-Payload-Digest equals the new body's; the record is still made from the new body).
`content_ref` then keeps naming the full response. The outcome says which of the record's fields
the crawl changed (`changed_fields`, spiderduck.wire.record_diff). A final response the Post
Processor says may not be archived (`Outcome.archivable`: its publisher said `noarchive`) is not
logged, and `content_ref` stays empty. It sits inside the
crawl decider's single-flight window, so the next sighting of the URL finds the record and a
URL is never crawled twice because its record was not written yet.
With traces on, the store calls are spans made where the stores are wired
(src/spiderduck/scheduler/traced_stores.py), not here.
Failure: a store's StoreError (retryable: retried in place as an outage).

Recording the crawl is one of two writes; the other, recording the sighting (its share, and the
record of an answer no crawl produced), is stages/sighting.py, outside the decider. Both store a
record through `store_outcome` (src/spiderduck/scheduler/storing.py).
"""
from __future__ import annotations

import logging

from spiderduck.core.errors import StoreError
from spiderduck.core.fetch import FetchResult
from spiderduck.core.record import UrlRecord
from spiderduck.wire.record_diff import changed_fields
from spiderduck.stores.content import (IDENTICAL_PAYLOAD_DIGEST, SERVER_NOT_MODIFIED, ContentStore, FetchedContent,
                                   Revisit, new_record_id, payload_digest)
from spiderduck.scheduler.forgetting import Forgetting
from spiderduck.scheduler.stages.chain import Next
from spiderduck.scheduler.storing import store_outcome
from spiderduck.scheduler.task import CrawlTask, Outcome, Resolution
from spiderduck.stores.metadata import MetadataStore
from spiderduck.core.frozen import evolve

log = logging.getLogger("spiderduck.scheduler")


class CrawlRecorder:
    def __init__(self, metadata: MetadataStore, content: ContentStore, *, forgetting: Forgetting | None = None):
        self._metadata = metadata
        self._content = content
        self._forgotten = forgetting or Forgetting()

    async def __call__(self, task: CrawlTask, next: Next[CrawlTask, Outcome]) -> Outcome:
        outcome: Outcome = await next(task)
        return await self._forgotten.write(outcome, self._record, self._metadata, self._content)

    async def _record(self, outcome: Outcome) -> Outcome:
        """The crawl's fetches logged and its record stored: the outcome as stored."""
        task = outcome.task
        *hops, final = outcome.fetches or (None,)
        for f in hops:
            if f.http_status:
                await self._log(f)
        ref = page_id = ""
        if final is not None and final.http_status and outcome.archivable:
            revisit = await self._revisit(task.previous, outcome, final)
            if revisit is not None:
                outcome = evolve(outcome, resolution=Resolution.REVALIDATED)
            page_id = new_record_id()
            ref = await self._log(final, revisit, page_id)
            if final.rendered:        # the DOM the record was made from, derived from the response
                await self._log(evolve(final, body=final.rendered), conversion_of=page_id)
            if revisit is not None:   # the record keeps naming the full response it renewed
                ref = task.previous.content_ref
        for f in outcome.related:       # after the chain: content_ref names the page's record
            if f.http_status:         # WARC-Concurrent-To the page's: a forget of the page finds it
                await self._log(f, concurrent_to=page_id)
        stored = await store_outcome(self._metadata, outcome, ref)
        return evolve(stored, changed_fields=changed_fields(task.previous, stored.record))

    async def _revisit(self, previous: UrlRecord | None, outcome: Outcome, final: FetchResult) -> Revisit | None:
        """The revisit record the final response is logged as, or None for a response record:
        a 304 the Post Processor took (REVALIDATED) is server-not-modified; a 200 whose body is
        the renewed record's payload again is identical-payload-digest. Either refers to the
        earlier response, read from the content store (without it when that record is gone)."""
        if previous is None:
            return None
        if outcome.resolution is Resolution.REVALIDATED:
            return Revisit.of(SERVER_NOT_MODIFIED, await self._earlier(previous))
        if final.http_status != 200 or not previous.content_ref:
            return None
        earlier = await self._earlier(previous)
        if earlier.get("WARC-Payload-Digest") != payload_digest(final.body):
            return None
        return Revisit.of(IDENTICAL_PAYLOAD_DIGEST, earlier)

    async def _earlier(self, previous: UrlRecord) -> dict[str, str]:
        """The WARC headers of the response `previous` names ({} when there is none any more)."""
        if not previous.content_ref:
            return {}
        try:
            earlier, _ = await self._content.read(previous.content_ref)
        except StoreError as exc:
            if exc.retryable:
                raise
            log.info("revisit of %s: the earlier record is gone (%s)", previous.final_url, exc)
            return {}
        return earlier

    async def _log(self, f: FetchResult, revisit: Revisit | None = None, record_id: str = "",
                   conversion_of: str = "", concurrent_to: str = "") -> str:
        return await self._content.append(FetchedContent(
            url=f.url, http_status=f.http_status, headers=f.headers, body=f.body,
            fetched_at=f.fetched_at, remote_address=f.remote_address, truncated=f.truncated,
            revisit=revisit, record_id=record_id, conversion_of=conversion_of,
            concurrent_to=concurrent_to))
