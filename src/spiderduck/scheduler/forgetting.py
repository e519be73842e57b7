"""Forgetting in the scheduler (issue 39): a forgotten URL is never fetched and never stored again.

The denylist (spiderduck.bus.denylist) is asked, one set lookup per URL, where it matters:

    Crawl Decider     the submitted URL, before any store read or fetch
    Redirect Follower each hop's URL, before the hop is fetched (a shortener may be fetched; the
                      forgotten page it leads to is not)
    Related Fetcher   the page's URLs, before its image, oEmbed or favicon is fetched
    Crawl Recorder,   every URL of the outcome (the submitted one, the chain, the final one) just
    Sighting Recorder before writing, and again just after: a URL forgotten while it was being
                      crawled had its forget run before this write, so what was written is
                      removed again (`unwrite`)

Each ends the same way (`forgotten_outcome`): status FORGOTTEN, resolution REJECTED (never
fetched), no record stored, no share counted, and an event naming only the URL as submitted and
the status. It is an answer, not a failure: the submission is acked.

Off the per-URL path, `seal_on_forget` seals the content writer's open file (ContentStore.roll)
whenever the list gains entries, so the file that may hold a forgotten URL's records can be
rewritten without them.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import AsyncIterator, Awaitable, Callable, Iterable

from spiderduck.bus.denylist import DENYLIST_LAG, Denylist
from spiderduck.core.errors import StoreError
from spiderduck.core.record import UrlRecord
from spiderduck.core.status import Status
from spiderduck.scheduler.task import CrawlTask, Outcome, Resolution
from spiderduck.stores.content import ContentStore
from spiderduck.stores.metadata import MetadataStore

log = logging.getLogger("spiderduck.scheduler")


class Forgetting:
    """The denylist's word on URLs in canonical (lookup_key) form; without a denylist (tests,
    tools with no NATS) nothing is forgotten."""

    def __init__(self, denylist: Denylist | None = None):
        self._denylist = denylist

    def __call__(self, *urls: str) -> bool:
        """Whether any of `urls` (or its domain) is on the list."""
        denylist = self._denylist
        return denylist is not None and any(u and denylist.forgotten(u, canonical=True) for u in urls)

    def of(self, outcome: Outcome) -> bool:
        """Whether the outcome is FORGOTTEN already or names a forgotten URL."""
        return outcome.record.status is Status.FORGOTTEN or self(*outcome_urls(outcome))

    async def write(self, outcome: Outcome, write: Callable[[Outcome], Awaitable[Outcome]],
                    metadata: MetadataStore, content: ContentStore | None = None) -> Outcome:
        """`write(outcome)` (a recorder's writes; the outcome as written), asked just before and
        again just after: FORGOTTEN instead, with nothing written, or with what was written
        removed again (`unwrite`) when the URL was forgotten meanwhile."""
        if self.of(outcome):
            return forgotten_outcome(outcome.task)
        written = await write(outcome)
        if self.of(written):
            await unwrite(outcome_urls(written), metadata, content)
            return forgotten_outcome(outcome.task)
        return written


def outcome_urls(outcome: Outcome) -> tuple[str, ...]:
    """Every URL an outcome would be stored under or names: the one asked for, its chain's hops
    and the final one, and the key."""
    record = outcome.record
    hops = tuple(f.url for f in outcome.task.hops)
    return tuple(dict.fromkeys(u for u in (outcome.task.url, *hops, *record.chain, outcome.key) if u))


def forgotten_outcome(task: CrawlTask) -> Outcome:
    """The answer for a forgotten URL: the URL as submitted and FORGOTTEN, nothing of a page."""
    return Outcome(task, UrlRecord(url=task.submitted, status=Status.FORGOTTEN),
                   Resolution.REJECTED, key=task.url or task.submitted.strip())


async def unwrite(urls: Iterable[str], metadata: MetadataStore, content: ContentStore | None = None) -> None:
    """Remove what was just written for `urls` (both forgets are idempotent). A store that cannot
    forget, or fails to, is logged: the URL still ends FORGOTTEN, and the API's Forget, repeated,
    removes what is left."""
    urls = sorted(set(urls))
    for name, store in (("metadata", metadata), ("content", content)):
        if store is None:
            continue
        try:
            await store.forget(urls)
        except (NotImplementedError, StoreError) as exc:
            log.warning("forgotten while crawled: the %s store kept what was written for %d URL(s): %s",
                        name, len(urls), exc)


@contextlib.asynccontextmanager
async def seal_on_forget(denylist: Denylist, content: ContentStore) -> AsyncIterator[None]:
    """While inside, seal the content writer's open file (ContentStore.roll) each time the list
    gains entries, looked at every DENYLIST_LAG seconds; nothing for a store whose roll does
    nothing (WARC files on disk are erased in place)."""
    if type(content).roll is ContentStore.roll:
        yield
        return
    task = asyncio.create_task(_seal_on_growth(denylist, content.roll), name="seal-on-forget")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _mark(denylist: Denylist) -> tuple[int, float]:
    entries = denylist.entries()
    return len(entries), max((e.at for e in entries), default=0.0)


async def _seal_on_growth(denylist: Denylist, seal) -> None:
    seen = _mark(denylist)
    while True:
        await asyncio.sleep(DENYLIST_LAG)
        now = _mark(denylist)
        if now[1] > seen[1] or now[0] > seen[0]:
            try:
                await seal()
            except StoreError as exc:
                log.warning("could not seal the content file after a forget: %s", exc)
                continue        # tried again at the next look
            log.info("the denylist gained entries: sealed the open content file")
        seen = now
