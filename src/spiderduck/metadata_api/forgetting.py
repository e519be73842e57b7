"""One forget (MetadataService.Forget, issue 39), in the order that keeps a crawl from storing
again what is being removed:

  1 the denylist       the URLs asked (spiderduck.stores.keys.lookup_key forms) and the domain go
                       on it first (spiderduck.bus.denylist), so no scheduler stores them meanwhile;
                       then `settle` (metadata_api.forget_wait, DENYLIST_LAG): a scheduler may
                       take that long to see the list, and a crawl it writes before it does must
                       be written before the removal starts (one written after is removed by the
                       scheduler itself: spiderduck.scheduler.forgetting);
  2 the metadata store MetadataStore.forget: the records, aliases, resolution rows and share
                       counts; the other URLs it reached (aliases, hops) go on the denylist too,
                       with the same reason and caller: "the URLs forgotten with it";
  3 the content log    ContentStore.forget of every URL reached, and the domain;
  4 the events stream  spiderduck.bus.events_erase.erase_events of the same.

A part that fails (StoreError, BusError, or a store that cannot: NotImplementedError) does not
stop the others: PartsFailed names each failed part, with what the others removed, and the forget
can be repeated until it succeeds. A repeat must still reach the aliases the first one found,
which the metadata store no longer knows: the URLs asked are widened by the denylist entries of
the same caller and reason written with or after theirs (forgetting a URL already on the list
again is always right: nothing of it should be kept).

Each forget and unforget is logged on the logger `spiderduck.audit` (the caller, the reason as one
quoted line, the number of URLs and the domain, never the URLs themselves nor a token) and counted
in spiderduck_forgotten_total{kind} (records, content_records, events).
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Awaitable, Callable, Collection, Iterable, Sequence

from spiderduck.bus.denylist import DENYLIST_LAG, Denylist, Entry, domain_of
from spiderduck.bus.events_erase import erase_events
from spiderduck.core import metrics
from spiderduck.core.errors import BusError, SpiderDuckError, StoreError
from spiderduck.stores.content import ContentStore
from spiderduck.stores.keys import lookup_key
from spiderduck.stores.metadata import MetadataStore

audit = logging.getLogger("spiderduck.audit")
_metrics = metrics.recorder(metrics.UNSCOPED)       # spiderduck_forgotten_total{kind}

# What a part that cannot finish raises: the forget goes on, and says which part to repeat.
PART_FAILURES = (StoreError, BusError, NotImplementedError, OSError)
DENYLIST, METADATA, CONTENT, EVENTS = "the denylist", "the metadata store", "the content log", "the events stream"

Erase = Callable[..., Awaitable[int]]


@dataclasses.dataclass(frozen=True)
class Removed:
    """What a forget removed (a repeat removes nothing more)."""
    records: int = 0
    content_records: int = 0
    events: int = 0


class PartsFailed(SpiderDuckError):
    """Some parts of a forget failed (`failed`: part -> why); `removed`: what the others removed."""
    retryable = True

    def __init__(self, failed: dict[str, str], removed: Removed):
        self.failed = failed
        self.removed = removed
        parts = "; ".join(f"{part}: {why}" for part, why in failed.items())
        super().__init__(f"the forget did not finish: {parts}. What the other parts held is removed; "
                         "repeat the forget until it succeeds")


def widened(asked: Collection[str], entries: Iterable[Entry], domain: str = "") -> set[str]:
    """The URLs asked, with the URLs forgotten with them (or with `domain`): entries of the
    denylist of the same caller (`by`) and reason as an asked URL's (or the domain's) entry,
    written at or after it."""
    entries = list(entries)
    since: dict[tuple[str, str], float] = {}
    for entry in entries:
        if entry.url in asked or (domain and entry.domain == domain):
            group = (entry.by, entry.reason)
            since[group] = min(entry.at, since.get(group, entry.at))
    reach = set(asked)
    for entry in entries:
        group = (entry.by, entry.reason)
        if entry.url and group in since and entry.at >= since[group]:
            reach.add(entry.url)
    return reach


def one_line(text: str) -> str:
    """`text` as one quoted line of the audit log (a newline in it cannot forge another line)."""
    return repr(text)


class Forgetter:
    """Forgets from `store`, `content` (None: no content log here) and the events stream of
    `js`, listing on `denylist`."""

    def __init__(self, store: MetadataStore, content: ContentStore | None, js, denylist: Denylist, *,
                 erase: Erase = erase_events, settle: float = DENYLIST_LAG):
        self._store = store
        self._settle = settle
        self._content = content
        self._js = js
        self.denylist = denylist
        self._erase = erase

    async def forget(self, urls: Sequence[str], domain: str = "", *, reason: str, by: str) -> Removed:
        """Forget `urls` (each with its redirect chain) and every URL of `domain` (a registrable
        domain, checked by the caller). Raises PartsFailed when a part did not finish."""
        asked = {lookup_key(url) for url in urls}
        failed: dict[str, str] = {}
        reach = widened(asked, self.denylist.entries(), domain)
        try:
            await self.denylist.add(sorted(asked), domain, reason=reason, by=by)
        except PART_FAILURES as exc:
            failed[DENYLIST] = str(exc) or type(exc).__name__
        else:
            await asyncio.sleep(self._settle)
        records = 0
        try:
            found = await self._store.forget(sorted(reach), domain)
            records = found.records
            # Listed one by one: the URLs the domain's entry does not already cover (a domain's
            # forget reaches every URL of it, which its one entry denies).
            more = {url for url in found.urls if url not in reach and not (domain and domain_of(url) == domain)}
            reach |= set(found.urls)
            if more and DENYLIST not in failed:
                await self.denylist.add(sorted(more), reason=reason, by=by)
        except (StoreError, NotImplementedError, OSError) as exc:
            failed[METADATA] = str(exc) or type(exc).__name__
        except BusError as exc:
            failed[DENYLIST] = str(exc)
        content_records = await self._part(failed, CONTENT, self._forget_content, reach, domain)
        events = await self._part(failed, EVENTS, self._erase, self._js, reach, domain)
        removed = Removed(records, content_records, events)
        self._record("forget", by, reason, removed, urls=len(asked), domain=domain, failed=failed)
        if failed:
            raise PartsFailed(failed, removed)
        return removed

    async def _forget_content(self, urls: Collection[str], domain: str) -> int:
        if self._content is None:
            raise NotImplementedError("this metadata-api has no content store (content_store)")
        return await self._content.forget(urls, domain)

    @staticmethod
    async def _part(failed: dict[str, str], part: str, call, *args) -> int:
        try:
            return await call(*args)
        except PART_FAILURES as exc:
            failed[part] = str(exc) or type(exc).__name__
            return 0

    async def unforget(self, urls: Sequence[str], domain: str = "", *, by: str) -> int:
        """Take `urls` and `domain` off the denylist; how many entries went. Nothing comes back."""
        gone = await self.denylist.remove([lookup_key(url) for url in urls], domain)
        audit.info("unforget by=%s urls=%d domain=%s entries=%d", one_line(by), len(urls), one_line(domain), gone)
        return gone

    @staticmethod
    def _record(action: str, by: str, reason: str, removed: Removed, *, urls: int, domain: str,
                failed: dict[str, str]) -> None:
        for kind, amount in dataclasses.asdict(removed).items():
            _metrics.count("forgotten", amount, kind=kind)
        audit.log(logging.WARNING if failed else logging.INFO,
                  "%s by=%s reason=%s urls=%d domain=%s records=%d content_records=%d events=%d%s",
                  action, one_line(by), one_line(reason), urls, one_line(domain), removed.records,
                  removed.content_records, removed.events,
                  f" failed={one_line(', '.join(failed))}" if failed else "")
