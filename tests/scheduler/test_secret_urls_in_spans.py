"""A submitted URL's secrets through the scheduler's wired pipeline (src/spiderduck/bus/submissions.py's
decode_submission, src/spiderduck/core/telemetry.py): its userinfo is dropped at intake, so no stage,
store or span sees it, and the spans of the crawl carry its secret query values as REDACTED."""
from __future__ import annotations

from spiderduck.core import config, metrics
from spiderduck.core.fetch import FetchResult
from spiderduck.core.status import Status
from spiderduck.scheduler.pipeline import build_pipeline
from spiderduck.scheduler.task import Resolution, Submission
from support.scheduler_stores import stores  # noqa: F401 -- the fixture

SUBMITTED = "http://alice:PASSW0RD@a.test/login?session_token=SECRET1&X-Amz-Signature=SIG2&q=kept"
STRIPPED = "http://a.test/login?session_token=SECRET1&X-Amz-Signature=SIG2&q=kept"
TRACED = "http://a.test/login?session_token=REDACTED&X-Amz-Signature=REDACTED&q=kept"


class Clock:
    def __init__(self, now=1_000_000.0):
        self.now = now

    def __call__(self):
        return self.now


async def test_a_crawls_stages_stores_and_spans_never_see_the_urls_secrets(spans, stores):
    metadata, content = stores
    clock = Clock()
    asked = []

    async def fetch_hop(url, **_):
        asked.append(url)
        if url != STRIPPED:         # the related fetches (the favicon): nothing answers
            return FetchResult(url, Status.CONNECTION_ERROR, error="refused")
        return FetchResult(url, Status.OK, 200, (("Content-Type", "text/html"),), b"<title>T</title>",
                           fetched_at=clock.now)

    async def publish(outcome, key):
        pass
    pipeline = build_pipeline(config.load(env={}), metadata=metadata, content=content, fetch_hop=fetch_hop,
                              publish=publish, metrics=metrics.recorder("test"), clock=clock)
    (first,) = await pipeline(Submission(f'{{"url": "{SUBMITTED}"}}'.encode()))
    assert first.resolution is Resolution.CRAWLED
    clock.now += 10 * 86400         # a re-crawl reads the first response back (`content read`)
    (again,) = await pipeline(Submission(SUBMITTED.encode()))
    assert again.resolution is Resolution.REVALIDATED

    assert STRIPPED in asked and not any("alice" in u or "PASSW0RD" in u for u in asked)
    for outcome in (first, again):
        assert outcome.task.submitted == STRIPPED
        assert outcome.record.url == outcome.record.final_url == STRIPPED
    headers, _ = await content.read(again.record.content_ref)
    assert headers["WARC-Target-URI"] == STRIPPED

    traced = {s.attributes["url.full"] for s in spans.get_finished_spans() if "url.full" in s.attributes}
    assert traced == {TRACED}
    assert {"metadata get", "content append", "content read", "extract"} <= {
        s.name for s in spans.get_finished_spans() if "url.full" in s.attributes}
    for s in spans.get_finished_spans():
        text = str(dict(s.attributes)) + str([dict(e.attributes) for e in s.events]) + str(s.status.description)
        for secret in ("alice", "PASSW0RD", "SECRET1", "SIG2"):
            assert secret not in text, (s.name, secret)
