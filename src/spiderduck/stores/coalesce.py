"""Keys asked for in one turn of the event loop, answered by one request (the Cassandra store's
reads and share counts, spiderduck.stores.cassandra_batches).

A caller's key is queued and the batch goes at the loop's next turn: no timer. Callers resumed
by one burst of answers (the store's Handoff wakes the loop once per burst) ask in the same turn,
and alone a call costs one `call_soon` more than a direct request. With `flying`, keys also wait
while that many of this coalescer's requests are in flight, and go together when one of them
ends (group commit): callers that arrive one by one (the decider's read before each fetch, as
tasks start when others end) share requests under load, and nothing waits when the store keeps
up. A wait lasts at most one request's round trip. A key asked for twice in a turn is sent once; both
callers get its answer. At most `most` keys go in one request: more make several, sent
concurrently. A request that fails fails every caller in it with its error (each caller decides,
as it would for a request of its own), unless `send` answers a key with an exception, which
goes to that key's callers alone; a caller cancelled meanwhile is skipped.
"""
from __future__ import annotations

import asyncio
import functools
from typing import Awaitable, Callable, Generic, Hashable, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Coalescer(Generic[K, V]):
    """`await coalescer(key)`: the value `send(keys)` answers for the key (None when absent).

    `send` takes the distinct keys of one request (in the order first asked) and returns their
    values by key; `merge`, when given, combines the arguments of a key asked for twice in a
    turn (a share count: the two increments summed), else the first is kept.
    """

    def __init__(self, send: Callable[[dict[K, object]], Awaitable[dict[K, V]]], *, most: int,
                 merge: Callable[[object, object], object] | None = None, flying: int = 0):
        if most < 1 or flying < 0:
            raise ValueError("most must be at least 1, flying at least 0")
        self._send = send
        self._most = most
        self._merge = merge
        self._flying = flying or float("inf")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queued: dict[K, tuple[object, list[asyncio.Future]]] = {}
        self._sending: set[asyncio.Task] = set()
        self._flush_soon = False

    def __call__(self, key: K, argument: object = None) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:                    # a store used from another loop (tests)
            self._loop, self._queued, self._sending, self._flush_soon = loop, {}, set(), False
        future = loop.create_future()
        queued = self._queued.get(key)
        if queued is None:
            self._queued[key] = (argument, [future])
            if not self._flush_soon and len(self._sending) < self._flying:
                self._flush_soon = True
                loop.call_soon(self._flush)
        else:
            if self._merge is not None:
                self._queued[key] = (self._merge(queued[0], argument), queued[1])
            queued[1].append(future)
        return future

    def _flush(self) -> None:
        self._flush_soon = False
        queued, self._queued = self._queued, {}
        keys = list(queued)
        for start in range(0, len(keys), self._most):
            part = {key: queued[key] for key in keys[start:start + self._most]}
            task = self._loop.create_task(self._answer(part))
            self._sending.add(task)
            task.add_done_callback(functools.partial(self._sent, part))

    def _sent(self, part: dict, task: asyncio.Task) -> None:
        self._sending.discard(task)
        for _, futures in part.values():          # a task cancelled before it ran answered none
            for future in futures:
                if not future.done():
                    future.cancel()
        if self._queued and not self._flush_soon and task.get_loop() is self._loop:
            self._flush_soon = True                   # the keys that waited for this one
            self._loop.call_soon(self._flush)

    async def _answer(self, part: dict[K, tuple[object, list[asyncio.Future]]]) -> None:
        try:
            found = await self._send({key: argument for key, (argument, _) in part.items()})
        except BaseException as exc:                  # noqa: BLE001 - every caller gets it
            for _, futures in part.values():
                for future in futures:
                    if future.done():
                        continue
                    if isinstance(exc, asyncio.CancelledError):
                        future.cancel()
                    else:
                        future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        for key, (_, futures) in part.items():
            value = found.get(key)
            for future in futures:
                if future.done():
                    continue
                if isinstance(value, BaseException):
                    future.set_exception(value)
                else:
                    future.set_result(value)
