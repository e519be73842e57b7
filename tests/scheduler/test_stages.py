"""The scheduler's stages, each built with explicit dependencies (real SQLite, a fake clock)."""
from __future__ import annotations

import asyncio
import dataclasses

import pytest

from spiderduck.core import config

from spiderduck.core import metrics
from spiderduck.core.fetch import FetchResult
from spiderduck.core.freshness import Freshness, Validators
from spiderduck.core.record import UrlRecord
from spiderduck.core.status import Status
from spiderduck.scheduler.pipeline import build_pipeline
from spiderduck.scheduler.stages.chain import StageFailed, compose
from spiderduck.scheduler.stages.crawl_decision import CrawlDecider
from spiderduck.scheduler.stages.record import PostProcessor
from spiderduck.scheduler.stages.redirect_chain import RedirectFollower
from spiderduck.scheduler.stages.submission import Decoder
from spiderduck.scheduler.task import CrawlTask, Outcome, Resolution, Submission
from spiderduck.stores.open import open_metadata_store
from spiderduck.v1 import events_pb2
from support.extraction import EXTRACTION

DEFAULTS = config.load(env={})


def windows(recrawl_after: float, recrawl_failed_after: float) -> Freshness:
    return Freshness(recrawl_after, recrawl_failed_after, min_recrawl_after=DEFAULTS.min_recrawl_after,
                     max_recrawl_after=DEFAULTS.max_recrawl_after)


class Clock:
    def __init__(self, now=1_000_000.0):
        self.now = now

    def __call__(self):
        return self.now


@pytest.fixture
async def store(tmp_path):
    s = await open_metadata_store(f"sqlite:///{tmp_path}/m.db")
    yield s
    await s.close()


def crawled(task: CrawlTask, title="T") -> Outcome:
    rec = UrlRecord(url=task.submitted, status=Status.OK, final_url=task.url, title=title,
                    fetched_at=1_000_000.0)
    return Outcome(task, rec, Resolution.CRAWLED, key=task.url)


# --- decode (the decoding itself: tests/bus/test_submission_decoding.py) --------------
async def test_decoder_fans_out_one_task_per_url():
    seen = []

    async def next_(task):
        seen.append(task.submitted)
        return task.submitted
    out = await Decoder()(Submission(b'{"urls": ["http://a.test/", "http://b.test/"]}', delivery=3),
                          next_)
    assert sorted(seen) == ["http://a.test/", "http://b.test/"] and len(out) == 2


# --- decide -------------------------------------------------------------------------------
async def test_invalid_urls_are_rejected_without_fetching(store):
    decider = CrawlDecider(store, min_refresh_interval=30, serve_stale_for=0, freshness=windows(60, 10), clock=Clock())

    async def never(task):
        raise AssertionError("fetched")
    out = await decider(CrawlTask("mailto:a@b.test", 0.0), never)
    assert out.resolution is Resolution.REJECTED and out.record.status is Status.INVALID_URL
    assert "mailto" in out.record.error


async def test_fresh_records_are_answered_and_stale_ones_recrawled(store):
    clock = Clock()
    decider = CrawlDecider(store, min_refresh_interval=30, serve_stale_for=0, freshness=windows(60, 10), clock=clock)
    rec = UrlRecord(url="http://a.test/", status=Status.OK, final_url="http://a.test/",
                    fetched_at=clock.now)
    await store.put("http://a.test/", rec, ["http://a.test/"])
    calls = []

    async def fetch(task):
        calls.append(task)
        return crawled(task)
    out = await decider(CrawlTask("HTTP://A.test/#frag", 0.0), fetch)
    assert out.resolution is Resolution.FRESH and not calls
    clock.now += 61
    out = await decider(CrawlTask("http://a.test/", 0.0), fetch)
    assert out.resolution is Resolution.CRAWLED and len(calls) == 1


async def test_a_refresh_fetches_a_fresh_record_at_most_once_per_interval(store):
    clock = Clock()
    decider = CrawlDecider(store, min_refresh_interval=30, serve_stale_for=0, freshness=windows(600, 10), clock=clock)
    rec = UrlRecord(url="http://a.test/", status=Status.OK, final_url="http://a.test/", fetched_at=clock.now)
    await store.put("http://a.test/", rec, ["http://a.test/"])
    calls = []

    async def fetch(task):
        calls.append(task)
        return crawled(task)
    refresh = CrawlTask("http://a.test/", 0.0, refresh=True)
    assert (await decider(refresh, fetch)).resolution is Resolution.FRESH and not calls   # fetched 0 s ago
    clock.now += 31
    assert (await decider(CrawlTask("http://a.test/", 0.0), fetch)).resolution is Resolution.FRESH
    out = await decider(refresh, fetch)
    assert out.resolution is Resolution.CRAWLED and len(calls) == 1 and calls[0].previous.url == rec.url


