"""The spans of a page's extraction and of the stages' store calls (src/spiderduck/scheduler/traced_stores.py,
stages/record.py): none when traces are off; on, each names its URL and, for a store, its system,
and each store call is a child of the stage that made it, the stores traced where the pipeline is
wired (build_pipeline), not in the stages."""
from __future__ import annotations

import pytest
from opentelemetry.trace import SpanKind

from spiderduck.core import config

from spiderduck.core import metrics
from spiderduck.core.fetch import FetchResult
from spiderduck.core.freshness import Freshness
from spiderduck.core.record import UrlRecord
from spiderduck.core.status import Status
from spiderduck.extract.signals import robots_token
from spiderduck.scheduler.pipeline import build_pipeline
from spiderduck.scheduler.stages.crawl_decision import CrawlDecider
from spiderduck.scheduler.stages.record import PostProcessor
from spiderduck.scheduler.task import CrawlTask, Resolution, Submission
from spiderduck.scheduler.traced_stores import TracedMetadataStore, db_system, traced_content, traced_metadata
from spiderduck.stores.open import open_content_store, open_metadata_store

URL = "http://a.test/"
PAGE = FetchResult(URL, Status.OK, 200, (("Content-Type", "text/html"),), b"<title>T</title>",
                   fetched_at=1_000_000.0)




@pytest.fixture
async def store(tmp_path):
    s = await open_metadata_store(f"sqlite:///{tmp_path}/m.db")
    yield s
    await s.close()


@pytest.fixture
async def content(tmp_path):
    c = await open_content_store(f"file://{tmp_path}/content")
    yield c
    await c.close()


def test_off_the_stores_are_not_wrapped_and_each_store_names_its_system(store, content):
    assert traced_metadata(store) is store and traced_content(content) is content

    class SqliteMetadataStore: ...
    class HdfsContentStore: ...
    class Wrapped(HdfsContentStore): ...
    assert [db_system(k) for k in (SqliteMetadataStore, Wrapped, object)] == ["sqlite", "hdfs", "other"]


async def test_the_deciders_read_and_the_extraction_are_spans(spans, store):
    settings = config.load(env={})
    decider = CrawlDecider(traced_metadata(store), freshness=Freshness.from_settings(settings),
                           min_refresh_interval=30, serve_stale_for=0)
    post = PostProcessor(parser=settings.process.parser, robots_token=robots_token(settings.fetcher.user_agent),
                         freshness=Freshness.from_settings(settings))

    async def crawl(task):
        return await post(CrawlTask(task.submitted, 0.0, url=task.url, hops=(PAGE,)))
    out = await decider(CrawlTask(URL, 0.0), crawl)
    assert out.record.title == "T"
    done = {s.name: s for s in spans.get_finished_spans()}
    assert set(done) == {"metadata get", "extract"}
    assert done["metadata get"].kind is SpanKind.CLIENT
    assert dict(done["metadata get"].attributes) == {"db.system": "sqlite", "url.full": URL}
    assert dict(done["extract"].attributes) == {"url.full": URL, "spiderduck.body_bytes": len(PAGE.body),
                                                "spiderduck.head_alone": False}


async def test_a_traced_store_answers_as_the_store_it_wraps(spans, store):
    traced = traced_metadata(store)
    assert isinstance(traced, TracedMetadataStore)
    await traced.put(URL, UrlRecord(url=URL, status=Status.OK, final_url=URL, title="T"), [URL])
    assert (await traced.get(URL)).title == (await store.get(URL)).title == "T"
    assert [r.title for r in await traced.get_many([URL, "http://b.test/"]) if r] == ["T"]
    assert await traced.add_share(URL, 2) == 2
    # Only the stages' calls are spans: the batch reads the metadata API makes are not.
    assert [s.name for s in spans.get_finished_spans()] == ["metadata put", "metadata get", "metadata add_share"]


class Clock:
    def __init__(self, now=1_000_000.0):
        self.now = now

    def __call__(self):
        return self.now


async def test_the_wired_pipelines_store_calls_are_spans_under_the_stages_that_make_them(spans, store, content):
    """build_pipeline wraps the stores: a crawl's calls are spans, each a child of its stage's,
    and a re-crawl of the same body reads the earlier response (`content read`)."""
    clock = Clock()

    async def fetch_hop(url, **_):
        if url != URL:          # the related fetches (the favicon): nothing answers
            return FetchResult(url, Status.CONNECTION_ERROR, error="refused")
        return PAGE

    async def publish(outcome, key):
        pass
    pipeline = build_pipeline(config.load(env={}), metadata=store, content=content, fetch_hop=fetch_hop,
                              publish=publish, metrics=metrics.recorder("test"), clock=clock)
    (first,) = await pipeline(Submission(f'{{"urls": ["{URL}"]}}'.encode()))
    assert first.resolution is Resolution.CRAWLED and first.record.content_ref
    clock.now += 10 * 86400     # expired: crawled again, the same body a revisit of the first
    (again,) = await pipeline(Submission(f'{{"urls": ["{URL}"]}}'.encode()))
    assert again.resolution is Resolution.REVALIDATED

    done = spans.get_finished_spans()
    by_id = {s.context.span_id: s for s in done}
    made = {}
    for s in done:
        if s.kind is SpanKind.CLIENT:
            made.setdefault(s.name, set()).add(
                (by_id[s.parent.span_id].name, s.attributes["db.system"], s.attributes.get("url.full")))
    assert made == {
        "metadata get": {("CrawlDecider", "sqlite", URL)},
        "metadata put": {("CrawlRecorder", "sqlite", URL)},
        "metadata add_share": {("SightingRecorder", "sqlite", URL)},
        "content append": {("CrawlRecorder", "warc", URL)},
        "content read": {("CrawlRecorder", "warc", URL)},
    }
