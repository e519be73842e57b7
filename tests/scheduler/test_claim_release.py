"""The decider's claim release, off the outcome's path, on a real nats-server (JetStream KV) and a
real SQLite store: the outcome is answered while the claim's delete is still pending, `close`
awaits the deletes in flight (at most release_wait), and another scheduler waiting on the claim
joins the crawl's record once the key is gone.

The delete is held back by wrapping the Claims' own `kv.delete` to wait on an asyncio.Event: NATS
stays real, only the moment our code sends the delete is chosen by the test."""
from __future__ import annotations

import asyncio
import time

import pytest
from nats.js.errors import KeyNotFoundError

from spiderduck.bus.claims import Claims, claim_key
from spiderduck.core import config
from spiderduck.core.freshness import Freshness
from spiderduck.core.record import UrlRecord
from spiderduck.core.status import Status
from spiderduck.scheduler.stages.crawl_decision import CrawlDecider
from spiderduck.scheduler.storing import record_key
from spiderduck.scheduler.task import CrawlTask, Outcome, Resolution
from support.claim_schedulers import claim_schedulers
from support.scheduler_stores import stores  # noqa: F401 -- the fixture

TTL = 2.0
URL = "http://claimed.test/"
DEFAULTS = config.load(env={})


@pytest.fixture
def store(stores):
    return stores[0]


@pytest.fixture
async def schedulers(nats_server):
    """Two schedulers' Claims, each on its own NATS connection, one bucket."""
    async with claim_schedulers(nats_server.url, TTL) as claims:
        yield claims


class HeldDelete:
    """`claims.kv.delete`, sent only once `go` is set; `asked` is set when our code calls it,
    `done` once the server acknowledged it."""

    def __init__(self, claims: Claims):
        self.asked, self.go, self.done = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self._delete = claims.kv.delete
        claims.kv.delete = self

    async def __call__(self, *args, **kwargs):
        self.asked.set()
        await self.go.wait()
        deleted = await self._delete(*args, **kwargs)
        self.done.set()
        return deleted


def watched(claims: Claims) -> asyncio.Event:
    """Set when `claims` starts watching a key (a sighting waiting on another's claim)."""
    watching, watch = asyncio.Event(), claims.kv.watch

    async def watch_(*args, **kwargs):
        watcher = await watch(*args, **kwargs)
        watching.set()
        return watcher
    claims.kv.watch = watch_
    return watching


def decider(store, claims: Claims, **kwargs) -> CrawlDecider:
    freshness = Freshness(60, 10, min_recrawl_after=DEFAULTS.min_recrawl_after,
                          max_recrawl_after=DEFAULTS.max_recrawl_after)
    return CrawlDecider(store, freshness=freshness, min_refresh_interval=30, serve_stale_for=0,
                        claims=claims, **kwargs)


def crawl(store, started: asyncio.Event | None = None, go: asyncio.Event | None = None):
    """The stages inside: store the crawl's record (as the Crawl Recorder does), answer CRAWLED."""
    async def next_(task: CrawlTask) -> Outcome:
        if started is not None:
            started.set()
        if go is not None:
            await go.wait()
        record = UrlRecord(url=task.submitted, status=Status.OK, final_url=task.url, title="T",
                           fetched_at=time.time())
        await store.put(record_key(record), record, ())
        return Outcome(task, record, Resolution.CRAWLED, key=record_key(record))
    return next_


async def holder(claims: Claims) -> bytes | None:
    """Who holds URL's claim now (the key's value), None when it is deleted or was never there."""
    try:
        entry = await claims.kv.get(claim_key(URL))
    except KeyNotFoundError:       # KeyDeletedError too
        return None
    return entry.value


async def test_the_outcome_is_answered_before_the_claims_delete_is_acknowledged(store, schedulers):
    a, b = schedulers
    held = HeldDelete(a)
    deciding = decider(store, a)
    out = await asyncio.wait_for(deciding(CrawlTask(URL, 0.0), crawl(store)), 10)
    assert out.resolution is Resolution.CRAWLED and not held.done.is_set()
    await asyncio.wait_for(held.asked.wait(), 5)           # the delete is under way ...
    assert await holder(b) == b"scheduler-0"               # ... and not done: the key still held
    waiting = asyncio.create_task(b.wait(URL))
    held.go.set()
    # Woken by the delete (None), not taken over as stale (a Claim, after TTL).
    assert await asyncio.wait_for(waiting, TTL * 3) is None
    assert await holder(b) is None
    await deciding.close()


async def test_close_awaits_the_deletes_in_flight(store, schedulers):
    a, b = schedulers
    held = HeldDelete(a)
    deciding = decider(store, a, release_wait=10)
    await asyncio.wait_for(deciding(CrawlTask(URL, 0.0), crawl(store)), 10)
    await asyncio.wait_for(held.asked.wait(), 5)
    closing = asyncio.create_task(deciding.close())
    assert await holder(b) == b"scheduler-0" and not closing.done()
    held.go.set()
    await asyncio.wait_for(closing, 5)
    assert held.done.is_set()                              # acknowledged by the time close returned
    assert await holder(b) is None


async def test_close_gives_up_on_a_delete_after_release_wait(store, schedulers):
    a, b = schedulers
    held = HeldDelete(a)                                   # never let go: a NATS that hangs
    deciding = decider(store, a, release_wait=0.2)
    await asyncio.wait_for(deciding(CrawlTask(URL, 0.0), crawl(store)), 10)
    started = time.monotonic()
    await asyncio.wait_for(deciding.close(), 5)
    assert time.monotonic() - started < 2 and not held.done.is_set()
    assert await holder(b) == b"scheduler-0"               # left to lapse within claim_ttl


async def test_a_scheduler_waiting_on_the_claim_joins_the_crawls_record(store, schedulers):
    a, b = schedulers
    started, go = asyncio.Event(), asyncio.Event()
    first, second = decider(store, a), decider(store, b)
    watching = watched(b)
    crawling = asyncio.create_task(first(CrawlTask(URL, 0.0), crawl(store, started, go)))
    await asyncio.wait_for(started.wait(), 10)             # a holds the claim, crawling

    async def never(task):
        raise AssertionError("the second scheduler crawled a URL the first was crawling")
    joining = asyncio.create_task(second(CrawlTask(URL, 0.0), never))
    await asyncio.wait_for(watching.wait(), 10)            # b found the claim held: waits on it
    assert not joining.done()
    go.set()
    crawled = await asyncio.wait_for(crawling, 10)
    joined = await asyncio.wait_for(joining, TTL / 2 + 5)
    assert crawled.resolution is Resolution.CRAWLED and joined.resolution is Resolution.JOINED
    assert joined.record.fetched_at == crawled.record.fetched_at
    await first.close()
    await second.close()
    assert await holder(b) is None
