"""Stage 8, the Redirect Follower: the redirect chain, hop by hop (spiderduck.core.redirects).

Input: a CrawlTask with its canonical url. Output: the Outcome of the stages inside, given the
task with `hops` (one FetchResult per request, in order) and `failure` (why the chain stopped
early, if it did). Each hop is a new request routed to the fetcher owning that hop's domain, so
each hop is polite on its own domain. When the task renews a stored record (`previous`), the hop
to that record's final URL is conditional: it sends the record's ETag and Last-Modified
(spiderduck.core.freshness.Validators), and the origin may answer 304. Going past fetcher.max_redirects
gives TOO_MANY_REDIRECTS (as httpx's TooManyRedirects), a Location that is no fetchable URL
INVALID_URL: both are outcomes, not failures. A page with no card of its own that refreshes to
another URL within process.meta_refresh_max_delay (`<meta http-equiv="refresh">`, a Refresh
header: spiderduck.extract.refresh) is a hop too, fetched and counted as a 3xx's is: a page
request (fetcher.accept_language) through the same guard, politeness and denylist. The task's
`hop_kinds` say how each hop but the last moved on (record.REDIRECT_KINDS). A hop whose URL is on the denylist is not fetched:
the whole chain answers FORGOTTEN, and no stage inside sees it (spiderduck.scheduler.forgetting).
Failure: FetcherUnavailable when no fetcher answers a hop (retryable), except on the message's
last delivery (below).
"""
from __future__ import annotations

from spiderduck.core import redirects
from spiderduck.core.errors import FetcherUnavailable
from spiderduck.core.fetch import FetchResult
from spiderduck.core.freshness import Validators
from spiderduck.core.status import Status
from spiderduck.extract import refresh
from spiderduck.scheduler.forgetting import Forgetting, forgotten_outcome
from spiderduck.scheduler.stages.chain import Next
from spiderduck.scheduler.task import CrawlTask, FetchHop, Outcome
from spiderduck.core.frozen import evolve


class RedirectFollower:
    """`last_attempt`: the message's last allowed delivery (scheduler.max_deliver). No fetcher
    answering a hop fails the message, to be retried; on its last delivery the hop is recorded
    as CONNECTION_ERROR with the reason instead, so the URL still gets its record and event
    rather than only a dead letter."""

    def __init__(self, fetch_hop: FetchHop, *, max_redirects: int, last_attempt: int,
                 refresh_max_delay: float, forgetting: Forgetting | None = None):
        self._fetch_hop = fetch_hop
        self._refresh_max_delay = refresh_max_delay
        self._forgotten = forgetting or Forgetting()
        self._max_redirects = max_redirects
        self._last_attempt = last_attempt

    async def __call__(self, task: CrawlTask, next: Next[CrawlTask, Outcome]) -> Outcome:
        renewed = task.previous
        validators = Validators.of(renewed) if renewed is not None else Validators()

        async def hop(url: str) -> FetchResult:
            if self._forgotten(url):        # never fetched: the chain ends here
                return FetchResult(url=url, status=Status.FORGOTTEN)
            # Conditional only where the stored response came from: its final URL.
            conditional = validators if validators and url == renewed.final_url else None
            return await self._hop(url, task.attempt, conditional)
        chain = await redirects.follow(hop, task.url, max_redirects=self._max_redirects,
                                       refresh=self._refresh if self._refresh_max_delay > 0 else None)
        if chain.hops[-1].status is Status.FORGOTTEN:
            return forgotten_outcome(task)      # nothing of the chain goes further
        return await next(evolve(task, hops=chain.hops, failure=chain.failure, hop_kinds=chain.kinds))

    def _refresh(self, result: FetchResult) -> tuple[str, str] | None:
        """Where a successful answer's refresh sends the reader, if it is a hop (extract.refresh)."""
        return refresh.next_hop_of(result, max_delay=self._refresh_max_delay)

    async def _hop(self, url: str, attempt: int, validators: Validators | None) -> FetchResult:
        try:
            if validators is not None:
                return await self._fetch_hop(url, validators=validators)
            return await self._fetch_hop(url)
        except FetcherUnavailable as exc:
            if not self._last_attempt or attempt < self._last_attempt:
                raise
            return FetchResult(url=url, status=Status.CONNECTION_ERROR,
                               error=f"no fetcher answered on the last of {attempt} deliveries: {exc}")
