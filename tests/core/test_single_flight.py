"""spiderduck.core.single_flight: callers of one key share one piece of work, whatever happens to it."""
from __future__ import annotations

import asyncio
import gc

import pytest

from spiderduck.core.single_flight import SingleFlight


class Work:
    """A piece of work that waits for `release` and counts its starts, ends and cancellations."""

    def __init__(self, value="v", error: BaseException | None = None):
        self.value, self.error = value, error
        self.release = asyncio.Event()
        self.started = self.cancelled = 0
        self.unwound = False

    async def __call__(self):
        self.started += 1
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            await asyncio.sleep(0)          # winding down takes a moment
            self.unwound = True
            raise
        if self.error is not None:
            raise self.error
        return [self.value]                 # a new object: sharing is by identity


async def callers(flights, key, work, n):
    tasks = [asyncio.create_task(flights.run(key, work)) for _ in range(n)]
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    return tasks


async def test_callers_of_one_key_share_one_run_and_its_value():
    flights, work = SingleFlight(), Work()
    tasks = await callers(flights, "k", work, 5)
    assert "k" in flights and len(flights) == 1 and work.started == 1
    work.release.set()
    values = await asyncio.gather(*tasks)
    assert work.started == 1 and len({id(v) for v in values}) == 1 and values[0] == ["v"]


async def test_other_keys_run_on_their_own():
    flights, a, b = SingleFlight(), Work("a"), Work("b")
    ta, tb = await callers(flights, "a", a, 2), await callers(flights, "b", b, 2)
    assert len(flights) == 2 and a.started == b.started == 1
    b.release.set()
    assert await asyncio.gather(*tb) == [["b"], ["b"]] and "b" not in flights and "a" in flights
    a.release.set()
    assert await asyncio.gather(*ta) == [["a"], ["a"]]


async def test_the_key_is_free_once_the_work_ends_and_the_next_call_runs_anew():
    flights, work = SingleFlight(), Work()
    work.release.set()
    first = await flights.run("k", work)
    assert "k" not in flights and len(flights) == 0
    second = await flights.run("k", work)
    assert work.started == 2 and first is not second


async def test_an_exception_is_raised_in_every_caller_and_frees_the_key():
    flights, work = SingleFlight(), Work(error=ValueError("broken"))
    tasks = await callers(flights, "k", work, 3)
    work.release.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(r, ValueError) for r in results) and len({id(r) for r in results}) == 1
    assert "k" not in flights and work.started == 1


async def test_a_cancelled_caller_leaves_the_work_to_the_others():
    flights, work = SingleFlight(), Work()
    first, *others = await callers(flights, "k", work, 3)
    first.cancel()                          # the caller whose call started the work
    with pytest.raises(asyncio.CancelledError):
        await first
    assert work.cancelled == 0 and "k" in flights
    work.release.set()
    assert await asyncio.gather(*others) == [["v"], ["v"]]
    assert work.started == 1 and work.cancelled == 0


async def test_a_timeout_of_one_caller_leaves_the_work_to_the_others():
    flights, work = SingleFlight(), Work()
    waiting = asyncio.create_task(flights.run("k", work))
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.01):
            await flights.run("k", work)
    assert work.cancelled == 0
    work.release.set()
    assert await waiting == ["v"]


async def test_the_work_is_cancelled_when_its_last_caller_is_and_has_wound_down():
    flights, work = SingleFlight(), Work()
    tasks = await callers(flights, "k", work, 2)
    tasks[0].cancel()
    await asyncio.sleep(0)
    assert work.cancelled == 0
    tasks[1].cancel()
    for t in tasks:
        with pytest.raises(asyncio.CancelledError):
            await t
    assert work.cancelled == 1 and work.unwound        # done before the last caller returned
    assert "k" not in flights


async def test_a_call_after_the_last_caller_left_starts_anew_while_the_old_work_winds_down():
    flights, work = SingleFlight(), Work()
    (only,) = await callers(flights, "k", work, 1)
    only.cancel()
    await asyncio.sleep(0)                  # the cancelled work is still winding down
    assert "k" not in flights
    work.release.set()
    assert await flights.run("k", work) == ["v"] and work.started == 2
    with pytest.raises(asyncio.CancelledError):
        await only


async def test_a_failure_nobody_waits_for_is_not_reported_as_never_retrieved():
    reported = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    flights = SingleFlight()

    async def fails_when_cancelled():
        try:
            await asyncio.Event().wait()
        finally:
            raise RuntimeError("while winding down")
    (only,) = await callers(flights, "k", fails_when_cancelled, 1)
    only.cancel()
    with pytest.raises(asyncio.CancelledError):
        await only
    gc.collect()
    await asyncio.sleep(0)
    loop.set_exception_handler(None)
    assert reported == []
