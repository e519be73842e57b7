"""Driver answers to the event loop, one wake-up per burst (CassandraMetadataStore._execute)."""
from __future__ import annotations

import asyncio
import collections


class Handoff:
    """Driver answers to the event loop: the driver's thread queues each (future, rows, error)
    and wakes the loop once per burst (`call_soon_threadsafe` writes to the loop's wake-up pipe;
    once per answer it was a system call and a loop iteration each)."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self._ready: collections.deque = collections.deque()
        self._woken = False

    def ok(self, rows, future) -> None:               # on a driver thread
        self._ready.append((future, rows, None))
        self._wake()

    def error(self, exc, future) -> None:             # on a driver thread
        self._ready.append((future, None, exc))
        self._wake()

    def _wake(self) -> None:
        if not self._woken:
            self._woken = True
            try:
                self.loop.call_soon_threadsafe(self._drain)
            except RuntimeError:                      # the loop is gone
                pass

    def _drain(self) -> None:
        # Cleared before popping: an answer queued after the last pop sees it clear and wakes
        # the loop again; one queued before is popped here.
        self._woken = False
        ready = self._ready
        while ready:
            future, rows, exc = ready.popleft()
            if future.done():                         # cancelled meanwhile
                continue
            if exc is not None:
                future.set_exception(exc)
            else:
                future.set_result(rows)
