"""What flows through the scheduler's stages: typed, frozen, changed by evolve (spiderduck.core.frozen: dataclasses.replace, faster);
and FetchHop, the one call the stages that fetch are given."""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Mapping

from spiderduck.core.fetch import FetchResult
from spiderduck.core.record import PageMetadata, UrlRecord
from spiderduck.core.status import Status
from spiderduck.extract.files import FileBytes
from spiderduck.core.frozen import evolve

# fetch(url, *, purpose="page", max_body_bytes=0, validators=None, range="") -> the hop's result
# (FetcherClient.fetch): what the Redirect Follower, the File Reader and the Related Fetcher fetch through.
FetchHop = Callable[..., Awaitable[FetchResult]]


class Resolution(enum.IntEnum):
    """Mirrors spiderduck.v1.Resolution: how a URL's answer was produced."""
    CRAWLED = 1     # fetched now
    FRESH = 2       # a stored record before its expires_at
    JOINED = 3      # the same URL was in flight; shares that result
    REJECTED = 4    # never fetched (invalid or unsupported URL, or FORGOTTEN: on the denylist)
    REVALIDATED = 5  # re-fetched; the origin answered 304 or sent the same content again
    STALE = 6       # an expired record answered at once, while a refresh re-fetches it


@dataclass(frozen=True)
class Submission:
    """One message from spiderduck.urls.submit."""
    data: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    received_at: float = 0.0        # epoch seconds the message was published
    delivery: int = 1               # 1 on first delivery
    stream_seq: int = 0             # its sequence in the URLS stream (0: not from the stream)


@dataclass(frozen=True)
class CrawlTask:
    """One URL on its way through the stages."""
    submitted: str                  # as submitted
    received_at: float
    attempt: int = 1
    url: str = ""                   # canonical form, set by the crawl decider
    hops: tuple[FetchResult, ...] = ()  # one per request of the redirect chain, in order
    failure: tuple[Status, str] | None = None  # why the chain stopped early, if it did
    hop_kinds: tuple[str, ...] = ()  # how each hop but the last moved on (record.REDIRECT_KINDS)
    previous: UrlRecord | None = None  # the stored record this crawl renews, set by the crawl decider
    refresh: bool = False           # asked to re-fetch a fresh record (within min_refresh_interval: not)
    submission_id: str = ""         # the producer's id of the submission, echoed in the event
    source: str = ""                # who submitted, echoed in the event
    reply_to: str = ""              # a ResolveUrl's inbox: the outcome goes there, not to the events
    place: tuple[int, int] = (0, 1)  # (url_index, url_count): its place among its submission's URLs
    file: FileBytes | None = None   # a file's declared size and the parts read (its head, then the
                                    # File Reader's ranges), when the final answer is a file


@dataclass(frozen=True)
class Outcome:
    task: CrawlTask
    record: UrlRecord
    resolution: Resolution
    key: str                        # the store key of the record (canonical final URL)
    fetches: tuple[FetchResult, ...] = ()  # what this crawl fetched (for the content log)
    page: PageMetadata | None = None       # what the page said of itself, when it was HTML
    related: tuple[FetchResult, ...] = ()  # the related fetches' requests (for the content log)
    changed_fields: tuple[str, ...] = ()   # the record's fields this crawl changed (spiderduck.wire.record_diff)
    archivable: bool = True                # the Post Processor's word: False when the publisher said
                                           # noarchive, so the Crawl Recorder logs no final response
    honesty_due: tuple[str, ...] = ()      # why a browser's look is due (scheduler.honesty_select.REASONS,
                                           # or ("all",)); empty: none is (the Honesty Selector's word)

    def latency(self, now: float) -> float:
        """Seconds from the URL's submission to `now` (0 when the submission time is unknown)."""
        return max(0.0, now - self.task.received_at) if self.task.received_at else 0.0

    @property
    def origin_seconds(self) -> float:
        """Seconds the origins took to answer this crawl's fetches."""
        return sum(f.origin_seconds for f in self.fetches)
