"""Stage 10, the Related Fetcher: what a page's record needs from other URLs.

Input: a CrawlTask with its hops. Output: the Outcome of the Post Processor, its record
completed, and `related` (what these fetches requested, for the content log). Failure: none;
nothing it does can fail the page.

After the Post Processor has made a page's record, two more documents may be read, each through
the fetcher owning its domain (robots.txt, rate and the address guard apply, as to every fetch):

- the page's oEmbed document, when the page lacks a title, author, site name or image, fills
  those it lacks (the document the page links, `<link type="application/json+oembed">`, or else
  the one a provider of the registry names for its final URL: extract.oembed_registry,
  process.oembed_providers), but never an image the publisher withheld
  (max-image-preview:none: extraction.signals); its iframe (type video or rich) is the
  record's embed_html when the page's own players gave none and its host is in
  process.embed_allow_hosts (extraction.embeds). It is also read for that alone, when the
  document is on the registrable domain of an allowed host;
- the page's images (`PageMetadata.image_candidates`, best first; or oEmbed's thumbnail) are
  probed in order, each from its first `process.image_probe_bytes`, and the first that loads
  (a 2xx whose bytes read as an image, or typed image/*) and is at least
  `process.min_image_size` pixels in width and height, when its size is known (read, or else
  stated by the page), is the record's image, with the width, height and type it lacked. One
  known not to load (a 404, a page that is no image, the address guard's refusal) or smaller
  (an icon, a tracking pixel) gives way to the next. One that could not be probed (no answer in
  time, a busy domain, a server error or a 429, robots.txt forbidding us to look, where a
  reader's browser still loads it) stands, unverified, as the page chose it: a later candidate
  is never promoted over it. The record has no image when every one failed, as a preview shows
  no broken image. With related fetches off, or no answer before the deadline, the image is the
  first not yet known to fail;
- the site's `/favicon.ico`, when the page names no icon, is the record's favicon when it
  answers 2xx with an image;
- the page's web app manifest (`<link rel="manifest">`), when the page names no logo, gives the
  record's logo: its largest icon (extraction.manifest), read at most process.oembed_max_bytes.

A page on the denylist (forgotten while it was crawled) gets no related fetches, and a related
URL on it is never fetched: it is taken as not answering (spiderduck.scheduler.forgetting).

All of one page's related fetches share `process.related_timeout` (the images and the favicon
are probed side by side); whatever they have not found by then is left out (the image is then
the best not yet known to fail), and nothing they do can fail the page. Their responses go to
the content log after the page's (`Outcome.related`), a probe's marked `WARC-Truncated: length`.
Answers are remembered per URL (`process.related_cache_size`), so a site's logo and its
favicon are probed once, not once per article.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import OrderedDict
from typing import Any, Awaitable, Callable, NamedTuple, Sequence

from spiderduck.core import redirects

from spiderduck.core import urls
from spiderduck.core.errors import SpiderDuckError
from spiderduck.core.fetch import FetchResult, declared_type
from spiderduck.core.metrics import Recorder
from spiderduck.core.record import Image, PageMetadata, UrlRecord, with_source
from spiderduck.core.single_flight import SingleFlight
from spiderduck.core.status import TRANSIENT, Status
from spiderduck.extract import embeds
from spiderduck.extract import cards, images, manifest, oembed, signals
from spiderduck.scheduler.forgetting import Forgetting
from spiderduck.scheduler.stages.chain import Next
from spiderduck.scheduler.task import CrawlTask, FetchHop, Outcome
from spiderduck.core.frozen import evolve

log = logging.getLogger("spiderduck.scheduler")


class _Answers:
    """Answers per URL: one read at a time per URL (pages sharing a logo wait for the same
    read, spiderduck.core.single_flight: a page whose time runs out leaves the read to the others), and
    a bounded LRU of the lasting answers. A read that fails fails the page that started it;
    the pages waiting for it go without."""

    def __init__(self, size: int):
        self._size = size
        self._done: OrderedDict[str, Any] = OrderedDict()
        self._reading: SingleFlight[Any] = SingleFlight()

    async def once(self, url: str, read: Callable[[], Awaitable[tuple[Any, bool]]]) -> Any:
        if url in self._done:
            self._done.move_to_end(url)
            return self._done[url]
        joined = url in self._reading
        try:
            return await self._reading.run(url, lambda: self._read(url, read))
        except Exception:
            if not joined:
                raise
            return None                 # a read that failed: those waiting go without

    async def _read(self, url: str, read: Callable[[], Awaitable[tuple[Any, bool]]]) -> Any:
        answer, lasting = await read()
        if lasting and self._size > 0:
            self._done[url] = answer
            while len(self._done) > self._size:
                self._done.popitem(last=False)
        return answer


class _Probe(NamedTuple):
    """What an image's first bytes said (remembered per URL)."""
    loads: bool           # a 2xx that is an image: its bytes read as one, or it is typed image/*
    width: int = 0        # 0: not read (an SVG, a format Pillow does not know)
    height: int = 0
    content_type: str = ""


