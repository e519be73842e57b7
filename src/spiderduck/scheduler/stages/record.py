"""Stage 11, the Post Processor: the record. The final hop's response becomes the UrlRecord.

Input: a CrawlTask with its hops (and the chain's `failure`, if any). Output: the Outcome
(CRAWLED; REVALIDATED when the origin answered 304 to a conditional re-fetch, the stored record
kept and only its times and validators renewed), keyed by the final URL, with the record and,
for HTML, the page's own metadata. The record's expiry and validators come from the final
response (spiderduck.core.freshness).
Innermost: never calls next. Failure: none expected; an extraction that fails or runs out of time
is an outcome (below), and anything unexpected is the chain's StageFailed.

An HTML page is extracted; a 200 of any other type is a file (issue 41): its card, from the
parts the File Reader read (CrawlTask.file: stages/file_ranges.py), gives its record, OK, with
`file_size` (src/spiderduck/scheduler/file_record.py says what, and when it is TOO_LARGE). The
card is `file_card(content_type, url, have)`: in the service ExtractionPool.file_card, within
process.extract_timeout; without a pool, in this process; one that fails or runs out of time
leaves the card of the file's name. A page
that is a wall rather than the content (a consent wall, a bot challenge, a login wall, an age
gate, "access denied": extraction.interstitial) is INTERSTITIAL, with the kind and the signals in
`error` and what the page did state kept; walls also answer 401, 403, 429, 451 or 503, so an HTML
answer of those is read for one too (without one it stays HTTP_ERROR, as any other error answer).

The publisher's robots directives (the page's robots metas and X-Robots-Tag, extraction.signals)
are the record's `robots_directives`, and are honoured here: nosnippet empties the description,
max-image-preview:none the image, and noarchive makes the outcome not `archivable` (the Crawl
Recorder then logs no final response). Every outcome says it, a failure's and a non-HTML
response's too (an X-Robots-Tag may say noarchive), and a 304's from the record it keeps.
`embed_html` is the page's first player (og:video, twitter:player) on a host of
process.embed_allow_hosts, as an iframe rebuilt from scratch (extraction.embeds; an oEmbed
document's iframe may fill it later, stages/related.py). `clean_url` is the final URL without its tracking parameters (spiderduck.extract.clean_urls; `removed_params`
names them), whatever the outcome.

Extraction is `extract(body, url, content_type)`: in the service, ExtractionPool.extract, which
runs it in a worker process within `process.extract_timeout`. A page past that budget is extracted
again from its head alone (extraction.head, within a budget of its own): OK when that gives a
title, a description or an image, marked `truncated` (no `error`: it is OK); else TIMEOUT. One whose extraction
fails is UNSUPPORTED_CONTENT; each keeps the reason in `error` and the response's own facts
(status, type, length). Without a pool (tests, tools), pages are extracted in this process.
With traces on, each extraction is an `extract` span (`url.full`, `spiderduck.body_bytes`, and
`spiderduck.head_alone` for the retry of the head), recording a timeout or a failure.

A page over fetcher.max_body_bytes was read up to the cap (`truncated`): the record is of what
was read, OK when that is a page with a title, a description or an image, else TOO_LARGE (HTML
that gave nothing, or a body of another status that is not HTML).

A page the fetcher rendered (an empty JavaScript shell, render.enabled: src/spiderduck/fetcher/render_hop.py)
is extracted from its DOM after rendering, by the same rules, and its record says
`fetch_mode: rendered`; every other page's says `static`. A render past render.timeout leaves the
record TIMEOUT with what the static HTML gave; a render that failed otherwise (the browser
crashed), or whose DOM could not be extracted, leaves the static HTML's record.
"""
from __future__ import annotations

import logging
import time
from typing import Awaitable, Callable, Sequence

from spiderduck.extract import clean_urls

from spiderduck.core import freshness

