"""Stage 4, the Post Processor: the final hop's response becomes the record."""
from __future__ import annotations

import dataclasses
import time

from common.fetch import FetchResult
from common.record import Redirect, UrlRecord, with_page
from common.status import Status, status_for_http
from scheduler.extraction import extract_page
from scheduler.stage import Next
from scheduler.task import CrawlTask, Outcome, Resolution

HTML_TYPES = ("text/html", "application/xhtml+xml")


def media_type(result: FetchResult) -> str:
    value = result.header("content-type") or ""
    kind = value.split(";", 1)[0].strip().lower()
    if not kind:
        head = result.body[:512].lstrip().lower()
        if head.startswith((b"<!doctype html", b"<html")) or b"<head" in head:
            return "text/html"
    return kind


class PostProcessor:
    """Innermost stage: never calls next."""

    def __init__(self, *, parser: str = "selectolax", prefer_dates: str = "modified", clock=time.time):
        self._parser = parser
        self._prefer_dates = prefer_dates
        self._clock = clock

    async def __call__(self, task: CrawlTask, next: Next | None = None) -> Outcome:
        final = task.hops[-1]
        record = UrlRecord(
            url=task.submitted, status=Status.OK, canonical_url=final.url, final_url=final.url,
            http_status=final.http_status,
            redirects=tuple(Redirect(h.url, h.http_status) for h in task.hops[:-1]),
            content_type=media_type(final) if final.http_status else "",
            fetched_at=final.fetched_at or self._clock())
        record = dataclasses.replace(record, **self._classify(task, final, record))
        return Outcome(task, record, Resolution.CRAWLED, key=final.url, fetches=task.hops)

    def _classify(self, task: CrawlTask, final: FetchResult, record: UrlRecord) -> dict:
        if task.failure is not None:
            status, error = task.failure
            return {"status": status, "error": error}
        if final.status is not Status.OK:
            return {"status": final.status, "error": final.error}
        status = status_for_http(final.http_status)
        if status is not Status.OK:
            return {"status": status, "error": f"HTTP {final.http_status}"}
        if record.content_type not in HTML_TYPES:
            if final.truncated:
                return {"status": Status.TOO_LARGE, "error": "body larger than fetcher.max_body_bytes"}
            return {"status": Status.UNSUPPORTED_CONTENT,
                    "error": f"content type {record.content_type or 'unknown'} is not HTML"}
        page = extract_page(final.body, final.url, final.header("content-type"),
                            self._parser, self._prefer_dates)
        return {"status": Status.OK, **with_page(record, page)}
