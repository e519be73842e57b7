"""spiderduck.stores.coalesce: the keys callers ask for in one turn of the loop go as one request
(the Cassandra store's reads and shares; the real node's side is tests/stores/
test_cassandra_requests.py)."""
from __future__ import annotations

import asyncio
import operator

import pytest

from spiderduck.core.errors import StoreError
from spiderduck.stores.coalesce import Coalescer


class Origin:
    """A `send` that records each request's keys and answers key * 10 (None for key 0)."""

    def __init__(self, fail: BaseException | None = None):
        self.requests: list[dict] = []
        self.fail = fail
        self.gate: asyncio.Event | None = None

    async def __call__(self, asked: dict) -> dict:
        self.requests.append(dict(asked))
        if self.gate is not None:
            await self.gate.wait()
        if self.fail is not None:
            raise self.fail
        return {key: key * 10 for key in asked if key}


async def test_keys_asked_in_one_turn_go_as_one_request_and_each_caller_gets_its_own():
    origin = Origin()
    get = Coalescer(origin, most=32)
    answers = await asyncio.gather(*(get(n) for n in (1, 2, 3, 0)))
    assert answers == [10, 20, 30, None]               # 0: nothing found
    assert [list(r) for r in origin.requests] == [[1, 2, 3, 0]]


async def test_callers_in_different_turns_get_requests_of_their_own():
    origin = Origin()
    get = Coalescer(origin, most=32)
    assert await get(1) == 10
    assert await get(2) == 20
    assert [list(r) for r in origin.requests] == [[1], [2]]


async def test_a_key_asked_twice_is_sent_once_and_merged_arguments_are_summed():
    origin = Origin()
    share = Coalescer(origin, most=32, merge=operator.add)
    answers = await asyncio.gather(share(5, 1), share(5, 2), share(6, 1))
    assert answers == [50, 50, 60]
    assert origin.requests == [{5: 3, 6: 1}]
    plain = Coalescer(Origin(), most=32)              # no merge: the first argument stays
    await asyncio.gather(plain(7, "a"), plain(7, "b"))
    assert plain._send.requests == [{7: "a"}]


async def test_more_keys_than_most_make_several_requests_sent_together():
    origin = Origin()
    origin.gate = asyncio.Event()
    get = Coalescer(origin, most=8)
    calls = asyncio.gather(*(get(n) for n in range(1, 21)))
    while len(origin.requests) < 3:                    # all three in flight at once
        await asyncio.sleep(0)
    origin.gate.set()
    assert await calls == [n * 10 for n in range(1, 21)]
    assert [len(r) for r in origin.requests] == [8, 8, 4]


async def test_a_failed_request_fails_each_of_its_callers_and_the_next_turn_works():
    origin = Origin(fail=StoreError("node down", retryable=True))
    get = Coalescer(origin, most=32)
    results = await asyncio.gather(get(1), get(2), return_exceptions=True)
    assert all(isinstance(r, StoreError) and r.retryable for r in results)
    origin.fail = None
    assert await get(1) == 10


async def test_an_exception_answered_for_one_key_reaches_its_callers_alone():
    async def send(asked):
        return {key: (StoreError("refused", retryable=False) if key == 2 else key) for key in asked}
    get = Coalescer(send, most=32)
    results = await asyncio.gather(get(1), get(2), get(2), get(3), return_exceptions=True)
    assert results[0] == 1 and results[3] == 3
    assert all(isinstance(r, StoreError) for r in results[1:3])


async def test_a_cancelled_caller_does_not_disturb_the_others():
    origin = Origin()
    origin.gate = asyncio.Event()
    get = Coalescer(origin, most=32)
    first, second = asyncio.ensure_future(get(1)), asyncio.ensure_future(get(2))
    while not origin.requests:
        await asyncio.sleep(0)
    first.cancel()
    origin.gate.set()
    assert await second == 20
    with pytest.raises(asyncio.CancelledError):
        await first


@pytest.mark.parametrize("flying, requests", [(0, [[1], [2], [3], [4]]), (1, [[1], [2, 3, 4]])])
async def test_with_flying_keys_asked_one_by_one_wait_for_the_request_in_flight(flying, requests):
    # Callers that come one turn apart (tasks starting as others end): without `flying` each
    # has a request; with it they wait while one is in flight and go together when it ends.
    origin = Origin()
    origin.gate = asyncio.Event()
    get = Coalescer(origin, most=32, flying=flying)
    calls = [asyncio.ensure_future(get(1))]
    for key in (2, 3, 4):
        while len(origin.requests) < (1 if flying else key - 1):
            await asyncio.sleep(0)                     # the one before is on its way
        calls.append(asyncio.ensure_future(get(key)))
    origin.gate.set()
    assert await asyncio.gather(*calls) == [10, 20, 30, 40]
    assert [list(r) for r in origin.requests] == requests


async def test_with_flying_a_caller_alone_is_sent_at_once():
    origin = Origin()
    get = Coalescer(origin, most=32, flying=1)
    for key in (1, 2, 3):
        assert await get(key) == key * 10
    assert [list(r) for r in origin.requests] == [[1], [2], [3]]


async def test_a_request_cancelled_before_it_ran_cancels_its_callers_instead_of_leaving_them():
    origin = Origin()
    get = Coalescer(origin, most=32)
    call = asyncio.ensure_future(get(1))
    while not get._sending:                            # the request's task made, not yet run
        await asyncio.sleep(0)
    for task in get._sending:
        task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(call, 5)
    assert origin.requests == []
    assert await get(2) == 20                          # and the next one goes


def test_a_batch_of_none_is_refused():
    with pytest.raises(ValueError):
        Coalescer(Origin(), most=0)
    with pytest.raises(ValueError):
        Coalescer(Origin(), most=1, flying=-1)