from spiderduck.core import telemetry
from spiderduck.core.fetch import HTML_TYPES, RENDER_OK, RENDER_TIMEOUT, RENDERED_TYPE, FetchResult
from spiderduck.core.freshness import Freshness
from spiderduck.core.record import HTTP_REDIRECT, RENDERED, STATIC, PageMetadata, Redirect, UrlRecord, with_page
from spiderduck.core.status import Status, status_for_http
from spiderduck.extract import embeds
from spiderduck.extract import extract_page, signals
from spiderduck.extract.head import head_of
from spiderduck.extract import files
from spiderduck.extract.files import FileBytes, FileCard
from spiderduck.extract.pool import ExtractionFailed, ExtractionTimeout
from spiderduck.extract.walls import WALL_STATUSES
from spiderduck.scheduler.file_record import FileCardJob, declared_size, is_file, media_type, with_card
from spiderduck.scheduler.stages.chain import Next
from spiderduck.scheduler.task import CrawlTask, Outcome, Resolution
from spiderduck.core.frozen import evolve


log = logging.getLogger("spiderduck.scheduler")


def usable(page: PageMetadata) -> bool:
    """The page's metadata makes a preview: a title, a description or an image."""
    return bool(page.title or page.description or page.image)


def redirects_of(task: CrawlTask) -> tuple[Redirect, ...]:
    """The record's redirects: each hop but the last, with how it moved on (a 3xx, a meta
    refresh, a Refresh header: the Redirect Follower's `hop_kinds`)."""
    kinds = task.hop_kinds
    return tuple(Redirect(h.url, h.http_status, kinds[i] if i < len(kinds) else HTTP_REDIRECT)
                 for i, h in enumerate(task.hops[:-1]))


def archivable(record: UrlRecord) -> bool:
    """Whether the response the record was made from may be logged: not when its publisher
    said noarchive (robots meta or X-Robots-Tag, the record's robots_directives)."""
    return not signals.no_archive(record.robots_directives)


Extract = Callable[[bytes, str, "str | None", int], Awaitable[PageMetadata]]


def _not_modified(task: CrawlTask, final: FetchResult) -> bool:
    """A 304 to the conditional request for the renewed record's own URL (a 304 nobody asked
    for is an HTTP_ERROR, as before)."""
    previous = task.previous
    return (final.status is Status.OK and final.http_status == 304 and task.failure is None
            and previous is not None and final.url == previous.final_url
            and bool(previous.etag or previous.last_modified))


