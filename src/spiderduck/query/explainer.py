"""ExplainUrl's work: why a URL's preview looks as it does (issue 30). MetadataService.ExplainUrl
(src/spiderduck/metadata_api/explain.py), the web UI's /api/v1/explain and its card page ask it.

    record (metadata store) + its page (content store, content_ref's WARC record)
        --extraction worker (spiderduck.extract.rejected)--> Explanation {metadata, fields, findings, note}

The page is never fetched again: the stored response is read from the content log and its
extraction re-run in a worker process of its own (spiderduck.extract.pool: a hostile page costs
at most process.extract_timeout of that worker, never this event loop), this time keeping every
value each field's sources offered, so each field lists the values that lost and why
(`rejected`). `metadata_api.explain_workers` such workers start at the first call. A page that was
rendered (fetch_mode rendered, issue 31) is explained from its rendered DOM, the WARC conversion
record logged after its response. An image the
crawl did not keep is told by what its probe answered (HTTP status, size), read from the records
that follow the page's in the content log (its related fetches: `_probes`).

When the page cannot be read again the fields are explained from the record alone (each filled
field's stored source, `rejected` empty) and `note` says why: the publisher said noarchive (the
page was not archived), no page is stored (an error, a redirect loop), the stored response is no
HTML page, the content store could not be read, or its extraction failed. A URL never seen
raises NeverSeen. Findings per platform (spiderduck.query.findings) are of the record, as every platform sees it.
"""
from __future__ import annotations

import asyncio
from typing import Callable
import logging

from spiderduck.core.errors import SpiderDuckError, StoreError
from spiderduck.core.fetch import HTML_TYPES, RENDERED_TYPE, declared_type
from spiderduck.core.record import RENDERED, FieldSource, UrlRecord
from spiderduck.extract import images
from spiderduck.extract.pool import ExtractionFailed, ExtractionPool, ExtractionTimeout, PoolClosing
from spiderduck.extract.rejected import Probe, explained
from spiderduck.extract.signals import no_archive
from spiderduck.query.findings import findings
from spiderduck.stores.content import ContentStore, http_response
from spiderduck.stores.keys import lookup_key
from spiderduck.stores.metadata import MetadataStore
from spiderduck.v1 import metadata_pb2
from spiderduck.wire import record_proto

log = logging.getLogger("spiderduck.metadata_api")

NOARCHIVE = "the page was not archived (its robots directives say noarchive): explained from the record alone"
# The window after a page's record in which its image probes are looked for: a page's related
# fetches (at most 8 images of process.image_probe_bytes, its oEmbed, its favicon) are logged
# right after it, with other pages' records between them when many are crawled at once.
PROBE_WINDOW_BYTES = 4 << 20
PROBE_WINDOW_RECORDS = 64


class NeverSeen(SpiderDuckError, LookupError):
    """The URL has no record."""


