"""Stage 2, the Honesty Checker: a browser's look at a URL against its card (issue 43), after the card.

Input: a CrawlTask. Output: the Outcome of the stages inside it (announced, as stored first),
unchanged. It sits outside the Notifier, so the first card is stored and announced as without it.
Then, for a crawl the Honesty Selector found due (`Outcome.honesty_due`), it makes the second look
(scheduler.honesty_look: the same URL again through the fetchers, as a browser), compares the two
(spiderduck.extract.honesty.compare), stores the record with its `honesty`
(consistent / differs and the differences, where the browser ended, when), publishes a processed
event whose `changed_fields` is `honesty` (to the events stream, also for a ResolveUrl's URL,
whose call has had its answer), and a `differs` also on spiderduck.events.disputed. A look whose
last hop got no answer (a timeout, a refused connection) is `unchecked`, unless it went to a
registrable domain the crawl's chain never touched; so is a look past process.honesty_timeout. The
verdict is written onto the record as stored now (re-read): a record another crawl renewed
meanwhile is left to that crawl. Each verdict is counted (spiderduck_honesty_checks_total{verdict}).

Failure: none of the check's reaches the message: its record and event are out already. A fetcher
that does not answer or an extraction that fails is logged and the record keeps what the first
write said; a publish that fails after the store is logged, and the verdict stays stored without
its event.
"""
from __future__ import annotations

import asyncio
import logging
import time

from spiderduck.core.metrics import Recorder
from spiderduck.core.record import Honesty
from spiderduck.extract.honesty import DIFFERS, UNCHECKED, Look, compare, domain_of
from spiderduck.scheduler.events import Publish
from spiderduck.scheduler.forgetting import Forgetting
from spiderduck.scheduler.honesty_look import Extract, browser_look, first_look
from spiderduck.scheduler.stages.chain import Next
from spiderduck.scheduler.storing import store_outcome
from spiderduck.scheduler.task import CrawlTask, FetchHop, Outcome, Resolution
from spiderduck.stores.metadata import MetadataStore
from spiderduck.core.frozen import evolve

log = logging.getLogger("spiderduck.scheduler")
CHANGED = ("honesty",)


class HonestyChecker:
    def __init__(self, fetch_hop: FetchHop, *, metadata: MetadataStore, publish: Publish,
                 dispute: Publish | None, extract: Extract, metrics: Recorder, max_redirects: int,
                 refresh_max_delay: float, timeout: float, forgetting: Forgetting | None = None,
                 clock=time.time):
        self._fetch_hop = fetch_hop
        self._metadata = metadata
        self._publish = publish
        self._dispute = dispute             # to spiderduck.events.disputed; None: not published
        self._extract = extract
        self._metrics = metrics             # recorder("honesty")
        self._max_redirects = max_redirects
        self._refresh_max_delay = refresh_max_delay
        self._timeout = timeout             # process.honesty_timeout
        self._forgotten = forgetting or Forgetting()
        self._clock = clock

    async def __call__(self, task: CrawlTask, next: Next[CrawlTask, Outcome]) -> Outcome:
        outcome: Outcome = await next(task)
        if outcome.honesty_due and outcome.resolution in (Resolution.CRAWLED, Resolution.REVALIDATED):
            try:
                await self._check(outcome)
            except asyncio.CancelledError:
                raise
            except Exception as exc:   # noqa: BLE001 -- the card is out already
                log.warning("honesty check of %s failed: %s: %s", outcome.task.url,
                            type(exc).__name__, exc)
        return outcome

    async def _check(self, outcome: Outcome) -> None:
        checked_at = self._clock()
        first = first_look(outcome)
        try:
            async with asyncio.timeout(self._timeout):
                seen = await browser_look(self._fetch_hop, outcome.task.url, extract=self._extract,
                                          max_redirects=self._max_redirects,
                                          refresh_max_delay=self._refresh_max_delay, forgetting=self._forgotten,
                                          crawled=outcome)
        except TimeoutError:
            seen = None
        if seen is not None and seen.forgotten:
            return
        honesty = Honesty(UNCHECKED)
        if seen is not None and seen.look is not None:
            verdict, differences = compare(first, seen.look)
            if seen.answered or domain_of(seen.look.final_url) not in _domains(first):
                honesty = Honesty(verdict, differences, seen.look.final_url, checked_at)
            # else a fault on the way within the crawl's own domains: not a page to weigh
        self._metrics.count("checks", verdict=honesty.verdict)
        current = await self._metadata.get(outcome.key)
        if current is None or current.fetched_at != outcome.record.fetched_at:
            return                  # forgotten, or renewed by another crawl meanwhile: its own say
        updated = evolve(outcome, record=evolve(current, honesty=honesty))
        stored = await self._forgotten.write(
            updated, lambda o: store_outcome(self._metadata, o, o.record.content_ref), self._metadata)
        if stored.record.honesty != honesty:    # forgotten meanwhile: nothing more is said
            return
        event = evolve(stored, task=evolve(stored.task, reply_to=""), changed_fields=CHANGED)
        dedupe = f"{outcome.task.submitted}\n{outcome.task.received_at!r}\nhonesty"
        await self._publish(event, dedupe)
        if honesty.verdict == DIFFERS and self._dispute is not None:
            await self._dispute(event, f"{dedupe}\ndisputed")     # one stream: an id of its own


def _domains(look: Look) -> set[str]:
    """The registrable domains a look passed through or ended on."""
    return {domain_of(u) for u in (*look.chain, look.final_url)}
