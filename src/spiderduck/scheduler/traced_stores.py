"""The scheduler's stores, traced: one CLIENT span per store call made for a URL, with traces on
(src/spiderduck/core/telemetry.py).

build_pipeline (src/spiderduck/scheduler/pipeline.py) wraps the metadata and content stores once,
so the stages call plain store methods and the spans come from here: `metadata get`, `metadata
put`, `metadata add_share`, `metadata forget`, `content append`, `content read` and `content
forget` (a URL forgotten while it was crawled: spiderduck.scheduler.forgetting), each a child of the current
span (the stage's), with `url.full` (the URL the call is for; none for a forget) and `db.system`: `sqlite` or
`cassandra` for the metadata store, `warc` (WARC files on disk) or `hdfs` for the content store,
`other` for any other (tests' own stores). Only the scheduler wraps its stores; the metadata API
shares src/spiderduck/stores and makes no store spans. With traces off, `traced_metadata` and
`traced_content` return the store itself, and nothing is gathered.
"""
from __future__ import annotations

import contextlib
import functools
from typing import Collection, Iterable, Sequence

from opentelemetry.trace import SpanKind

from spiderduck.core import telemetry
from spiderduck.core.record import UrlRecord
from spiderduck.stores.content import ContentStore, FetchedContent
from spiderduck.stores.metadata import Forgotten, MetadataStore

# A store's db.system, by the name of its class (or of a class it derives from): looked up by
# name so that the scheduler need not import every backend (Cassandra's driver) to name it.
_SYSTEMS = (("Sqlite", "sqlite"), ("Cassandra", "cassandra"), ("WarcFile", "warc"), ("Hdfs", "hdfs"))


@functools.cache
def db_system(kind: type) -> str:
    """`sqlite`, `cassandra`, `warc`, `hdfs`, or `other`, for a store of class `kind`."""
    for klass in kind.__mro__:
        for prefix, system in _SYSTEMS:
            if klass.__name__.startswith(prefix):
                return system
    return "other"


def _span(name: str, system: str, url: str | None) -> contextlib.AbstractContextManager:
    attributes = {"db.system": system} if url is None else {"db.system": system, "url.full": url}
    return telemetry.span(name, kind=SpanKind.CLIENT, attributes=attributes)


def traced_metadata(store: MetadataStore) -> MetadataStore:
    """`store`, its calls traced when traces are on; `store` itself when they are off."""
    return TracedMetadataStore(store) if telemetry.enabled() else store


def traced_content(store: ContentStore) -> ContentStore:
    """`store`, its calls traced when traces are on; `store` itself when they are off."""
    return TracedContentStore(store) if telemetry.enabled() else store


class TracedMetadataStore(MetadataStore):
    """A MetadataStore whose get, put and add_share are spans; the batch reads (get_many,
    get_many_wire: the metadata API's, not the stages') pass through untraced."""

    def __init__(self, store: MetadataStore):
        self.store = store
        self._system = db_system(type(store))

    async def get(self, url: str) -> UrlRecord | None:
        with _span("metadata get", self._system, url):
            return await self.store.get(url)

    async def put(self, key: str, record: UrlRecord, aliases: Iterable[str]) -> UrlRecord:
        with _span("metadata put", self._system, key):
            return await self.store.put(key, record, aliases)

    async def add_share(self, key: str, count: int = 1) -> int:
        with _span("metadata add_share", self._system, key):
            return await self.store.add_share(key, count)

    async def forget(self, urls: Sequence[str], domain: str = "") -> Forgotten:
        with _span("metadata forget", self._system, None):
            return await self.store.forget(urls, domain)

    async def get_many(self, urls: Sequence[str]) -> list[UrlRecord | None]:
        return await self.store.get_many(urls)

    async def get_many_wire(self, urls: Sequence[str], max_bytes: int = 0) -> list[bytes | None]:
        return await self.store.get_many_wire(urls, max_bytes)

    async def close(self) -> None:
        await self.store.close()


class TracedContentStore(ContentStore):
    """A ContentStore whose append and read are spans; read_following passes through untraced.

    A read is asked by content_ref alone, so its span's `url.full` is the record's own
    WARC-Target-URI, set once the record is read (none when the read fails)."""

    def __init__(self, store: ContentStore):
        self.store = store
        self._system = db_system(type(store))

    async def append(self, item: FetchedContent) -> str:
        with _span("content append", self._system, item.url):
            return await self.store.append(item)

    async def read(self, content_ref: str) -> tuple[dict[str, str], bytes]:
        with _span("content read", self._system, None) as span:
            headers, block = await self.store.read(content_ref)
            if "WARC-Target-URI" in headers:
                telemetry.set_attribute(span, "url.full", headers["WARC-Target-URI"])
            return headers, block

    async def read_following(self, content_ref: str, max_bytes: int,
                             max_records: int) -> list[tuple[dict[str, str], bytes]]:
        return await self.store.read_following(content_ref, max_bytes, max_records)

    async def forget(self, urls: Collection[str], domain: str = "") -> int:
        with _span("content forget", self._system, None):
            return await self.store.forget(urls, domain)

    async def close(self) -> None:
        await self.store.close()