class Explainer:
    """ExplainUrl over a metadata store and a content store (None: from the records alone)."""

    def __init__(self, store: MetadataStore, content: ContentStore | None, *, workers: int,
                 budget: float, parser: str, robots_token: str, min_image_size: int = 0,
                 forgotten: Callable[[str], bool] | None = None):
        self._store = store
        self._forgotten = forgotten     # the denylist's (spiderduck.bus.denylist): a forgotten URL is never seen
        self._min_image_size = min_image_size
        self._content = content if workers else None
        self._pool_args = dict(workers=workers, budget=budget, parser=parser, robots_token=robots_token)
        self._pool: ExtractionPool | None = None
        self._starting = asyncio.Lock()

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()

    async def explanation(self, url: str) -> metadata_pb2.Explanation:
        """The explanation of `url`'s record (its metadata with `url` as asked). Raises NeverSeen,
        or StoreError when the metadata store does not answer."""
        key = lookup_key(url)
        [wire] = await self._store.get_many_wire([key])
        if wire is None or (self._forgotten is not None and self._forgotten(key)):
            raise NeverSeen(f"{url} has never been seen")
        metadata = metadata_pb2.UrlMetadata.FromString(wire)
        metadata.url = url
        fields, note = await self.fields(record_proto.from_proto(metadata))
        return metadata_pb2.Explanation(metadata=metadata, fields=[_proto(f) for f in fields],
                                        findings=findings(metadata), note=note)

    async def fields(self, record: UrlRecord) -> tuple[tuple[FieldSource, ...], str]:
        """The record's fields with the values that lost, or its provenance alone and why."""
        if not record.content_ref:
            if no_archive(record.robots_directives):
                return record.provenance, NOARCHIVE
            return record.provenance, (f"no page is stored for this URL (status {record.status.name}): "
                                       "explained from the record alone")
        if self._content is None:
            return record.provenance, ("this metadata-api does not read stored pages (metadata_api."
                                       "explain_workers is 0): explained from the record alone")
        try:
            warc, block = await self._content.read(record.content_ref)
        except StoreError as exc:
            return record.provenance, f"the stored page could not be read ({exc}): explained from the record alone"
        status, headers, body = http_response(block)
        content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
        if warc.get("WARC-Type") != "response" or not status:
            return record.provenance, "the stored record holds no response: explained from the record alone"
        if content_type and declared_type(content_type) not in HTML_TYPES:
            return record.provenance, (f"the stored response is not an HTML page ({content_type[:100]}): "
                                       "explained from the record alone")
        url = warc.get("WARC-Target-URI") or record.final_url or record.url
        if record.fetch_mode == RENDERED:
            body = await self._rendered(record.content_ref, warc.get("WARC-Record-ID", ""))
            if body is None:
                return record.provenance, ("the page was rendered, and its rendered DOM is not in the content "
                                           "log after its response: explained from the record alone")
            content_type, status = RENDERED_TYPE, 200
        try:
            pool = await self._extraction()
            _, offered = await pool.explain(body, url, content_type or None, status)
        except (ExtractionTimeout, ExtractionFailed, PoolClosing) as exc:
            return record.provenance, f"the stored page's extraction failed ({exc}): explained from the record alone"
        probes = await self._probes(record, offered)
        return explained(record, offered, probes, self._min_image_size), ""

    async def _rendered(self, content_ref: str, record_id: str) -> bytes | None:
        """The DOM a rendered page's record was made from: the conversion record that refers to
        its response, logged right after it (scheduler's Crawl Recorder)."""
        if not record_id:
            return None
        try:
            following = await self._content.read_following(content_ref, PROBE_WINDOW_BYTES, PROBE_WINDOW_RECORDS)
        except StoreError as exc:
            log.info("ExplainUrl: the records after %s could not be read: %s", content_ref, exc)
            return None
        return next((block for warc, block in following if warc.get("WARC-Type") == "conversion"
                     and warc.get("WARC-Refers-To") == record_id), None)

    async def _probes(self, record: UrlRecord, offered) -> dict[str, Probe]:
        """The logged answers of the image probes for the page's images that were not kept: the
        related fetches' records follow the page's in the content log (scheduler's Crawl
        Recorder), within PROBE_WINDOW_BYTES and PROBE_WINDOW_RECORDS. An image whose answer was
        remembered from another page's probe was not fetched, nor logged, again."""
        kept = record.image.url if record.image else ""
        wanted = {c.value for c in dict(offered).get("image", ()) if not c.reason} - {kept}
        if not wanted:
            return {}
        try:
            following = await self._content.read_following(record.content_ref, PROBE_WINDOW_BYTES,
                                                           PROBE_WINDOW_RECORDS)
        except StoreError as exc:
            log.info("ExplainUrl: the records after %s could not be read: %s", record.content_ref, exc)
            return {}
        probes: dict[str, Probe] = {}
        for warc, block in following:
            url = warc.get("WARC-Target-URI", "")
            if url in wanted and url not in probes and warc.get("WARC-Type") == "response":
                status, headers, body = http_response(block)
                content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
                info = images.probe(body)
                probes[url] = Probe(status, content_type, (info.width, info.height) if info else None)
        return probes

    async def _extraction(self) -> ExtractionPool:
        """The worker pool, started at the first call (a metadata-api never asked starts none)."""
        async with self._starting:
            if self._pool is None:
                self._pool = await ExtractionPool(**self._pool_args).__aenter__()
                log.info("ExplainUrl: %r started", self._pool)
        return self._pool


def _proto(f: FieldSource) -> metadata_pb2.FieldSource:
    return metadata_pb2.FieldSource(field=f.field, source=f.source, rejected=[
        metadata_pb2.Candidate(source=c.source, value=c.value, reason=c.reason) for c in f.rejected])
