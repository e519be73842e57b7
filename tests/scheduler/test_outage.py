"""An outage (a store or NATS failing) is not the URL's fault: against a real nats-server and the
real consumer, a message that meets one is retried in place, using up none of its deliveries,
and is never dead-lettered for it; failures that are the URL's keep scheduler.max_deliver."""
from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from spiderduck.bus import streams as bus
from spiderduck.core.config import SchedulerSettings
from spiderduck.core.errors import BusError, ConfigError, StoreError
from spiderduck.scheduler.consumer import Consumer, Outage
from spiderduck.scheduler.stages.chain import compose
from spiderduck.scheduler.stages.submission import Decoder

SETTINGS = SchedulerSettings(max_deliver=2, retry_delay=0.05, ack_wait=30.0, busy_retry=0.05,
                             outage_backoff_base=0.01, outage_backoff_max=0.05)


class Flaky:
    """The stage after the Decoder: raises `errors` in turn (one per call), then answers."""

    def __init__(self, *errors: BaseException | None, forever: BaseException | None = None):
        self.errors = list(errors)
        self.forever = forever
        self.calls: list[tuple[str, int]] = []      # (URL, the message's delivery) per call

    async def __call__(self, task, next):
        self.calls.append((task.submitted, task.attempt))
        if self.errors:
            error = self.errors.pop(0)
            if error is not None:
                raise error
        elif self.forever is not None:
            raise self.forever
        return task.submitted