_FAILED = _Probe(False)


@dataclasses.dataclass
class _Found:
    """What the related fetches of one page have found so far: the record as it grows (each
    task sets its own field anew, never from a copy read before an await) and every fetch made,
    to be logged."""
    record: UrlRecord
    fetched: list[FetchResult] = dataclasses.field(default_factory=list)


class RelatedFetcher:
    def __init__(self, fetch: FetchHop, *, enabled: bool, max_redirects: int,
                 image_probe_bytes: int, oembed_max_bytes: int, timeout: float, cache_size: int,
                 metrics: Recorder, min_image_size: int = 50, embed_allow_hosts: Sequence[str] = (),
                 forgetting: Forgetting | None = None,
                 oembed_endpoint: Callable[[str], str | None] = lambda url: None):
        self._fetch = fetch
        self._oembed_endpoint = oembed_endpoint
        self._forgotten = forgetting or Forgetting()
        self._embed_hosts = tuple(embed_allow_hosts)
        self._min_size = min_image_size
        self._enabled = enabled
        self._max_redirects = max_redirects
        self._image_bytes = image_probe_bytes
        self._oembed_bytes = oembed_max_bytes
        self._timeout = timeout
        self._images = _Answers(cache_size)
        self._oembeds = _Answers(cache_size)
        self._manifests = _Answers(cache_size)
        self._metrics = metrics

    async def __call__(self, task: CrawlTask, next: Next[CrawlTask, Outcome]) -> Outcome:
        outcome = await next(task)
        if not self._enabled or outcome.page is None or not outcome.record.ok or self._forgotten.of(outcome):
            return outcome
        # Kept as it grows: a timeout keeps what was found, and what was fetched is logged.
        found = _Found(outcome.record)
        try:
            async with asyncio.timeout(self._timeout) as budget:
                await self._complete(found, outcome.page, budget.when())
        except TimeoutError:
            self._metrics.count("related_timeouts")
            log.info("related fetches of %s: not done within %gs", outcome.record.final_url, self._timeout)
        except Exception:   # noqa: BLE001 -- the page's record stands whatever happens here
            log.warning("related fetches of %s failed", outcome.record.final_url, exc_info=True)
        return evolve(outcome, record=found.record, related=tuple(found.fetched))

    async def _complete(self, found: _Found, page: PageMetadata, deadline: float) -> None:
        """The image, the favicon and the logo, side by side. Each sets its field of found.record anew
        (never from a copy read before an await), so neither undoes the other."""
        async with asyncio.TaskGroup() as both:
            both.create_task(self._complete_image(found, page, deadline))
            if not found.record.favicon:
                both.create_task(self._site_favicon(found, deadline))
            if found.record.logo is None and page.manifest_url:
                both.create_task(self._manifest_logo(found, page.manifest_url, deadline))

    async def _complete_image(self, found: _Found, page: PageMetadata, deadline: float) -> None:
        record, fetched = found.record, found.fetched
        oembed_url = page.oembed_url or self._oembed_endpoint(record.final_url or record.url) or ""
        if oembed_url and (not (record.title and record.author and record.site_name and record.image)
                           or not record.embed_html and embeds.may_embed(oembed_url, self._embed_hosts)):
            got = await self._oembed(oembed_url, fetched, deadline)
            found.record = _with_oembed(found.record, got)
        first = found.record.image
        if first is None:             # none, or withheld (max-image-preview:none): no card style from it
            found.record = _with_card_style(found.record)
            return
        candidates = [first, *(c for c in page.image_candidates if c.url != first.url)]
        sources = dict(zip((c.url for c in page.image_candidates), page.image_sources))
        sources[first.url] = next((p.source for p in found.record.provenance if p.field == "image"), "")
        await self._choose_image(found, candidates, deadline, sources)

    async def _choose_image(self, found: _Found, candidates: list[Image], deadline: float,
                            sources: dict[str, str] | None = None) -> None:
        """The first candidate that loads and is large enough, as the record's image (see the
        module's doc); the record's image is kept, all along, the best not known to fail.
        `sources`: where each candidate (by URL) was read, for the record's provenance."""
        failed: set[str] = set()

        def choose(image: Image | None) -> None:
            found.record = _with_card_style(evolve(found.record, image=image, provenance=with_source(
                found.record.provenance, "image", image and (sources or {}).get(image.url) or "")))

        for candidate in candidates:
            if not self._too_small(candidate.width, candidate.height):     # stated: nothing to fetch
                probe = await self._image(candidate.url, found.fetched, deadline)
                if probe is None:   # not known either way: it stands, unverified, as the page chose
                    choose(candidate)
                    break
                if probe.loads and not self._too_small(probe.width or candidate.width,
                                                       probe.height or candidate.height):
                    self._metrics.count("related_images", choice="first" if candidate is candidates[0]
                                        else "fallback")
                    choose(Image(candidate.url, candidate.width or probe.width, candidate.height or probe.height,
                                 candidate.content_type or probe.content_type))
                    return
            failed.add(candidate.url)
            choose(next((c for c in candidates if c.url not in failed), None))
        self._metrics.count("related_images", choice="none" if found.record.image is None else "unverified")

    def _too_small(self, width: int, height: int) -> bool:
        """Whether a size (0: unknown) is under process.min_image_size in either dimension."""
        return 0 < width < self._min_size or 0 < height < self._min_size

    async def _site_favicon(self, found: _Found, deadline: float) -> None:
        """The site's /favicon.ico as the record's favicon, when it answers with an image."""
        try:
            url = urls.origin_of(found.record.final_url) + "/favicon.ico"
        except (urls.InvalidUrl, ValueError):
            return
        probe = await self._image(url, found.fetched, deadline, kind="favicon")
        if probe is not None and probe.loads:
            found.record = evolve(found.record, favicon=url, provenance=with_source(
                found.record.provenance, "favicon", "/favicon.ico"))

    async def _manifest_logo(self, found: _Found, url: str, deadline: float) -> None:
        """The largest icon of the page's web app manifest as the record's logo."""
        async def read() -> tuple[Image | None, bool]:
            result = await self._get(url, "manifest", self._oembed_bytes, found.fetched, deadline)
            if result is None:
                return None, False
            ok = _is_ok(result) and not result.truncated
            return (manifest.logo(result.body, result.url) if ok else None), _lasting(result)
        logo = await self._manifests.once(url, read)
        self._count("manifest", logo is not None)
        if logo is not None:
            found.record = evolve(found.record, logo=logo, provenance=with_source(
                found.record.provenance, "logo", manifest.SOURCE))

    async def _oembed(self, url: str, fetched: list[FetchResult], deadline: float) -> oembed.OEmbed | None:
        async def read() -> tuple[oembed.OEmbed | None, bool]:
            result = await self._get(url, "oembed", self._oembed_bytes, fetched, deadline)
            if result is None:
                return None, False
            ok = _is_ok(result) and not result.truncated
            parsed = oembed.parse(result.body, result.url) if ok else None
            if parsed is not None:      # remembered as the small, safe iframe, not the document's html
                parsed = parsed._replace(html=embeds.from_oembed_html(parsed.html, self._embed_hosts))
            return parsed, _lasting(result)
        answer = await self._oembeds.once(url, read)
        self._count("oembed", answer is not None)
        return answer

    async def _image(self, url: str, fetched: list[FetchResult], deadline: float,
                     kind: str = "image") -> _Probe | None:
        """What the image at `url` is; None when that could not be learnt (no answer, a server
        error or a 429: not remembered, a later page asks again)."""
        async def read() -> tuple[_Probe | None, bool]:
            result = await self._get(url, "image", self._image_bytes, fetched, deadline)
            if result is None or not _lasting(result):
                return None, False
            if result.status is Status.ROBOTS_DISALLOWED:
                return None, True             # we may not look; a reader's browser loads it
            if not _is_ok(result):
                return _FAILED, True          # a 404, the address guard's refusal, ...
            typed = declared_type(result.header("content-type"))
            typed = typed if typed.startswith("image/") else ""
            info = images.probe(result.body)
            if info is None:                  # an SVG, or bytes that are no image
                return _Probe(bool(typed), 0, 0, typed), True
            return _Probe(True, info.width, info.height, info.content_type or typed), True
        probe = await self._images.once(url, read)
        self._count(kind, probe is not None and probe.loads)
        return probe

    def _count(self, kind: str, found: bool) -> None:
        """spiderduck_scheduler_related_total{kind, outcome}: found (an oEmbed document; an image
        that loads), or nothing (cached or not). Which image a page got is counted apart,
        spiderduck_scheduler_related_images_total{choice}: its first candidate, a fallback, none
        (every candidate failed), or unverified (none could be probed, the first kept)."""
        self._metrics.count("related", kind=kind, outcome="found" if found else "nothing")

    async def _get(self, url: str, purpose: str, max_bytes: int, fetched: list[FetchResult],
                   deadline: float) -> FetchResult | None:
        """The URL's final answer, redirects followed: an HTTP answer, or a refusal (robots.txt,
        the address guard); None when no origin answered (no fetcher, a busy domain, a timeout,
        a connection or DNS error), which a later try may change, so nothing is remembered.
        Every response is added to `fetched`, for the content log. A domain that cannot serve
        the request before `deadline` (busy, backing off, paused) says so at once (DomainBusy)."""
        loop = asyncio.get_running_loop()

        async def hop(target: str) -> FetchResult:
            if self._forgotten(target):     # never fetched, and not remembered
                return FetchResult(target, Status.FORGOTTEN)
            result = await self._fetch(target, purpose=purpose, max_body_bytes=max_bytes,
                                       timeout=max(deadline - loop.time(), 0.001), wait_if_busy=False)
            fetched.append(result)
            return result
        try:
            chain = await redirects.follow(hop, url, max_redirects=self._max_redirects)
        except urls.InvalidUrl:
            return FetchResult(url, Status.INVALID_URL)
        except SpiderDuckError as exc:
            log.info("related %s fetch of %s: %s", purpose, url, exc)
            return None
        last = chain.hops[-1]
        if last.status in TRANSIENT or last.status is Status.FORGOTTEN:
            return None
        return last if chain.failure is None else FetchResult(last.url, chain.failure[0])


