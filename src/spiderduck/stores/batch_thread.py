"""A thread that owns one resource (a database connection) and runs calls on it in batches.

    writer = BatchThread("sqlite-writer", open_connection, batch=transaction)
    result = await writer.call(insert, key, value)

Calls queued while the thread was busy run together as one batch, inside `batch(resource)` (a
transaction, say), each call in `each(resource)` (a savepoint, so one failed call undoes only
itself). Results go back to the event loop with one wake-up per batch, not one per call: under
load that is most of what a thread hop costs. Without a `batch`, calls simply run in order.
"""
from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from typing import Any, Callable, ContextManager

_STOP = object()


def _settle(results: list[tuple[asyncio.Future, bool, Any]]) -> None:
    for future, ok, value in results:
        if future.done():                 # the caller gave up (cancelled)
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)


class BatchThread:
    def __init__(self, name: str, open_resource: Callable[[], Any], *,
                 batch: Callable[[Any], ContextManager] | None = None,
                 each: Callable[[Any], ContextManager] | None = None,
                 close_resource: Callable[[Any], None] | None = None, max_batch: int = 256):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._batch = batch
        self._each = each
        self._max_batch = max_batch
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True,
                                        args=(open_resource, close_resource))
        self._thread.start()

    async def started(self) -> None:
        """Wait until the resource is open; raise what opening it raised."""
        await asyncio.get_running_loop().run_in_executor(None, self._ready.wait)
        if self._failure is not None:
            raise self._failure

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(resource, *args) on the thread, in the order calls were made. Raises
        RuntimeError once the thread is stopped."""
        if self._stopped or not self._thread.is_alive() and self._ready.is_set():
            raise RuntimeError(f"{self._thread.name} is stopped")
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._queue.put((fn, args, future, loop))
        return await future

    async def stop(self) -> None:
        """Run what is queued, close the resource and end the thread (again: nothing)."""
        if self._stopped:
            return
        self._stopped = True
        self._queue.put(_STOP)
        await asyncio.get_running_loop().run_in_executor(None, self._thread.join)

    def _run(self, open_resource, close_resource) -> None:
        try:
            resource = open_resource()
        except BaseException as exc:   # noqa: BLE001 -- reported by started()
            self._failure = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            while True:
                item = self._queue.get()
                if item is _STOP:
                    return
                batch = [item]
                stop = False
                while len(batch) < self._max_batch:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is _STOP:
                        stop = True
                        break
                    batch.append(item)
                self._run_batch(resource, batch)
                if stop:
                    return
        finally:
            if close_resource is not None:
                with contextlib.suppress(Exception):
                    close_resource(resource)

    def _run_batch(self, resource, batch: list) -> None:
        results: list[tuple[asyncio.Future, bool, Any]] = []
        try:
            with self._batch(resource) if self._batch else contextlib.nullcontext():
                for fn, args, future, loop in batch:
                    try:
                        with self._each(resource) if self._each else contextlib.nullcontext():
                            value = fn(resource, *args)
                        results.append((future, True, value))
                    except Exception as exc:   # noqa: BLE001 -- that call's answer
                        results.append((future, False, exc))
        except Exception as exc:   # noqa: BLE001 -- the batch as a whole failed (commit)
            results = [(future, False, exc) for _, _, future, _ in batch]
        by_loop: dict[Any, list] = {}
        for (future, ok, value), (_, _, _, loop) in zip(results, batch):
            by_loop.setdefault(loop, []).append((future, ok, value))
        for loop, settled in by_loop.items():
            with contextlib.suppress(RuntimeError):      # that loop is closed: nobody waits
                loop.call_soon_threadsafe(_settle, settled)