async def until(condition, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


def start(nc, js, stage, settings=SETTINGS):
    stop = asyncio.Event()
    consumer = Consumer(nc, js, compose(Decoder(), stage), settings)
    return consumer, stop, asyncio.create_task(consumer.run(stop))


async def run_until(nc, js, stage, urls: list[bytes], done, settings=SETTINGS) -> Consumer:
    """Run a consumer over `stage`, publish `urls`, wait until done(stats), stop it."""
    consumer, stop, task = start(nc, js, stage, settings)
    for url in urls:
        await js.publish(bus.SUBMIT_SUBJECT, url)
    try:
        await until(lambda: done(consumer.stats))
    finally:
        stop.set()
        await task
    return consumer


async def dead_letters(js) -> list[dict]:
    info = await js.stream_info(bus.DEAD_STREAM)
    if not info.state.messages:
        return []
    sub = await js.subscribe(bus.DEAD_SUBJECT, ordered_consumer=True)
    letters = [json.loads((await sub.next_msg(timeout=5)).data) for _ in range(info.state.messages)]
    await sub.unsubscribe()
    return letters


async def test_an_outage_longer_than_all_deliveries_costs_the_url_nothing(bus_js):
    """Ten store and bus failures in a row (five times max_deliver): one delivery, then done."""
    nc, js = bus_js
    failures = [StoreError("cassandra read: NoHostAvailable"), BusError("cannot publish")] * 5
    stage = Flaky(*failures)
    consumer = await run_until(nc, js, stage, [b"http://a.test/"], lambda s: s["acked"] == 1)
    assert stage.calls == [("http://a.test/", 1)] * 11       # every try on the first delivery
    assert consumer.stats["outage_retried"] == 10
    assert consumer.stats["nacked"] == consumer.stats["dead_lettered"] == 0
    assert await dead_letters(js) == []


async def test_failures_of_the_url_still_end_after_max_deliver(bus_js):
    nc, js = bus_js
    stage = Flaky(forever=RuntimeError("this page always breaks"))
    consumer = await run_until(nc, js, stage, [b"http://poison.test/", b"http://refused.test/"],
                               lambda s: s["dead_lettered"] == 2)
    assert sorted(stage.calls) == [("http://poison.test/", 1), ("http://poison.test/", 2),
                                   ("http://refused.test/", 1), ("http://refused.test/", 2)]
    assert consumer.stats["outage_retried"] == 0
    assert len(await dead_letters(js)) == 2


async def test_a_run_that_hangs_is_cut_at_url_timeout_and_fails_that_delivery(bus_js):
    """A hang (a lost wake-up, a peer that never answers) must not hold a URL forever while the
    heartbeat keeps its message in progress: each delivery is cut at scheduler.url_timeout."""
    nc, js = bus_js

    class Hangs(Flaky):
        async def __call__(self, task, next):
            self.calls.append((task.submitted, task.attempt))
            await asyncio.Event().wait()

    stage = Hangs()
    settings = dataclasses.replace(SETTINGS, hop_timeout=0.1, url_timeout=0.3)
    consumer = await run_until(nc, js, stage, [b"http://hangs.test/"],
                               lambda s: s["dead_lettered"] == 1, settings)
    assert stage.calls == [("http://hangs.test/", 1), ("http://hangs.test/", 2)]
    assert consumer.stats["nacked"] == 1 and consumer.stats["outage_retried"] == 0
    [letter] = await dead_letters(js)
    assert "url_timeout" in letter["reason"]


def test_url_timeout_is_no_shorter_than_a_hop():
    with pytest.raises(ConfigError, match="url_timeout"):
        SchedulerSettings(hop_timeout=120.0, url_timeout=60.0)
    assert SchedulerSettings(url_timeout=0).url_timeout == 0          # off


async def test_a_store_error_that_is_not_retryable_is_dead_lettered_at_once(bus_js):
    nc, js = bus_js
    stage = Flaky(forever=StoreError("cassandra write: InvalidRequest", retryable=False))
    await run_until(nc, js, stage, [b"http://a.test/"], lambda s: s["dead_lettered"] == 1)
    assert stage.calls == [("http://a.test/", 1)]
    [letter] = await dead_letters(js)
    assert "InvalidRequest" in letter["reason"]


async def test_past_outage_retry_for_a_delivery_counts_and_the_last_is_dead_lettered(bus_js):
    """A "store" failure that never clears (really the URL's, say) still ends."""
    nc, js = bus_js
    settings = SchedulerSettings(**{**SETTINGS.__dict__, "outage_retry_for": 0.2})
    stage = Flaky(forever=StoreError("the record is refused, every time"))
    consumer = await run_until(nc, js, stage, [b"http://a.test/"],
                               lambda s: s["dead_lettered"] == 1, settings)
    deliveries = [delivery for _, delivery in stage.calls]
    assert deliveries == sorted(deliveries) and set(deliveries) == {1, 2}
    assert deliveries.count(1) > 1 and deliveries.count(2) > 1     # retried in place on each
    assert consumer.stats["nacked"] == 1
    [letter] = await dead_letters(js)
    assert letter["delivery"] == 2 and "refused, every time" in letter["reason"]


async def test_a_stop_during_an_outage_hands_the_message_back_at_once(bus_js):
    nc, js = bus_js
    settings = SchedulerSettings(**{**SETTINGS.__dict__, "outage_backoff_base": 60.0,
                                    "outage_backoff_max": 60.0, "max_deliver": 1})
    stage = Flaky(forever=StoreError("down"))
    consumer, stop, task = start(nc, js, stage, settings)
    await js.publish(bus.SUBMIT_SUBJECT, b"http://a.test/")
    await until(lambda: consumer.stats["outage_retried"] == 1)
    stop.set()
    await asyncio.wait_for(task, 10)          # not the 60 s the backoff would wait
    assert await dead_letters(js) == []
    # The next scheduler gets it, though that was its last delivery (a fresh copy was queued).
    healed = Flaky()
    await run_until(nc, js, healed, [], lambda s: s["acked"] == 1, settings)
    assert healed.calls == [("http://a.test/", 1)]


def test_waits_double_from_the_base_up_to_the_cap_with_jitter_below():
    """Which failures are an outage's, and for how long, is the policy's (test_delivery_policy.py);
    Outage keeps the waits and since when this delivery has met one."""
    clock = [100.0]
    outage = Outage(SchedulerSettings(outage_backoff_base=0.5, outage_backoff_max=4.0,
                                      outage_retry_for=10.0),
                    clock=lambda: clock[0], rand=lambda: 1.0)
    assert outage.lasted == 0.0                # no outage met yet
    assert [outage.next_wait() for _ in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert Outage(SchedulerSettings(outage_backoff_base=2.0), rand=lambda: 0.0).next_wait() == 1.0
    clock[0] = 109.9
    assert outage.lasted == pytest.approx(9.9)  # since the first retry, not the latest
    outage.next_wait()
    assert outage.lasted == pytest.approx(9.9)


def test_backoff_settings_must_be_positive():
    with pytest.raises(ConfigError, match="outage_backoff_base"):
        SchedulerSettings(outage_backoff_base=0)
    with pytest.raises(ConfigError, match="outage_backoff_max"):
        SchedulerSettings(outage_backoff_max=0)
