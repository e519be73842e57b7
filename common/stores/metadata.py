"""The metadata store interface: records by key, resolution rows, share counts.

A record is kept under one key (the canonical final URL of its chain). Every URL
that led to it (the submitted URL, each redirect hop, the final URL) has a
resolution row pointing at that key, so any of them answers with the final
page's record. Share counts are counters per key.
"""
from __future__ import annotations

import abc
from typing import Iterable, Sequence

from common import record_proto
from common.record import UrlRecord


class MetadataStore(abc.ABC):
    """Async; every implementation passes tests/common/stores/test_metadata_store.py."""

    @abc.abstractmethod
    async def put(self, key: str, record: UrlRecord, aliases: Iterable[str]) -> UrlRecord:
        """Store `record` under `key` and point `key` and every alias at it.

        Keeps the earliest `first_seen` of an earlier record under the same key.
        Returns the record as stored (first_seen and share_count filled in).
        """

    @abc.abstractmethod
    async def get_many(self, urls: Sequence[str]) -> list[UrlRecord | None]:
        """The record each URL resolves to, in order (None: never seen)."""

    async def get_many_wire(self, urls: Sequence[str]) -> list[bytes | None]:
        """get_many as serialized spiderduck.v1.UrlMetadata, share_count included, for answers.

        Stores that keep records as those bytes (SQLite) return them unparsed; this default
        encodes what get_many returns."""
        return [None if rec is None else record_proto.to_proto(rec).SerializeToString()
                for rec in await self.get_many(urls)]

    async def get(self, url: str) -> UrlRecord | None:
        return (await self.get_many([url]))[0]

    @abc.abstractmethod
    async def add_share(self, key: str, count: int = 1) -> int:
        """Count sightings of the record under `key`; returns the new total."""

    async def close(self) -> None:
        pass

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()
