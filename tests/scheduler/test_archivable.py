"""The Post Processor says whether a page may be archived (`Outcome.archivable`), and the Crawl
Recorder logs the final response only when it may: a publisher's noarchive (robots meta or
X-Robots-Tag) keeps it out of the content store, on every path (a page, an error answer, a
non-HTML response, a 304 that keeps the stored record), through the wired stages."""
from __future__ import annotations

import pytest

from spiderduck.core import config

from spiderduck.core import metrics
from spiderduck.core.fetch import FetchResult
from spiderduck.core.status import Status
from spiderduck.scheduler.pipeline import build_pipeline
from spiderduck.scheduler.task import Resolution, Submission
from spiderduck.stores.content import ContentStore, FetchedContent
from spiderduck.stores.open import open_metadata_store

HTML = (("Content-Type", "text/html"),)
NOARCHIVE_HEADER = (("X-Robots-Tag", "noarchive"),)


class Clock:
    def __init__(self, now=1_000_000.0):
        self.now = now

    def __call__(self):
        return self.now


class Logged(ContentStore):
    """The content store as a list of what was appended."""

    def __init__(self):
        self.items: list[FetchedContent] = []

    async def append(self, item: FetchedContent) -> str:
        self.items.append(item)
        return f"log@{len(self.items) - 1}"

    async def read(self, content_ref: str):
        return {}, b""

    async def read_following(self, content_ref, max_bytes, max_records):
        return []

    def urls(self) -> list[str]:
        return [item.url for item in self.items]


@pytest.fixture
async def store(tmp_path):
    s = await open_metadata_store(f"sqlite:///{tmp_path}/m.db")
    yield s
    await s.close()


def wired(store, content, answers: dict[str, FetchResult], clock=None):
    """The pipeline over `store` and `content`, its hops answered from `answers` (by URL; any
    other, as the favicon, refused)."""
    async def fetch_hop(url, **_):
        return answers.get(url) or FetchResult(url, Status.CONNECTION_ERROR, error="refused")

    async def publish(outcome, key):
        pass
    pipeline = build_pipeline(config.load(env={}), metadata=store, content=content, fetch_hop=fetch_hop,
                              publish=publish, metrics=metrics.recorder("test"), clock=clock or Clock())

    async def resolve(url: str):
        (outcome,) = await pipeline(Submission(f'{{"urls": ["{url}"]}}'.encode()))
        return outcome
    return resolve


@pytest.mark.parametrize("name, answer, archived", [
    ("a page", FetchResult("http://a.test/", Status.OK, 200, HTML, b"<title>Kept</title>"), True),
    ("noarchive meta", FetchResult("http://a.test/", Status.OK, 200, HTML,
                                   b'<meta name="robots" content="noarchive"><title>Out</title>'), False),
    ("noarchive header", FetchResult("http://a.test/", Status.OK, 200, HTML + NOARCHIVE_HEADER,
                                     b"<title>Out</title>"), False),
    ("another bot's noarchive", FetchResult("http://a.test/", Status.OK, 200,
                                            HTML + (("X-Robots-Tag", "otherbot: noarchive"),),
                                            b"<title>Kept</title>"), True),
    ("an error answer", FetchResult("http://a.test/", Status.OK, 404, HTML, b"gone"), True),
    ("an error answer, noarchive", FetchResult("http://a.test/", Status.OK, 404, HTML + NOARCHIVE_HEADER,
                                               b"gone"), False),
    ("not HTML, noarchive", FetchResult("http://a.test/", Status.OK, 200,
                                        (("Content-Type", "application/pdf"),) + NOARCHIVE_HEADER, b"%PDF"), False),
    ("no answer", FetchResult("http://a.test/", Status.CONNECTION_ERROR, error="refused"), True),
])
async def test_the_final_response_is_logged_unless_its_publisher_said_noarchive(store, name, answer, archived):
    content = Logged()
    outcome = await wired(store, content, {answer.url: answer})(answer.url)
    assert outcome.resolution is Resolution.CRAWLED, name
    assert outcome.archivable is archived, name
    logged = bool(answer.http_status) and archived          # no response (no answer): nothing to log
    assert (answer.url in content.urls()) is logged, name
    assert bool(outcome.record.content_ref) is logged, name
    assert (await store.get(answer.url)).content_ref == outcome.record.content_ref, name


async def test_a_304_keeps_the_stored_records_noarchive_and_a_fresh_answer_logs_nothing(store):
    url = "http://a.test/"
    page = FetchResult(url, Status.OK, 200, HTML + (("ETag", '"v1"'),),
                       b'<meta name="robots" content="noarchive"><title>Out</title>')
    content, clock = Logged(), Clock()
    answers = {url: page}
    resolve = wired(store, content, answers, clock)
    assert (await resolve(url)).archivable is False
    fresh = await resolve(url)
    assert fresh.resolution is Resolution.FRESH and content.urls() == []
    clock.now += 10 * 86400                                 # expired: re-fetched, conditionally
    answers[url] = FetchResult(url, Status.OK, 304, (("ETag", '"v1"'),))
    again = await resolve(url)
    assert again.resolution is Resolution.REVALIDATED and again.record.robots_directives == ("noarchive",)
    assert again.archivable is False and content.urls() == [] and again.record.content_ref == ""
