"""The slot mechanism with a manual clock: waiters re-plan when a hold, pause, rate or halt arrives."""
from __future__ import annotations

import asyncio
import dataclasses

import pytest

from spiderduck.core.config import FetcherSettings
from spiderduck.core.errors import FetcherBusy
from spiderduck.core.fetch import FetchResult
from spiderduck.core.status import Status
from spiderduck.fetcher.domain_health import HealthPolicy
from spiderduck.fetcher.pacing import PacingPolicy
from spiderduck.fetcher.politeness import DomainHalted, Politeness

DEFAULTS = FetcherSettings()      # a fetcher started with no config file


class ManualClock:
    """Time moves only when the test says so; sleepers wake when their time has come."""

    def __init__(self):
        self.now = 0.0
        self._sleepers: list[tuple[float, asyncio.Future]] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        entry = (self.now + seconds, asyncio.get_running_loop().create_future())
        self._sleepers.append(entry)
        try:
            await entry[1]
        finally:
            self._sleepers.remove(entry)

    async def advance(self, seconds: float) -> None:
        self.now += seconds
        for when, future in list(self._sleepers):
            if when <= self.now + 1e-9 and not future.done():
                future.set_result(None)
        await settle()


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


def polite(clock: ManualClock, **kw) -> Politeness:
    """The slots of the default fetcher settings, no jitter; `health` and `pacing` change
    their policies' values, the rest Politeness's."""
    health = dataclasses.replace(HealthPolicy.from_settings(DEFAULTS), **kw.pop("health", {}))
    pacing = dataclasses.replace(PacingPolicy.from_settings(DEFAULTS), **{"backoff_jitter": 0.0, **kw.pop("pacing", {})})
    return Politeness(**{"default_rate": 1.0, "queue_size": DEFAULTS.queue_size, **kw}, clock=clock,
                      sleep=clock.sleep, pacing=pacing, health=health, rng=lambda: 0.0)


def answer(code: int, **headers) -> FetchResult:
    return FetchResult(url="http://d.test/", status=Status.OK, http_status=code,
                       headers=tuple((k.replace("_", "-"), v) for k, v in headers.items()))


async def test_a_retry_after_that_arrives_while_a_request_waits_moves_its_start():
    clock = ManualClock()
    slot = polite(clock).slot("d.test")
    await slot.turn()                                  # starts at 0; the next may start at 1
    waiter = asyncio.create_task(slot.turn())
    await settle()
    slot.observe(answer(503, retry_after="5"))         # the first answer: come back in 5 s
    await clock.advance(1.0)
    assert not waiter.done()
    await clock.advance(3.9)
    assert not waiter.done()
    await clock.advance(0.1)
    assert waiter.done() and slot.last_start == 5.0


async def test_a_new_rate_applies_to_the_request_already_waiting():
    clock = ManualClock()
    p = polite(clock)
    slot = p.slot("d.test")
    await slot.turn()
    waiter = asyncio.create_task(slot.turn())
    await settle()
    p.set_rate("d.test", 10.0)
    await clock.advance(0.1)
    assert waiter.done() and slot.last_start == pytest.approx(0.1)
    assert p.infos()[0].rate_source == "operator"


async def test_a_crawl_delay_lengthens_the_spacing_of_waiting_requests():
    clock = ManualClock()
    slot = polite(clock, pacing={"max_crawl_delay": 3}).slot("d.test")
    await slot.turn()
    waiter = asyncio.create_task(slot.turn())
    await settle()
    slot.tell_crawl_delay("www.d.test", 10)            # capped at 3
    await clock.advance(2.9)
    assert not waiter.done()
    await clock.advance(0.1)
    assert waiter.done() and slot.interval == 3


