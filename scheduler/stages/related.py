"""Stage 7, the Related Fetcher: what a page's record needs from other URLs.

Input: a CrawlTask with its hops. Output: the Outcome of the Post Processor, its record
completed, and `related` (what these fetches requested, for the content log). Failure: none;
nothing it does can fail the page.

After the Post Processor has made a page's record, two more documents may be read, each through
the fetcher owning its domain (robots.txt, rate and the address guard apply, as to every fetch):

- the page's oEmbed document, when the page lacks a title, author, site name or image, fills
  those it lacks (`<link type="application/json+oembed">`);
- the representative image's first `process.image_probe_bytes`, when its width, height or type
  is unknown, give them.

All of one page's related fetches share `process.related_timeout`; whatever they have not found
by then is left out, and nothing they do can fail the page. Their responses go to the content
log after the page's (`Outcome.related`), a probe's marked `WARC-Truncated: length`. Answers are remembered per URL
(`process.related_cache_size`), so a site's logo is probed once, not once per article.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import OrderedDict
from typing import Any, Awaitable, Callable

from common import redirects, urls
from common.errors import SpiderDuckError
from common.fetch import FetchResult
from common.metrics import Recorder
from common.record import Image, UrlRecord
from common.single_flight import SingleFlight
from common.status import TRANSIENT, Status
from scheduler.extraction import images, oembed
from scheduler.stages.redirect_chain import FetchHop
from scheduler.stages.chain import Next
from scheduler.task import CrawlTask, Outcome

log = logging.getLogger("spiderduck.scheduler")


class _Answers:
    """Answers per URL: one read at a time per URL (pages sharing a logo wait for the same
    read, common.single_flight: a page whose time runs out leaves the read to the others), and
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


class RelatedFetcher:
    def __init__(self, fetch: FetchHop, *, enabled: bool, max_redirects: int,
                 image_probe_bytes: int, oembed_max_bytes: int, timeout: float, cache_size: int,
                 metrics: Recorder):
        self._fetch = fetch
        self._enabled = enabled
        self._max_redirects = max_redirects
        self._image_bytes = image_probe_bytes
        self._oembed_bytes = oembed_max_bytes
        self._timeout = timeout
        self._images = _Answers(cache_size)
        self._oembeds = _Answers(cache_size)
        self._metrics = metrics

    async def __call__(self, task: CrawlTask, next: Next) -> Outcome:
        outcome = await next(task)
        if not self._enabled or outcome.page is None or not outcome.record.ok:
            return outcome
        # Kept as it grows: a timeout keeps what was found, and what was fetched is logged.
        found: dict[str, Any] = {"record": outcome.record, "fetched": []}
        try:
            async with asyncio.timeout(self._timeout) as budget:
                await self._complete(found, outcome.page.oembed_url, budget.when())
        except TimeoutError:
            self._metrics.count("related_timeouts")
            log.info("related fetches of %s: not done within %gs", outcome.record.final_url, self._timeout)
        except Exception:   # noqa: BLE001 -- the page's record stands whatever happens here
            log.warning("related fetches of %s failed", outcome.record.final_url, exc_info=True)
        return dataclasses.replace(outcome, record=found["record"], related=tuple(found["fetched"]))

    async def _complete(self, found: dict[str, Any], oembed_url: str, deadline: float) -> None:
        record, fetched = found["record"], found["fetched"]
        if oembed_url and not (record.title and record.author and record.site_name and record.image):
            found["record"] = record = _with_oembed(record, await self._oembed(oembed_url, fetched, deadline))
        image = record.image
        if image is not None and not (image.width and image.height and image.content_type):
            info = await self._image(image.url, fetched, deadline)
            if info is not None:
                found["record"] = dataclasses.replace(record, image=Image(
                    image.url, image.width or info.width, image.height or info.height,
                    image.content_type or info.content_type))

    async def _oembed(self, url: str, fetched: list[FetchResult], deadline: float) -> oembed.OEmbed | None:
        async def read() -> tuple[oembed.OEmbed | None, bool]:
            result = await self._get(url, "oembed", self._oembed_bytes, fetched, deadline)
            if result is None:
                return None, False
            ok = _is_ok(result) and not result.truncated
            return (oembed.parse(result.body, result.url) if ok else None), _lasting(result)
        return self._counted("oembed", await self._oembeds.once(url, read))

    async def _image(self, url: str, fetched: list[FetchResult], deadline: float) -> images.ImageInfo | None:
        async def read() -> tuple[images.ImageInfo | None, bool]:
            result = await self._get(url, "image", self._image_bytes, fetched, deadline)
            if result is None:
                return None, False
            info = images.probe(result.body) if _is_ok(result) else None
            if info is not None and not info.content_type:
                kind = (result.header("content-type") or "").split(";", 1)[0].strip().lower()
                info = info._replace(content_type=kind if kind.startswith("image/") else "")
            return info, _lasting(result)
        return self._counted("image", await self._images.once(url, read))

    def _counted(self, kind: str, answer: Any) -> Any:
        """spiderduck_scheduler_related_total{kind, outcome}: found, or nothing (cached or not)."""
        self._metrics.count("related", kind=kind, outcome="nothing" if answer is None else "found")
        return answer

    async def _get(self, url: str, purpose: str, max_bytes: int, fetched: list[FetchResult],
                   deadline: float) -> FetchResult | None:
        """The URL's final answer, redirects followed: an HTTP answer, or a refusal (robots.txt,
        the address guard); None when no origin answered (no fetcher, a busy domain, a timeout,
        a connection or DNS error), which a later try may change, so nothing is remembered.
        Every response is added to `fetched`, for the content log. A domain that cannot serve
        the request before `deadline` (busy, backing off, paused) says so at once (DomainBusy)."""
        loop = asyncio.get_running_loop()

        async def hop(target: str) -> FetchResult:
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
        if last.status in TRANSIENT:
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
            "image": found.thumbnail}
    return dataclasses.replace(record, **{k: v for k, v in fill.items() if v and not getattr(record, k)})
