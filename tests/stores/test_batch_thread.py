"""BatchThread: calls run in order on one thread, fail alone, and never hang after stop."""
from __future__ import annotations

import asyncio
import threading

import pytest

from spiderduck.stores.batch_thread import BatchThread


async def test_calls_run_in_order_on_one_thread():
    seen: list[tuple[int, str]] = []
    worker = BatchThread("t", lambda: seen)
    await worker.started()

    def note(resource, n):
        resource.append((n, threading.current_thread().name))
        return n * 2

    assert await asyncio.gather(*(worker.call(note, n) for n in range(50))) == [n * 2 for n in range(50)]
    assert [n for n, _ in seen] == list(range(50)) and {name for _, name in seen} == {"t"}
    await worker.stop()


async def test_a_failing_call_fails_alone():
    worker = BatchThread("t", lambda: None)

    def boom(_):
        raise KeyError("x")

    results = await asyncio.gather(worker.call(lambda _: 1), worker.call(boom), worker.call(lambda _: 3),
                                   return_exceptions=True)
    assert results[0] == 1 and isinstance(results[1], KeyError) and results[2] == 3
    await worker.stop()


async def test_a_resource_that_cannot_open_is_reported():
    def cannot():
        raise OSError("no such disk")

    worker = BatchThread("t", cannot)
    with pytest.raises(OSError, match="no such disk"):
        await worker.started()
    with pytest.raises(RuntimeError):
        await asyncio.wait_for(worker.call(lambda _: 1), 2)


async def test_after_stop_a_call_raises_instead_of_waiting_forever():
    closed = []
    worker = BatchThread("t", lambda: "r", close_resource=closed.append)
    assert await worker.call(lambda r: r) == "r"
    await worker.stop()
    await worker.stop()                        # twice: nothing
    assert closed == ["r"]
    with pytest.raises(RuntimeError):
        await asyncio.wait_for(worker.call(lambda r: r), 2)
