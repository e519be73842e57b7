"""Stage 3, the Fetcher Client's loop: follow a redirect chain hop by hop.

Each hop is a new request routed to the fetcher owning that hop's domain, so
each hop is polite on its own domain. History is a tuple; going past
`max_redirects` gives TOO_MANY_REDIRECTS (as httpx's TooManyRedirects).
"""
from __future__ import annotations

import dataclasses
from typing import Awaitable, Callable

from common import urls
from common.errors import FetcherUnavailable
from common.fetch import FetchResult
from common.status import Status, is_redirect
from scheduler.stage import Next
from scheduler.task import CrawlTask, Outcome

# fetch(url, *, purpose="page", max_body_bytes=0) -> the hop's result (FetcherClient.fetch)
FetchHop = Callable[..., Awaitable[FetchResult]]


def next_hop(result: FetchResult) -> str | None:
    """RFC 9110 §10.2.2: Location is resolved against the URL that was requested."""
    location = result.header("location")
    if result.status is not Status.OK or not is_redirect(result.http_status, location):
        return None
    return urls.join(result.url, location.strip()) or f"invalid Location {location!r}"


class RedirectFollower:
    """`last_attempt`: the message's last allowed delivery (scheduler.max_deliver). No fetcher
    answering a hop fails the message, to be retried; on its last delivery the hop is recorded
    as CONNECTION_ERROR with the reason instead, so the URL still gets its record and event
    rather than only a dead letter."""

    def __init__(self, fetch_hop: FetchHop, *, max_redirects: int, last_attempt: int = 0):
        self._fetch_hop = fetch_hop
        self._max_redirects = max_redirects
        self._last_attempt = last_attempt

    async def __call__(self, task: CrawlTask, next: Next) -> Outcome:
        url = task.url
        hops: list[FetchResult] = []
        failure = None
        while True:
            result = await self._hop(url, task.attempt)
            hops.append(result)
            target = next_hop(result)
            if target is None:
                break
            if len(hops) > self._max_redirects:
                failure = (Status.TOO_MANY_REDIRECTS,
                           f"more than {self._max_redirects} redirects")
                break
            try:
                url = urls.canonicalize(target)
            except urls.InvalidUrl as exc:
                failure = (Status.INVALID_URL, f"redirect to an unusable URL: {exc}")
                break
        return await next(dataclasses.replace(task, hops=tuple(hops), failure=failure))

    async def _hop(self, url: str, attempt: int) -> FetchResult:
        try:
            return await self._fetch_hop(url)
        except FetcherUnavailable as exc:
            if not self._last_attempt or attempt < self._last_attempt:
                raise
            return FetchResult(url=url, status=Status.CONNECTION_ERROR,
                               error=f"no fetcher answered on the last of {attempt} deliveries: {exc}")