async def test_paused_requests_wait_for_the_pause_to_end_or_a_resume():
    clock = ManualClock()
    p = polite(clock)
    p.pause("d.test", 30)
    slot = p.slot("d.test")
    waiters = [asyncio.create_task(slot.turn()) for _ in range(2)]
    await clock.advance(29.9)
    assert not any(w.done() for w in waiters) and slot.waiting == 2
    await clock.advance(0.1)
    assert waiters[0].done() and not waiters[1].done()     # then one per second again
    p.pause("d.test", 100)
    await clock.advance(1.0)
    assert not waiters[1].done()
    p.resume("d.test")
    await settle()
    assert waiters[1].done() and slot.last_start == 31.0


async def test_a_halt_fails_waiting_and_new_requests_at_once():
    clock = ManualClock()
    p = polite(clock, queue_size=2, health={"halt_after": 2, "pause_ratio": 1.0})
    slot = p.slot("d.test")
    await slot.turn()
    waiters = [asyncio.create_task(slot.turn()) for _ in range(2)]
    await settle()
    with pytest.raises(FetcherBusy):
        await slot.turn()
    slot.observe(answer(500))
    slot.observe(answer(500))                          # two in a row: halted
    await settle()                                     # no time passes
    for w in waiters:
        with pytest.raises(DomainHalted, match="2 failures in a row"):
            w.result()
    with pytest.raises(DomainHalted, match="spiderduck domains resume d.test"):
        await slot.turn()                              # not FetcherBusy: the queue is empty now
    assert p.infos()[0].state == "halted"
    p.resume("d.test")
    await clock.advance(10)
    await slot.turn()                                  # back in business, back-off forgotten
    assert slot.pacing.failures == 0


async def test_back_off_holds_the_next_start_and_a_success_resets_it():
    clock = ManualClock()
    slot = polite(clock, pacing={"backoff_base": 4, "backoff_factor": 2}).slot("d.test")
    await slot.turn()
    slot.observe(FetchResult(url="http://d.test/", status=Status.CONNECTION_ERROR))
    waiter = asyncio.create_task(slot.turn())
    await clock.advance(3.9)
    assert not waiter.done()
    await clock.advance(0.1)
    assert waiter.done()
    slot.observe(answer(200))
    assert slot.interval == 1.0 and slot.pacing.held(clock.now) == 0


async def test_infos_describe_each_domain():
    clock = ManualClock()
    p = polite(clock, rate_overrides={"o.test": 4.0})
    slot = p.slot("d.test")
    await slot.turn()
    slot.observe(answer(200))
    slot.observe(answer(503))
    p.slot("o.test")
    d, o = p.infos()
    assert (d.domain, d.state, d.rate_source, d.requests, d.errors, d.error_rate) == \
        ("d.test", "active", "default", 2, 1, 0.5)
    assert d.status_counts == {"200": 1, "503": 1} and d.consecutive_failures == 1
    assert d.hold > 0 and "back-off" in d.hold_reason
    assert (o.rate, o.rate_source, o.interval) == (4.0, "config", 0.25)
    assert [i.domain for i in p.infos(["o.test", "nope.test"])] == ["o.test"]
    with pytest.raises(ValueError):
        p.set_rate("d.test", 0)
    with pytest.raises(ValueError):
        p.pause("d.test", -1)


async def test_a_request_that_could_not_start_before_its_deadline_is_refused_at_once():
    clock = ManualClock()
    slot = polite(clock).slot("d.test")
    slot.check_wait(0.5)                               # an idle domain: the turn is now
    await slot.turn()
    waiter = asyncio.create_task(slot.turn())          # one waiting: the next turn is 1 s away,
    await settle()                                     # the one after 2 s
    assert slot.expected_wait() == pytest.approx(2.0)
    slot.check_wait(2.5)
    with pytest.raises(FetcherBusy, match="2.0s away .* deadline of 1.5s"):
        slot.check_wait(1.5)
    slot.observe(answer(503, retry_after="30"))        # a hold: nothing starts for 30 s
    with pytest.raises(FetcherBusy):
        slot.check_wait(10.0)
    slot.check_wait(0)                                 # no deadline: no limit
    waiter.cancel()
