"""Stage 4, the Sighting Recorder: records the sighting, once per submitted URL.

Input: a CrawlTask. Output: the Outcome of the stages inside it, with the record's share_count.
Every sighting counts as one share, whatever its resolution, except a ResolveUrl call's (a
question, not a share).
A REJECTED answer (a URL that is not fetchable) was produced by the decider without a crawl, so
nothing stored it yet: its record is stored here. A crawl's record is stored by the Crawl
Recorder (stages/crawl_record.py), inside the decider's window; this stage sits outside it,
because joined and fresh sightings count too.
An outcome naming a URL on the denylist (FORGOTTEN by the decider, or a stored record whose
chain was forgotten since) is neither stored nor counted, before the write and again after it
(spiderduck.scheduler.forgetting).
Failure: a store's StoreError (retryable: retried in place as an outage).
With traces on, the share's count is a `metadata add_share` span and a rejection's record a
`metadata put` (src/spiderduck/scheduler/traced_stores.py).
"""
from __future__ import annotations


from spiderduck.scheduler.forgetting import Forgetting
from spiderduck.scheduler.stages.chain import Next
from spiderduck.scheduler.storing import store_outcome
from spiderduck.scheduler.task import CrawlTask, Outcome, Resolution
from spiderduck.stores.metadata import MetadataStore
from spiderduck.core.frozen import evolve


class SightingRecorder:
    def __init__(self, metadata: MetadataStore, *, forgetting: Forgetting | None = None):
        self._metadata = metadata
        self._forgotten = forgetting or Forgetting()

    async def __call__(self, task: CrawlTask, next: Next[CrawlTask, Outcome]) -> Outcome:
        outcome: Outcome = await next(task)
        return await self._forgotten.write(outcome, self._record, self._metadata)

    async def _record(self, outcome: Outcome) -> Outcome:
        task = outcome.task
        if outcome.resolution is Resolution.REJECTED:
            outcome = await store_outcome(self._metadata, outcome)
        if task.reply_to:               # a ResolveUrl call asking, not a share of the URL
            return outcome
        shares = await self._metadata.add_share(outcome.key)
        return evolve(
            outcome, record=evolve(outcome.record, share_count=shares))
