"""The scheduler's pipeline, in its one fixed order (src/spiderduck/scheduler/stages/, outer first).

    Decoder -> HonestyChecker -> Notifier -> SightingRecorder -> CrawlDecider -> CrawlRecorder
            -> HonestySelector -> RedirectFollower -> FileReader -> RelatedFetcher -> PostProcessor

Outer stages wrap inner ones: the notifier publishes after the outcome is stored, so an event
always describes stored state. The decider may answer (FRESH, STALE, JOINED, REJECTED) without a
crawl; that answer is still recorded as a sighting and announced. A URL on the denylist is
asked about at the decision, at each hop, before related fetches and around each write, and
ends FORGOTTEN (spiderduck.scheduler.forgetting). Two stages write the metadata
store, and the split is by what they record: the Sighting Recorder records every sighting (a
share; the record of a rejection, which no crawl stored), outside the decider; the Crawl
Recorder records a crawl (its WARC records and record) inside the decider's single-flight
window, so the next sighting of the URL finds its record. A final answer that is not HTML is a
file: the File Reader reads the byte ranges its format needs (fetcher.file_max_requests at most)
before the Post Processor makes its card. The related fetches (a page's image and oEmbed)
complete the record the Post Processor made. The Honesty Selector decides which crawls get a
second look as a browser (issue 43, process.honesty); the Honesty Checker makes it after the first
card is announced, then stores and announces the verdict.

The stores are wrapped here, once, for the stages that call them: with traces on, each store call
is a span (src/spiderduck/scheduler/traced_stores.py), so no stage makes spans of its own calls.

Every setting a stage reads comes from Settings here; the stages state no defaults of their own.
"""
from __future__ import annotations

import time

from spiderduck.bus.claims import Claims
from spiderduck.bus.denylist import Denylist
from spiderduck.bus.submissions import DeadLetter, Resubmit
from spiderduck.core.config import Settings
from spiderduck.core.freshness import Freshness
from spiderduck.core import metrics as metric_recorders
from spiderduck.core.metrics import Recorder
from spiderduck.extract import oembed_registry
from spiderduck.extract.signals import robots_token
from spiderduck.scheduler.events import Publish
from spiderduck.scheduler.file_record import FileCardJob, FileRangeJob
from spiderduck.scheduler.forgetting import Forgetting
from spiderduck.scheduler.stages.announcement import Notifier
from spiderduck.scheduler.stages.chain import Pipeline, compose
from spiderduck.scheduler.stages.crawl_decision import CrawlDecider
from spiderduck.scheduler.stages.crawl_record import CrawlRecorder
from spiderduck.scheduler.stages.file_ranges import FileReader
from spiderduck.scheduler.stages.honesty_check import HonestyChecker
from spiderduck.scheduler.stages.honesty_selection import HonestySelector
from spiderduck.scheduler.stages.record import Extract, PostProcessor
from spiderduck.scheduler.stages.redirect_chain import RedirectFollower
from spiderduck.scheduler.stages.related import RelatedFetcher
from spiderduck.scheduler.stages.sighting import SightingRecorder
from spiderduck.scheduler.stages.submission import Decoder
from spiderduck.scheduler.task import FetchHop
from spiderduck.scheduler.traced_stores import traced_content, traced_metadata
from spiderduck.stores.content import ContentStore
from spiderduck.stores.metadata import MetadataStore


def build_pipeline(settings: Settings, *, metadata: MetadataStore, content: ContentStore,
                   fetch_hop: FetchHop, publish: Publish, metrics: Recorder,
                   extract: Extract | None = None, resubmit: Resubmit | None = None,
                   dead_letter: DeadLetter | None = None, claims: Claims | None = None,
                   denylist: Denylist | None = None, file_card: FileCardJob | None = None,
                   file_range: FileRangeJob | None = None, dispute: Publish | None = None,
                   clock=time.time) -> Pipeline:
    """`extract` runs a page's extraction (ExtractionPool.extract), `file_card` a file's card
    (ExtractionPool.file_card) and `file_range` the range it wants next (ExtractionPool.next_range);
    None makes them in-process.
    `resubmit` publishes the parts of a split submission (see stages/submission.py) and the
    refreshes of records answered STALE (stages/crawl_decision.py); `dead_letter` publishes the
    dead letters of a submission's URLs over the limit of one message (stages/submission.py).
    `claims` (spiderduck.bus.claims) keeps a URL's crawls apart across schedulers; None: within this
    pipeline only. `denylist` (spiderduck.bus.denylist): its URLs end FORGOTTEN, never fetched
    nor stored (spiderduck.scheduler.forgetting); None forgets nothing.
    `metrics` is the scheduler's recorder (spiderduck.core.metrics.recorder("scheduler")).
    `dispute` publishes a URL whose browser's look differs from its card to
    spiderduck.events.disputed (stages/honesty_check.py); None: not published."""
    s, p, f = settings.scheduler, settings.process, settings.fetcher
    freshness = Freshness.from_settings(settings)
    metadata, content = traced_metadata(metadata), traced_content(content)
    forgetting = Forgetting(denylist)
    post = PostProcessor(parser=p.parser, freshness=freshness, extract=extract,
                         robots_token=robots_token(f.user_agent), embed_allow_hosts=p.embed_allow_hosts,
                         file_card=file_card, clock=clock)
    honesty = metric_recorders.recorder("honesty")
    return compose(
        Decoder(resubmit, dead_letter),
        HonestyChecker(fetch_hop, metadata=metadata, publish=publish, dispute=dispute,
                       extract=post.extract, metrics=honesty, max_redirects=f.max_redirects,
                       refresh_max_delay=p.meta_refresh_max_delay, timeout=p.honesty_timeout,
                       forgetting=forgetting, clock=clock),
        Notifier(publish, metrics=metrics, clock=clock),
        SightingRecorder(metadata, forgetting=forgetting),
        CrawlDecider(metadata, freshness=freshness, min_refresh_interval=settings.min_refresh_interval,
                     serve_stale_for=settings.serve_stale_for, resubmit=resubmit, claims=claims,
                     forgetting=forgetting, clock=clock,
                     # Its claims' deletes in flight at a stop get what shutdown_grace leaves
                     # after the drain (for closing); past it, they lapse within claim_ttl.
                     release_wait=settings.handback_seconds),
        CrawlRecorder(metadata, content, forgetting=forgetting),
        HonestySelector(mode=p.honesty, budget=p.honesty_budget, refresh_max_delay=p.meta_refresh_max_delay,
                        metrics=honesty),
        RedirectFollower(fetch_hop, max_redirects=f.max_redirects, last_attempt=s.max_deliver,
                         refresh_max_delay=p.meta_refresh_max_delay, forgetting=forgetting),
        FileReader(fetch_hop, max_requests=f.file_max_requests, max_range_bytes=f.max_body_bytes,
                   forgetting=forgetting, next_range=file_range),
        RelatedFetcher(fetch_hop, enabled=p.related_fetches, max_redirects=f.max_redirects,
                       image_probe_bytes=p.image_probe_bytes, oembed_max_bytes=p.oembed_max_bytes,
                       timeout=p.related_timeout, cache_size=p.related_cache_size,
                       min_image_size=p.min_image_size, embed_allow_hosts=p.embed_allow_hosts,
                       metrics=metrics, forgetting=forgetting,
                       oembed_endpoint=oembed_registry.load(p.oembed_providers).endpoint_for),
        post,
    )