async def test_a_refresh_that_joins_a_sighting_answered_fresh_still_fetches(store):
    clock = Clock()
    decider = CrawlDecider(store, min_refresh_interval=30, serve_stale_for=0, freshness=windows(600, 10), clock=clock)
    rec = UrlRecord(url="http://a.test/", status=Status.OK, final_url="http://a.test/",
                    fetched_at=clock.now - 100)
    await store.put("http://a.test/", rec, ["http://a.test/"])
    calls = []

    async def fetch(task):
        calls.append(task)
        return crawled(task)
    plain, refresh = await asyncio.gather(decider(CrawlTask("http://a.test/", 0.0), fetch),
                                          decider(CrawlTask("http://a.test/", 0.0, refresh=True), fetch))
    assert plain.resolution is Resolution.FRESH
    assert refresh.resolution is Resolution.CRAWLED and len(calls) == 1


class Resubmitted(list):
    async def __call__(self, data, headers):
        self.append((events_pb2.UrlSubmission.FromString(data), headers))


async def stale_case(store, *, record=None, serve_stale_for=3600, tasks=(CrawlTask("http://a.test/", 0.0),)):
    """A record expired 10 s ago; what the decider answers each task, and what it resubmitted."""
    clock = Clock()
    resubmitted = Resubmitted()
    decider = CrawlDecider(store, min_refresh_interval=30, serve_stale_for=serve_stale_for, clock=clock,
                           freshness=windows(600, 10), resubmit=resubmitted)
    rec = record or UrlRecord(url="http://a.test/", status=Status.OK, final_url="http://a.test/",
                              fetched_at=clock.now - 610, expires_at=clock.now - 10)
    await store.put("http://a.test/", rec, ["http://a.test/"])

    async def fetch(task):
        return crawled(task)
    outs = await asyncio.gather(*(decider(t, fetch) for t in tasks))
    return [o.resolution.name for o in outs], resubmitted


async def test_an_expired_record_is_answered_stale_and_refreshed_once(store):
    answers, resubmitted = await stale_case(store, tasks=[CrawlTask("http://a.test/", 0.0)] * 5)
    assert answers == ["STALE"] * 5
    # Each sighting may submit the refresh; all under one Nats-Msg-Id, so JetStream keeps one.
    assert {(m.url, m.refresh, m.source) for m, _ in resubmitted} == {("http://a.test/", True, "spiderduck:stale-refresh")}
    (msg_id,) = {h["Nats-Msg-Id"] for _, h in resubmitted}
    assert msg_id.startswith("spiderduck-refresh-") and msg_id.endswith("-999390.0")


@pytest.mark.parametrize("case", ["serve_stale_for 0", "too old", "a failure", "a refresh"])
async def test_what_is_not_served_stale_is_fetched_first(store, case):
    failed = UrlRecord(url="http://a.test/", status=Status.HTTP_ERROR, http_status=404,
                       final_url="http://a.test/", fetched_at=1_000_000.0 - 610, expires_at=1_000_000.0 - 10)
    answers, resubmitted = await stale_case(store, **{
        "serve_stale_for 0": {"serve_stale_for": 0},
        "too old": {"serve_stale_for": 10},
        "a failure": {"record": failed},
        "a refresh": {"tasks": [CrawlTask("http://a.test/", 0.0, refresh=True)]}}[case])
    assert answers == ["CRAWLED"] and not resubmitted


async def test_failures_stay_fresh_for_less_long(store):
    clock = Clock()
    decider = CrawlDecider(store, min_refresh_interval=30, serve_stale_for=0, freshness=windows(600, 10), clock=clock)
    rec = UrlRecord(url="http://down.test/", status=Status.CONNECTION_ERROR,
                    final_url="http://down.test/", fetched_at=clock.now - 11)
    assert not decider.is_fresh(rec)
    assert decider.is_fresh(dataclasses.replace(rec, status=Status.HTTP_ERROR, http_status=404))


async def test_the_same_url_in_flight_is_fetched_once(store):
    decider = CrawlDecider(store, min_refresh_interval=30, serve_stale_for=0, freshness=windows(60, 10), clock=Clock())
    gate = asyncio.Event()
    calls = []

    async def fetch(task):
        calls.append(task)
        await gate.wait()
        return crawled(task)
    tasks = [asyncio.create_task(decider(CrawlTask("http://viral.test/", 0.0), fetch))
             for _ in range(5)]
    await asyncio.sleep(0)
    gate.set()
    outs = await asyncio.gather(*tasks)
    assert len(calls) == 1
    assert sorted(o.resolution.name for o in outs) == ["CRAWLED"] + ["JOINED"] * 4


