"""One piece of work per key at a time: whoever asks for a key already in flight shares it.

    flights = SingleFlight()
    joined = key in flights                  # True: this call will share work already started
    value = await flights.run(key, work)     # work() is called only when `key` is not in flight

Input: a hashable key, and `work`, a function of no arguments returning an awaitable.
Output: the work's value, to every caller that asked for `key` while it ran.
Failure: the work's exception (cancellation included) is raised in every caller. A caller
cancelled while it waits leaves alone: the work goes on for the others, in a task of its
own, and is cancelled only when no caller is left, the last one waiting until it has
wound down. A key is free again once its work has ended (or been given up), so the next
call starts new work.
"""
from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, Generic, Hashable, TypeVar

__all__ = ["SingleFlight"]

T = TypeVar("T")


class _Flight:
    __slots__ = ("task", "callers")

    def __init__(self, task: asyncio.Future):
        self.task = task
        self.callers = 0


class SingleFlight(Generic[T]):
    def __init__(self) -> None:
        self._flights: dict[Hashable, _Flight] = {}

    def __contains__(self, key: Hashable) -> bool:
        return key in self._flights

    def __len__(self) -> int:
        return len(self._flights)

    async def run(self, key: Hashable, work: Callable[[], Awaitable[T]]) -> T:
        flight = self._flights.get(key)
        if flight is None:
            flight = self._flights[key] = _Flight(asyncio.ensure_future(work()))
            flight.task.add_done_callback(lambda task: self._ended(key, flight))
        flight.callers += 1
        try:
            return await asyncio.shield(flight.task)
        except asyncio.CancelledError:
            flight.callers -= 1
            if flight.callers == 0 and not flight.task.done():
                self._ended(key, flight)         # a later caller starts anew, not on this one
                flight.task.cancel()
                await asyncio.wait([flight.task])
            raise

    def _ended(self, key: Hashable, flight: _Flight) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]
        if flight.task.done() and not flight.task.cancelled():
            flight.task.exception()              # retrieved: callers re-raise it, no warning
