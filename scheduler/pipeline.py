"""The scheduler's pipeline, in its one fixed order.

    Decoder -> Notifier -> Persister -> CrawlDecider -> CrawlRecorder -> RedirectFollower
            -> RelatedFetcher -> PostProcessor

Outer stages wrap inner ones: the notifier publishes after the outcome is
persisted, so an event always describes stored state; the decider may answer
(FRESH, JOINED, REJECTED) without fetching, and that answer is still counted,
stored where new, and announced. A crawl is recorded inside the decider's
single-flight window, so the next sighting of the URL finds its record. The related
fetches (a page's image and oEmbed) complete the record the Post Processor made.
"""
from __future__ import annotations

import time

from common.config import Settings
from common.stores.content import ContentStore
from common.stores.metadata import MetadataStore
from scheduler.decide import CrawlDecider
from scheduler.decode import Decoder, Resubmit
from scheduler.events import Publish
from scheduler.notify import Notifier
from scheduler.persist import CrawlRecorder, Persister
from scheduler.process import Extract, PostProcessor
from scheduler.redirects import FetchHop, RedirectFollower
from scheduler.related import RelatedFetcher
from scheduler.stage import Pipeline, compose


def build_pipeline(settings: Settings, *, metadata: MetadataStore, content: ContentStore,
                   fetch_hop: FetchHop, publish: Publish, extract: Extract | None = None,
                   resubmit: Resubmit | None = None, clock=time.time) -> Pipeline:
    """`extract` runs a page's extraction (ExtractionPool.extract); None extracts in-process.
    `resubmit` publishes the parts of a split submission (see decode.py)."""
    p = settings.process
    return compose(
        Decoder(resubmit),
        Notifier(publish),
        Persister(metadata),
        CrawlDecider(metadata, recrawl_after=settings.recrawl_after,
                     recrawl_failed_after=settings.scheduler.recrawl_failed_after, clock=clock),
        CrawlRecorder(metadata, content),
        RedirectFollower(fetch_hop, max_redirects=settings.fetcher.max_redirects,
                         last_attempt=settings.scheduler.max_deliver),
        RelatedFetcher(fetch_hop, enabled=p.related_fetches, max_redirects=settings.fetcher.max_redirects,
                       image_probe_bytes=p.image_probe_bytes, oembed_max_bytes=p.oembed_max_bytes,
                       timeout=p.related_timeout, cache_size=p.related_cache_size),
        PostProcessor(parser=p.parser, prefer_dates=p.prefer_dates, extract=extract, clock=clock),
    )
