"""Stage 9, the File Reader: a file's bytes, as few as its format allows (issue 41).

Input: a CrawlTask with its hops. Output: the Outcome of the stages inside, given the task with
`file` (spiderduck.extract.files.FileBytes: the size the file declares and the parts read), and
with the range requests' responses added to the outcome's `related`, for the content log (the
Crawl Recorder logs them after the page's own response, each a WARC response record of its 206).
Failure: none; a range that cannot be had leaves the card of the bytes read so far.

When the chain ended in a 200 whose type is not HTML (scheduler/file_record.py's is_file), the
fetcher read its first fetcher.file_head_bytes (the head, offset 0). When there was more,
spiderduck.extract.files.next_range says which range would give the fields the head lacks (in an
extraction worker, ExtractionPool.next_range, within process.extract_timeout: reading a hostile
file's cross-references is no work for the event loop; in this process without a pool), and
that range is fetched (purpose "file", `range` "bytes=START-END") through the fetcher owning the
domain, as any hop: its politeness turn, robots.txt and the address guard. At most
fetcher.file_max_requests requests in all, the first GET included; the reading stops once
next_range says None. A 206 whose Content-Range starts where it was asked adds its part (its
total, when the head declared none, is the file's size); a 200 (an origin that ignores Range)
is read up to what is left of fetcher.max_body_bytes for the whole file (so that all a file's
requests together read no more than the cap, but for a range longer than that) and no further:
its body replaces the parts, from offset 0, when it is of the same type and no shorter than them,
and the reading stops. A 206 must be the part asked for, not past its end, and not encoded. Anything else (a 416, a malformed or misplaced Content-Range, an error,
no fetcher answering) stops the reading and leaves the parts as they are. A URL on the denylist
(forgotten while it was read) is never fetched again (spiderduck.scheduler.forgetting).
"""
from __future__ import annotations

import logging

from spiderduck.core import byte_ranges
from spiderduck.core.errors import SpiderDuckError
from spiderduck.core.fetch import FetchResult
from spiderduck.core.frozen import evolve
from spiderduck.core.status import Status
from spiderduck.extract import files
from spiderduck.extract.files import FileBytes
from spiderduck.scheduler.file_record import FileRangeJob, declared_size, encoded, is_file, media_type
from spiderduck.scheduler.forgetting import Forgetting
from spiderduck.scheduler.stages.chain import Next
from spiderduck.scheduler.task import CrawlTask, FetchHop, Outcome

log = logging.getLogger("spiderduck.scheduler")


class FileReader:
    """`max_requests`: fetcher.file_max_requests; `max_range_bytes`: fetcher.max_body_bytes,
    the longest range asked for (a fetcher refuses a longer one)."""

    def __init__(self, fetch_hop: FetchHop, *, max_requests: int, max_range_bytes: int,
                 forgetting: Forgetting | None = None, next_range: FileRangeJob | None = None):
        self._fetch_hop = fetch_hop
        self._next_range = next_range or _here
        self._max_requests = max_requests
        self._max_range = max_range_bytes
        self._forgotten = forgetting or Forgetting()

    async def __call__(self, task: CrawlTask, next: Next[CrawlTask, Outcome]) -> Outcome:
        if not is_file(task):
            return await next(task)
        final = task.hops[-1]
        have = FileBytes(declared_size(final), ((0, final.body),))
        fetched: list[FetchResult] = []
        if final.truncated:         # read whole: nothing more to ask for
            have = await self._read(task, final, have, fetched)
        outcome = await next(evolve(task, file=have))
        return evolve(outcome, related=(*outcome.related, *fetched)) if fetched else outcome

    async def _read(self, task: CrawlTask, final: FetchResult, have: FileBytes,
                    fetched: list[FetchResult]) -> FileBytes:
        kind = media_type(final)
        for _ in range(self._max_requests - 1):
            wanted = await self._next(kind, final.url, have)
            if wanted is None or self._forgotten(task.url, final.url):
                break
            try:
                # What is left of fetcher.max_body_bytes for the whole file, or the range if
                # longer: an origin ignoring Range answers up to that, a 206 past its range no more.
                left = self._max_range - sum(len(data) for _, data in have.parts)
                answer = await self._fetch_hop(final.url, purpose="file", range=byte_ranges.range_header(*wanted),
                                               max_body_bytes=max(wanted[1] - wanted[0] + 1, left))
            except (SpiderDuckError, ValueError) as exc:
                log.info("file %s: range %d-%d not read (%s)", final.url, *wanted, exc)
                break
            fetched.append(answer)
            have, more = _added(have, answer, wanted, kind)
            if not more:
                break
        return have

    async def _next(self, content_type: str, url: str, have: FileBytes) -> tuple[int, int] | None:
        """next_range's answer, when it is a range a fetcher takes: within the declared size and
        at most max_range_bytes long (a longer one is cut to that); None otherwise."""
        try:
            wanted = await self._next_range(content_type, url, have)
        except SpiderDuckError as exc:      # the worker ran out of time or failed: no more ranges
            log.info("file %s: next_range gave nothing (%s)", url, exc)
            return None
        except Exception:   # noqa: BLE001 -- a parser's bug costs the file its ranges, not its card
            log.warning("file %s: next_range failed", url, exc_info=True)
            return None
        if wanted is None:
            return None
        start, end = wanted
        if not (isinstance(start, int) and isinstance(end, int)):
            return None
        end = min(end, start + self._max_range - 1, *((have.total - 1,) if have.total else ()))
        if not 0 <= start <= end:
            return None
        return (start, end) if end < 10 ** byte_ranges.MAX_DIGITS else None


async def _here(content_type: str, url: str, have: FileBytes) -> tuple[int, int] | None:
    """next_range in this process (tests, tools: no extraction pool)."""
    return files.next_range(content_type, url, have)


def _added(have: FileBytes, answer: FetchResult, wanted: tuple[int, int], kind: str) -> tuple[FileBytes, bool]:
    """The parts with what `answer` (to the range `wanted`) gave, and whether to read on. A part
    must be the one asked for: from its start, ending within it, not encoded (an encoded 206's
    bytes are not the file's at those offsets). A 200 (Range ignored) is the file from its start,
    read up to the cap: it replaces the head only when it is the same type and no shorter (a
    CDN's error page answering Range with a 200 is not the file)."""
    if answer.status is not Status.OK or encoded(answer):
        return have, False
    if answer.http_status == 200:           # Range ignored: the body from its start, up to the cap
        head = have.parts[0][1] if have.parts else b""
        if media_type(answer) != kind or len(answer.body) < len(head):
            return have, False
        return FileBytes(have.total or declared_size(answer), ((0, answer.body),)), False
    start, end = wanted
    part = byte_ranges.content_range(answer.header("content-range")) if answer.http_status == 206 else None
    if (part is None or part[0] != start or part[1] > end or not answer.body
            or len(answer.body) > part[1] - part[0] + 1):
        return have, False                  # a 416, an error, a part that is not the one asked for
    return FileBytes(have.total or part[2], (*have.parts, (start, answer.body))), True
