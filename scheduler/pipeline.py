"""The scheduler's pipeline, in its one fixed order (scheduler/stages/, outer first).

    Decoder -> Notifier -> SightingRecorder -> CrawlDecider -> CrawlRecorder
            -> RedirectFollower -> RelatedFetcher -> PostProcessor

Outer stages wrap inner ones: the notifier publishes after the outcome is stored, so an event
always describes stored state. The decider may answer (FRESH, STALE, JOINED, REJECTED) without a
crawl; that answer is still recorded as a sighting and announced. Two stages write the metadata
store, and the split is by what they record: the Sighting Recorder records every sighting (a
share; the record of a rejection, which no crawl stored), outside the decider; the Crawl
Recorder records a crawl (its WARC records and record) inside the decider's single-flight
window, so the next sighting of the URL finds its record. The related fetches (a page's image
and oEmbed) complete the record the Post Processor made.

Every setting a stage reads comes from Settings here; the stages state no defaults of their own.
"""
from __future__ import annotations

import time

from common.claims import Claims
from common.config import Settings
from common.freshness import Freshness
from common.metrics import Recorder
from common.stores.content import ContentStore
from common.stores.metadata import MetadataStore
from common.submissions import DeadLetter, Resubmit
from scheduler.events import Publish
from common.extraction.signals import robots_token
from scheduler.stages.announcement import Notifier
from scheduler.stages.chain import Pipeline, compose
from scheduler.stages.crawl_decision import CrawlDecider
from scheduler.stages.crawl_record import CrawlRecorder
from scheduler.stages.record import Extract, PostProcessor
from scheduler.stages.redirect_chain import FetchHop, RedirectFollower
from scheduler.stages.related import RelatedFetcher
from scheduler.stages.sighting import SightingRecorder
from scheduler.stages.submission import Decoder


def build_pipeline(settings: Settings, *, metadata: MetadataStore, content: ContentStore,
                   fetch_hop: FetchHop, publish: Publish, metrics: Recorder,
                   extract: Extract | None = None, resubmit: Resubmit | None = None,
                   dead_letter: DeadLetter | None = None, claims: Claims | None = None,
                   clock=time.time) -> Pipeline:
    """`extract` runs a page's extraction (ExtractionPool.extract); None extracts in-process.
    `resubmit` publishes the parts of a split submission (see stages/submission.py) and the
    refreshes of records answered STALE (stages/crawl_decision.py); `dead_letter` publishes the
    dead letters of a submission's URLs over the limit of one message (stages/submission.py).
    `claims` (common.claims) keeps a URL's crawls apart across schedulers; None: within this
    pipeline only.
    `metrics` is the scheduler's recorder (common.metrics.recorder("scheduler"))."""
    s, p, f = settings.scheduler, settings.process, settings.fetcher
    freshness = Freshness.from_settings(settings)
    return compose(
        Decoder(resubmit, dead_letter),
        Notifier(publish, metrics=metrics, clock=clock),
        SightingRecorder(metadata),
        CrawlDecider(metadata, freshness=freshness, min_refresh_interval=settings.min_refresh_interval,
                     serve_stale_for=settings.serve_stale_for, resubmit=resubmit, claims=claims,
                     clock=clock),
        CrawlRecorder(metadata, content),
        RedirectFollower(fetch_hop, max_redirects=f.max_redirects, last_attempt=s.max_deliver),
        RelatedFetcher(fetch_hop, enabled=p.related_fetches, max_redirects=f.max_redirects,
                       image_probe_bytes=p.image_probe_bytes, oembed_max_bytes=p.oembed_max_bytes,
                       timeout=p.related_timeout, cache_size=p.related_cache_size,
                       min_image_size=p.min_image_size, embed_allow_hosts=p.embed_allow_hosts,
                       metrics=metrics),
        PostProcessor(parser=p.parser, freshness=freshness, extract=extract,
                      robots_token=robots_token(f.user_agent), embed_allow_hosts=p.embed_allow_hosts,
                      clock=clock),
    )