# --- redirects ----------------------------------------------------------------------------
def hop(url, code=200, location=None, status=Status.OK):
    headers = (("Location", location),) if location else ()
    return FetchResult(url=url, status=status, http_status=code, headers=headers)


async def run_chain(responses: dict, max_redirects=10) -> CrawlTask:
    async def fetch_hop(url):
        return responses[url]

    async def last(task):
        return task
    return await RedirectFollower(fetch_hop, max_redirects=max_redirects, last_attempt=0, refresh_max_delay=5.0)(
        CrawlTask("x", 0.0, url="http://a.test/"), last)


async def test_redirects_are_followed_relative_to_each_hop():
    task = await run_chain({
        "http://a.test/": hop("http://a.test/", 301, "http://b.test/x/y"),
        "http://b.test/x/y": hop("http://b.test/x/y", 302, "../z?q=1"),
        "http://b.test/z?q=1": hop("http://b.test/z?q=1", 200)})
    assert [h.url for h in task.hops] == ["http://a.test/", "http://b.test/x/y", "http://b.test/z?q=1"]
    assert task.failure is None


async def test_too_many_redirects_and_loops():
    loop = {"http://a.test/": hop("http://a.test/", 302, "http://b.test/"),
            "http://b.test/": hop("http://b.test/", 302, "http://a.test/")}
    task = await run_chain(loop, max_redirects=3)
    assert task.failure[0] is Status.TOO_MANY_REDIRECTS and len(task.hops) == 4


async def test_a_redirect_to_an_unsupported_scheme_stops_the_chain():
    task = await run_chain({"http://a.test/": hop("http://a.test/", 301, "ftp://a.test/f")})
    assert task.failure[0] is Status.INVALID_URL


async def test_a_304_or_a_3xx_without_location_is_final():
    task = await run_chain({"http://a.test/": hop("http://a.test/", 302)})
    assert len(task.hops) == 1 and task.failure is None


# --- process ------------------------------------------------------------------------------
@pytest.mark.parametrize("result,status,mode", [
    (hop("http://a.test/", 500), Status.HTTP_ERROR, ""),
    (FetchResult("http://a.test/", Status.TIMEOUT, error="slow"), Status.TIMEOUT, ""),
    # A file is a card (issue 41): OK when read whole, TOO_LARGE when cut and nothing to show.
    (FetchResult("http://a.test/", Status.OK, 200, (("Content-Type", "application/pdf"),), b"%PDF"),
     Status.OK, ""),
    (FetchResult("http://a.test/", Status.OK, 200, (("Content-Type", "video/mp4"),), b"x", truncated=True),
     Status.TOO_LARGE, ""),
    (FetchResult("http://a.test/", Status.OK, 200, (), b"<!doctype html><title>Sniffed</title>"),
     Status.OK, "static"),
])
async def test_post_processor_maps_the_final_hop_onto_one_status(result, status, mode):
    out = await post_process(CrawlTask("http://a.test/", 0.0, url="http://a.test/", hops=(result,)))
    assert out.record.status is status
    assert out.record.ok or out.record.error
    assert out.record.fetch_mode == mode        # read from the HTML, or no page


async def post_process(task: CrawlTask) -> Outcome:
    return await PostProcessor(**EXTRACTION,
                               freshness=Freshness.from_settings(DEFAULTS))(task)


STORED = UrlRecord(url="http://s.test/1", status=Status.OK, final_url="http://a.test/p", http_status=200,
                   title="Kept", content_ref="f.warc.gz@0+10", fetched_at=1000.0, expires_at=2000.0,
                   etag='"v1"', last_modified=900.0, share_count=4)


async def test_a_conditional_hop_goes_only_to_the_renewed_records_final_url():
    sent = []

    async def fetch_hop(url, **kw):
        sent.append((url, kw.get("validators")))
        return {"http://s.test/2": hop("http://s.test/2", 301, "http://a.test/p"),
                "http://a.test/p": hop("http://a.test/p", 304)}[url]

    async def last(task):
        return task
    follower = RedirectFollower(fetch_hop, max_redirects=5, last_attempt=0, refresh_max_delay=5.0)
    await follower(CrawlTask("x", 0.0, url="http://s.test/2", previous=STORED), last)
    date = "Thu, 01 Jan 1970 00:15:00 GMT"
    assert sent == [("http://s.test/2", None), ("http://a.test/p", Validators('"v1"', date))]
    sent.clear()
    await follower(CrawlTask("x", 0.0, url="http://s.test/2",
                             previous=dataclasses.replace(STORED, etag="", last_modified=0.0)), last)
    assert [v for _, v in sent] == [None, None]          # nothing to validate with: a plain GET


