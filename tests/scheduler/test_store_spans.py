"""The spans of a page's extraction and of the stages' store calls (src/spiderduck/scheduler/stages/store_spans.py,
stages/record.py): none when traces are off; on, each names its URL and, for a store, its system."""
from __future__ import annotations

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from spiderduck.core import config

from spiderduck.core import telemetry
from spiderduck.core.fetch import FetchResult
from spiderduck.core.freshness import Freshness
from spiderduck.core.settings import TelemetrySettings
from spiderduck.core.status import Status
from spiderduck.scheduler.stages.crawl_decision import CrawlDecider
from spiderduck.scheduler.stages.record import PostProcessor
from spiderduck.scheduler.stages.store_spans import db_system, store_span
from spiderduck.scheduler.task import CrawlTask
from spiderduck.stores.open import open_metadata_store

URL = "http://a.test/"


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    shutdown = telemetry.setup(TelemetrySettings(service_name="spiderduck-test"), "test", exporter=exporter)
    try:
        yield exporter
    finally:
        shutdown()


@pytest.fixture
async def store(tmp_path):
    s = await open_metadata_store(f"sqlite:///{tmp_path}/m.db")
    yield s
    await s.close()


def test_off_a_store_call_makes_no_span_and_each_store_names_its_system():
    assert store_span("metadata get", object(), URL) is telemetry.OFF

    class SqliteMetadataStore: ...
    class HdfsContentStore: ...
    class Wrapped(HdfsContentStore): ...
    assert [db_system(k) for k in (SqliteMetadataStore, Wrapped, object)] == ["sqlite", "hdfs", "other"]


async def test_the_deciders_read_and_the_extraction_are_spans(spans, store):
    settings = config.load(env={})
    decider = CrawlDecider(store, freshness=Freshness.from_settings(settings), min_refresh_interval=30,
                           serve_stale_for=0)
    page = FetchResult(URL, Status.OK, 200, (("Content-Type", "text/html"),), b"<title>T</title>")
    post = PostProcessor(parser=settings.process.parser, freshness=Freshness.from_settings(settings))

    async def crawl(task):
        return await post(CrawlTask(task.submitted, 0.0, url=task.url, hops=(page,)))
    out = await decider(CrawlTask(URL, 0.0), crawl)
    assert out.record.title == "T"
    done = {s.name: s for s in spans.get_finished_spans()}
    assert set(done) == {"metadata get", "extract"}
    assert dict(done["metadata get"].attributes) == {"db.system": "sqlite", "url.full": URL}
    assert dict(done["extract"].attributes) == {"url.full": URL, "spiderduck.body_bytes": len(page.body),
                                                "spiderduck.head_alone": False}