class PostProcessor:
    """Innermost stage: never calls next."""

    def __init__(self, *, parser: str, robots_token: str, freshness: Freshness,
                 extract: Extract | None = None, embed_allow_hosts: Sequence[str] = (), clock=time.time,
                 file_card: FileCardJob | None = None):
        self._freshness = freshness
        self._file_card = file_card or self._file_card_here
        self._embed_hosts = tuple(embed_allow_hosts)
        self._robots_token = robots_token
        self._parser = parser
        self._extract = extract or self._extract_here
        self.extract = self._extract        # what reads a page's card: also the Honesty Checker's
        self._clock = clock

    async def _extract_here(self, body: bytes, url: str, content_type: str | None,
                            http_status: int = 200) -> PageMetadata:
        return extract_page(body, url, content_type, parser=self._parser, robots_token=self._robots_token,
                            http_status=http_status)

    async def _file_card_here(self, content_type: str, url: str, have: FileBytes) -> FileCard:
        return files.file_card(content_type, url, have)

    async def __call__(self, task: CrawlTask, next: Next[CrawlTask, Outcome] | None = None) -> Outcome:
        final = task.hops[-1]
        if _not_modified(task, final):
            return self._revalidated(task, final)
        clean_url, removed_params = clean_urls.clean(final.url)
        record = UrlRecord(
            url=task.submitted, status=Status.OK, canonical_url=final.url, final_url=final.url,
            clean_url=clean_url, removed_params=removed_params,
            http_status=final.http_status,
            redirects=redirects_of(task),
            content_type=media_type(final) if final.http_status else "",
            fetched_at=final.fetched_at or self._clock())
        record, page = await self._classify(task, final, record)
        record = self._expiry(final, self._publisher_signals(final, record, page))
        return Outcome(task, record, Resolution.CRAWLED, key=final.url, fetches=task.hops, page=page,
                       archivable=archivable(record))

    def _revalidated(self, task: CrawlTask, final: FetchResult) -> Outcome:
        """The origin answered 304 to a conditional re-fetch: the stored record stands (its
        fields, its http_status and content_ref, which name the full response), fetched now,
        fresh as the 304 says (RFC 9111 §4.3.4), with any validators the 304 sent anew."""
        previous = task.previous
        fetched_at = final.fetched_at or self._clock()
        record = evolve(
            previous, url=task.submitted,
            redirects=redirects_of(task),
            fetched_at=fetched_at,
            expires_at=self._freshness.expires_at(final, previous.status, previous.http_status, fetched_at),
            etag=freshness.etag(final) or previous.etag,
            last_modified=freshness.last_modified(final) or previous.last_modified)
        return Outcome(task, record, Resolution.REVALIDATED, key=final.url, fetches=task.hops,
                       archivable=archivable(record))

    def _expiry(self, final: FetchResult, record: UrlRecord) -> UrlRecord:
        """When the record stops being fresh, and the validators a re-fetch of a 200 sends."""
        expires_at = self._freshness.expires_at(final, record.status, final.http_status, record.fetched_at)
        if final.http_status != 200:
            return evolve(record, expires_at=expires_at)
        return evolve(record, expires_at=expires_at, etag=freshness.etag(final),
                                   last_modified=freshness.last_modified(final))

    def _publisher_signals(self, final: FetchResult, record: UrlRecord, page: PageMetadata | None) -> UrlRecord:
        """The record's robots directives (page and header), and the fields they withhold."""
        headers = [value for key, value in final.headers if key.lower() == "x-robots-tag"]
        directives = signals.merged(page.robots_directives if page else (),
                                    signals.header_directives(headers, self._robots_token))
        if not directives:
            return record
        return evolve(record, robots_directives=directives, **signals.withheld(directives))

    async def _classify(self, task: CrawlTask, final: FetchResult,
                        record: UrlRecord) -> tuple[UrlRecord, PageMetadata | None]:
        if is_file(task):
            return await self._file(task, final, record), None
        record, page = await self._read(task, final, record)
        if not final.truncated or task.failure is not None or final.status is not Status.OK:
            return record, page
        # Over the cap: the fetcher read the first fetcher.max_body_bytes, and the record is of
        # those (`truncated`). A page whose first bytes give a preview is an OK page; a body they
        # give nothing usable from (no markup) is TOO_LARGE.
        record = evolve(record, truncated=True)
        if record.status is Status.UNSUPPORTED_CONTENT or (
                record.status is Status.OK and not (page is not None and usable(page))):
            record = evolve(record, status=Status.TOO_LARGE, error=(
                f"the body is larger than fetcher.max_body_bytes; the first {len(final.body)} bytes were read"))
        return record, page

    async def _read(self, task: CrawlTask, final: FetchResult,
                    record: UrlRecord) -> tuple[UrlRecord, PageMetadata | None]:
        """The record as the response makes it, and the page's metadata when it was extracted."""
        if task.failure is not None:
            status, error = task.failure
            return evolve(record, status=status, error=error), None
        if final.status is not Status.OK:
            return evolve(record, status=final.status, error=final.error), None
        status = status_for_http(final.http_status)
        if status is not Status.OK:
            if final.http_status in WALL_STATUSES and record.content_type in HTML_TYPES:
                walled, page = await self._page(final, record)
                if walled.status is Status.INTERSTITIAL:
                    return walled, page
            return evolve(record, status=status, error=f"HTTP {final.http_status}"), None
        return await self._page(final, record)

    async def _file(self, task: CrawlTask, final: FetchResult, record: UrlRecord) -> UrlRecord:
        """A file's record from its card (scheduler/file_record.py), the card made from the parts
        the File Reader read (its head alone, without that stage)."""
        have = task.file or FileBytes(declared_size(final), ((0, final.body),))
        try:
            card = await self._file_card(record.content_type, final.url, have)
        except (ExtractionTimeout, ExtractionFailed) as exc:
            log.info("%s: the file's card failed (%s); its name is its title", final.url, exc)
            card = files.file_card("", final.url, FileBytes(have.total))
        return with_card(record, final, have, card)

    async def _page(self, final: FetchResult, record: UrlRecord) -> tuple[UrlRecord, PageMetadata | None]:
        if final.render_outcome == RENDER_OK and final.rendered:
            try:
                page = await self._extracted(final, final.rendered, content_type=RENDERED_TYPE)
            except (ExtractionTimeout, ExtractionFailed) as exc:
                log.info("%s: the rendered page's extraction failed (%s); the static HTML is read", final.url, exc)
            else:
                return self._with_page(final, record, page, RENDERED), page
        record, page = await self._static_page(final, record)
        if final.render_outcome == RENDER_TIMEOUT and record.status is Status.OK:
            record = evolve(record, status=Status.TIMEOUT, error=(
                "rendering the page took longer than render.timeout: the record holds what its static HTML gave"))
        return record, page

    def _with_page(self, final: FetchResult, record: UrlRecord, page: PageMetadata, mode: str,
                   head_alone: bool = False) -> UrlRecord:
        embed = embeds.first_player(page.players, self._embed_hosts, title=page.title)
        status, error = (Status.INTERSTITIAL, page.interstitial) if page.interstitial else (Status.OK, record.error)
        return evolve(record, **with_page(page), content_length=len(final.body), status=status,
                                   error=error, truncated=record.truncated or head_alone, fetch_mode=mode,
                                   **({"embed_html": embed} if embed else {}))

    async def _static_page(self, final: FetchResult, record: UrlRecord) -> tuple[UrlRecord, PageMetadata | None]:
        length = len(final.body)
        head_alone = False
        try:
            page = await self._extracted(final, final.body)
        except ExtractionTimeout as exc:
            page = await self._head_alone(final)
            if page is None:
                return evolve(record, status=Status.TIMEOUT, error=str(exc), content_length=length), None
            head_alone = True       # OK and `truncated`: the metadata is of the page's head alone
        except ExtractionFailed as exc:
            return evolve(record, status=Status.UNSUPPORTED_CONTENT, error=str(exc),
                                       content_length=length), None
        return self._with_page(final, record, page, STATIC, head_alone), page

    async def _extracted(self, final: FetchResult, body: bytes, head_alone: bool = False,
                         content_type: str | None = None) -> PageMetadata:
        """The page's metadata from `body` (the final hop's, its head alone, or its DOM after
        rendering, typed `content_type`), in an `extract` span with traces on."""
        extraction = self._extract(body, final.url, content_type or final.header("content-type"), final.http_status)
        if not telemetry.enabled():
            return await extraction
        attributes = {"url.full": final.url, "spiderduck.body_bytes": len(body), "spiderduck.head_alone": head_alone}
        with telemetry.span("extract", attributes=attributes):      # the extraction runs in it
            return await extraction

    async def _head_alone(self, final: FetchResult) -> PageMetadata | None:
        """The metadata of the page's head alone (extraction.head), when the whole page ran out of
        budget: within a budget of its own, and only if it makes a preview."""
        head = head_of(final.body)
        if head is None:
            return None
        try:
            page = await self._extracted(final, head, head_alone=True)
        except (ExtractionTimeout, ExtractionFailed):
            return None
        return page if usable(page) else None