async def test_a_304_to_the_conditional_request_renews_the_stored_record():
    answer = FetchResult("http://a.test/p", Status.OK, 304, fetched_at=5000.0, headers=(
        ("Cache-Control", "max-age=7200"), ("ETag", '"v2"')))
    task = CrawlTask("http://s.test/2", 0.0, url="http://s.test/2", previous=STORED,
                     hops=(hop("http://s.test/2", 301, "http://a.test/p"), answer))
    out = await post_process(task)
    assert out.resolution is Resolution.REVALIDATED and out.page is None
    rec = out.record
    assert (rec.url, rec.title, rec.status, rec.http_status, rec.content_ref) == (
        "http://s.test/2", "Kept", Status.OK, 200, STORED.content_ref)
    assert (rec.fetched_at, rec.expires_at, rec.etag, rec.last_modified) == (5000.0, 5000.0 + 7200, '"v2"', 900.0)
    assert [r.url for r in rec.redirects] == ["http://s.test/2"]


@pytest.mark.parametrize("previous", [None, dataclasses.replace(STORED, final_url="http://a.test/other"),
                                      dataclasses.replace(STORED, etag="", last_modified=0.0)])
async def test_a_304_nobody_asked_for_is_an_http_error(previous):
    task = CrawlTask("http://a.test/p", 0.0, url="http://a.test/p", previous=previous,
                     hops=(hop("http://a.test/p", 304),))
    out = await post_process(task)
    assert out.resolution is Resolution.CRAWLED and out.record.status is Status.HTTP_ERROR


# --- composition --------------------------------------------------------------------------
def test_the_pipeline_prints_its_chain(tmp_path):
    settings = config.load(env={})

    async def nothing(*a):
        return None
    pipeline = build_pipeline(settings, metadata=None, content=None, fetch_hop=nothing, publish=nothing,
                              metrics=metrics.recorder("test"))
    assert repr(pipeline) == ("Decoder -> HonestyChecker -> Notifier -> SightingRecorder -> CrawlDecider -> "
                              "CrawlRecorder -> HonestySelector -> RedirectFollower -> FileReader -> "
                              "RelatedFetcher -> PostProcessor")


async def test_unexpected_exceptions_become_retryable_stage_failures():
    class Broken:
        async def __call__(self, task, next):
            raise KeyError("oops")
    with pytest.raises(StageFailed, match="Broken: KeyError") as info:
        await compose(Broken())("x")
    assert info.value.retryable


async def test_a_crawl_is_stored_before_the_next_sighting_may_look_for_it(store, tmp_path):
    from spiderduck.scheduler.stages.crawl_record import CrawlRecorder
    from spiderduck.scheduler.stages.sighting import SightingRecorder
    from spiderduck.stores.open import open_content_store
    real_content = await open_content_store(f"file://{tmp_path}/content")

    class SlowContent:           # logging the crawl takes a while, as it may on HDFS
        async def append(self, item):
            await asyncio.sleep(0.1)
            return await real_content.append(item)
    content = SlowContent()
    gate = asyncio.Event()
    seen_when_joined = []

    class Probe:                 # right outside the decider: what a joined sighting finds stored
        async def __call__(self, task, next):
            outcome = await next(task)
            if outcome.resolution is Resolution.JOINED:
                seen_when_joined.append(await store.get(outcome.task.url))
            return outcome

    class Crawl:
        async def __call__(self, task, next):
            await gate.wait()
            return dataclasses.replace(crawled(task), fetches=(
                FetchResult(task.url, Status.OK, 200, body=b"<title>T</title>"),))

    chain = compose(SightingRecorder(store), Probe(),
                    CrawlDecider(store, min_refresh_interval=30, serve_stale_for=0, freshness=windows(60, 10), clock=Clock()),
                    CrawlRecorder(store, content), Crawl())
    first = asyncio.create_task(chain(CrawlTask("http://viral.test/", 0.0)))
    joiner = asyncio.create_task(chain(CrawlTask("http://viral.test/", 0.0)))
    await asyncio.sleep(0)
    gate.set()
    assert (await joiner).resolution is Resolution.JOINED
    assert seen_when_joined and seen_when_joined[0] is not None    # stored before the join ended
    await first
    later = await chain(CrawlTask("http://viral.test/", 0.0))
    assert later.resolution is Resolution.FRESH and later.record.share_count == 3
    await real_content.close()
