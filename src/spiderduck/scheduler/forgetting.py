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

Off the per-URL path, `follow_forgets` acts on the content log whenever the list gains entries:
it seals the writer's open file (ContentStore.roll: HDFS), so the metadata API's forget can
rewrite it, and on a store of files on this scheduler's own disk (ContentStore.local: file://) it
erases the new entries' records itself when told its folder is its own (the `scheduler` role of a
deployment: a folder the metadata API cannot reach; its Forget counts only what it erased, and each
scheduler logs what it did). In `spiderduck up` the metadata API's Forget erases that folder.
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
async def follow_forgets(denylist: Denylist, content: ContentStore, *, erase: bool = False
                         ) -> AsyncIterator[None]:
    """While inside, look at the list every DENYLIST_LAG seconds and, when it has gained entries,
    seal the content writer's open file and, with `erase` on a local store, erase the new entries'
    records (see the module's docstring); nothing for a store that needs neither."""
    seals = type(content).roll is not ContentStore.roll
    erases = erase and content.local
    if not seals and not erases:
        yield
        return
    task = asyncio.create_task(_follow(denylist, content, seals, erases), name="follow-forgets")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _listed(denylist: Denylist) -> set[tuple[str, str]]:
    return {(entry.url, entry.domain) for entry in denylist.entries()}


async def _follow(denylist: Denylist, content: ContentStore, seals: bool, erases: bool) -> None:
    seen = _listed(denylist)
    while True:
        await asyncio.sleep(DENYLIST_LAG)
        now = _listed(denylist)
        new = now - seen
        if new:
            try:
                await _act(content, seals, erases, new)
            except StoreError as exc:
                log.warning("forget: the content log was not brought in line with the denylist "
                            "(tried again at the next look): %s", exc)
                continue        # `seen` kept: the same entries are acted on again
        seen = now


async def _act(content: ContentStore, seals: bool, erases: bool, new: set[tuple[str, str]]) -> None:
    if seals:
        await content.roll()
        log.info("the denylist gained entries: sealed the open content file")
    if erases:
        urls = sorted(url for url, _ in new if url)
        erased = await content.forget(urls) if urls else 0
        for domain in sorted(domain for _, domain in new if domain):
            erased += await content.forget((), domain)
        log.log(logging.INFO if erased else logging.DEBUG,
                "forget: erased %d content-log record(s) of %d new denylist entries", erased, len(new))
