"""The metadata store interface: records by key, resolution rows, share counts.

A record is kept under one key (the canonical final URL of its chain). Every URL
that led to it (the submitted URL, each redirect hop, the final URL) has a
resolution row pointing at that key, so any of them answers with the final
page's record. Share counts are counters per key.
"""
from __future__ import annotations

import abc
import dataclasses
from typing import Iterable, Sequence

from spiderduck.core.errors import SpiderDuckError
from spiderduck.core.record import UrlRecord
from spiderduck.stores.closing import Closing
from spiderduck.wire import record_proto


WIRE_CHUNK = 20      # URLs read at a time by the default get_many_wire, checking its budget


class AnswerTooLarge(SpiderDuckError):
    """The records asked for pass the caller's byte budget (at least `size` bytes)."""

    def __init__(self, size: int, limit: int):
        super().__init__(f"the records alone pass {size} bytes (limit {limit})")
        self.size = size
        self.limit = limit


class Budget:
    """Counts bytes read against a limit (0 = none); raises AnswerTooLarge past it."""

    def __init__(self, limit: int):
        self.limit = limit
        self.used = 0

    def take(self, data: bytes) -> bytes:
        self.used += len(data)
        if self.limit and self.used > self.limit:
            raise AnswerTooLarge(self.used, self.limit)
        return data


@dataclasses.dataclass(frozen=True)
class Forgotten:
    """What MetadataStore.forget removed: `records` deleted, and `urls`, every URL the forget
    reached (those asked for, every alias of their records, each URL of their chains, and with a
    domain every URL of it the store knew), which the content log, the events and the denylist
    are then cleared of."""
    records: int
    urls: frozenset[str]


class MetadataStore(Closing, abc.ABC):
    """Async; every implementation passes tests/stores/test_metadata_store.py."""

    @abc.abstractmethod
    async def put(self, key: str, record: UrlRecord, aliases: Iterable[str]) -> UrlRecord:
        """Store `record` under `key` and point `key` and every alias at it.

        Reads afterwards give the stored truth: the earliest `first_seen` of all the puts of
        the key (whatever order they ran in, from however many processes) and the current share
        count (add_share).

        Returns the record as written: `first_seen` the caller's (now when unset), rounded as
        the store keeps it, and `share_count` the caller's. A store may return the stored
        values instead (SQLite does), but callers must not count on it: Cassandra writes
        without reading, so it cannot know an earlier put's first_seen or the share count.
        """

    @abc.abstractmethod
    async def get_many(self, urls: Sequence[str]) -> list[UrlRecord | None]:
        """The record each URL resolves to, in order (None: never seen)."""

    async def get_many_wire(self, urls: Sequence[str], max_bytes: int = 0) -> list[bytes | None]:
        """get_many as serialized spiderduck.v1.UrlMetadata, share_count included, for answers.

        With `max_bytes`, raises AnswerTooLarge as soon as the records read so far pass it,
        so one call never holds much more than that in memory. Stores that keep records as
        those bytes (SQLite) return them unparsed; this default encodes what get_many returns,
        WIRE_CHUNK URLs at a time."""
        out: list[bytes | None] = []
        budget = Budget(max_bytes)
        for start in range(0, len(urls), WIRE_CHUNK):
            for rec in await self.get_many(urls[start:start + WIRE_CHUNK]):
                out.append(None if rec is None else budget.take(
                    record_proto.to_proto(rec).SerializeToString()))
        return out

    async def get(self, url: str) -> UrlRecord | None:
        return (await self.get_many([url]))[0]

    @abc.abstractmethod
    async def add_share(self, key: str, count: int = 1) -> int:
        """Count sightings of the record under `key`; returns the new total."""

    async def expire(self, before: float) -> int:
        """Delete every record last crawled or refreshed (its fetched_at) before `before` (epoch
        seconds), with its resolution rows (so every alias answers as never seen) and its share
        count; returns how many records went (retention.metadata). Raises NotImplementedError
        where the store cannot expire records."""
        raise NotImplementedError(f"{type(self).__name__} does not expire records")

    async def forget(self, urls: Sequence[str], domain: str = "") -> Forgotten:
        """Delete, for each URL (as given; looked up as spiderduck.stores.keys.lookup_key would), the
        record it resolves to, that record's resolution rows (the URLs that redirected to it, its
        hops) and share count, and the records of the URLs of its chain; with `domain` (a
        registrable domain, spiderduck.core.urls.registrable_domain), every record and resolution row
        whose URL's host is of that domain. Idempotent: a second call removes nothing and says
        so. The deleted bytes do not stay readable in the store's files (SQLite: secure_delete and
        a truncating checkpoint). Raises NotImplementedError where the store cannot forget."""
        raise NotImplementedError(f"{type(self).__name__} does not forget records")