def _lasting(result: FetchResult) -> bool:
    """Whether an answer is worth remembering: not a server error or a 429, which may pass."""
    return not (result.http_status >= 500 or result.http_status == 429)


def _is_ok(result: FetchResult) -> bool:
    return result.status is Status.OK and 200 <= result.http_status < 300


def _with_oembed(record: UrlRecord, found: oembed.OEmbed | None) -> UrlRecord:
    """The record with what the oEmbed document says in the fields the page left empty."""
    if found is None:
        return record
    fill = {"title": found.title, "author": found.author, "site_name": found.site_name,
            "image": None if signals.no_image(record.robots_directives) else found.thumbnail,
            "embed_html": found.html}
    fill = {k: v for k, v in fill.items() if v and not getattr(record, k)}
    provenance = record.provenance
    for name in fill.keys() & _OEMBED_SOURCES.keys():
        provenance = with_source(provenance, name, _OEMBED_SOURCES[name])
    return evolve(record, **fill, provenance=provenance)


# The oEmbed document's field each record field is filled from (provenance: oembed:<field>).
_OEMBED_SOURCES = {"title": "oembed:title", "author": "oembed:author_name", "site_name": "oembed:provider_name",
                   "image": "oembed:thumbnail_url"}


def _with_card_style(record: UrlRecord) -> UrlRecord:
    """The record with its card style derived again from its image (now that a probe may know the
    image's width, or another image was chosen), unless the page asked for one (twitter:card)."""
    if any(p.field == "card_style" and p.source != "derived" for p in record.provenance):
        return record
    style = cards.card_style_of(record.image)
    if style == record.card_style:
        return record
    return evolve(record, card_style=style,
                  provenance=with_source(record.provenance, "card_style", "derived" if style else ""))
