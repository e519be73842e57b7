"""EventStream: the UrlProcessed events a client follows (a core NATS subscription)."""
from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from google.protobuf.message import DecodeError

from spiderduck.client.names import PROCESSED_SUBJECT
from spiderduck.v1.events_pb2 import UrlProcessed

if TYPE_CHECKING:
    from spiderduck.client.aio import AsyncClient


class EventStream:
    """UrlProcessed events as they are published; from `AsyncClient.events()`.

        async with client.events() as events:
            ...                      # subscribed: whatever is processed from here on comes
            async for event in events:
                ...

    A message on the subject that is not a UrlProcessed is skipped.

    Events are received in the background as they come, into a buffer of those not yet read,
    so a wait for the next one may be given up (`asyncio.wait_for(anext(events), t)`,
    `asyncio.timeout`, a cancelled task) without losing any. The buffer holds at most
    `max_buffered` (10,000): should a reader fall that far behind, the oldest are dropped to
    make room, and `dropped` counts them."""

    max_buffered = 10_000

    def __init__(self, client: AsyncClient):
        self._client = client
        self._sub: Any = None
        self._subscribing: asyncio.Task[None] | None = None
        self._queue: asyncio.Queue[UrlProcessed | None] | None = None   # None in it: the end
        self._closed = False
        self.dropped = 0
        """How many events were dropped (the oldest) because `max_buffered` awaited reading."""

    async def subscribe(self) -> None:
        """Subscribe now (once): events published after this returns are all delivered."""
        if self._closed or self._sub is not None:
            return
        if self._subscribing is None:
            self._subscribing = asyncio.ensure_future(self._subscribe())
        subscribing = self._subscribing
        try:
            # Shielded: a caller that gives up (a timeout) leaves no half-made subscription.
            await asyncio.shield(subscribing)
        except asyncio.CancelledError:
            if not (self._closed and subscribing.cancelled()):
                raise                             # the caller's own cancellation
            # else closed while connecting: iteration ends
        finally:
            if subscribing.done() and self._subscribing is subscribing:
                self._subscribing = None          # done, or failed: a next call tries again

    async def _subscribe(self) -> None:
        nc = await self._client._nats()
        if self._closed:
            return
        if self._queue is None:
            self._queue = asyncio.Queue()
        self._sub = await nc.subscribe(PROCESSED_SUBJECT, cb=self._received)
        await nc.flush()          # the server knows the subscription: nothing is missed now

    async def _received(self, msg: Any) -> None:
        """nats-py's callback (on the subscription's own task): the event into the buffer."""
        if self._closed or self._queue is None:
            return
        event = UrlProcessed()
        try:
            event.ParseFromString(msg.data)
        except DecodeError:
            return
        while self._queue.qsize() >= self.max_buffered:
            self._queue.get_nowait()
            self.dropped += 1
        self._queue.put_nowait(event)

    async def close(self) -> None:
        """Unsubscribe; iteration ends, at once (a reader waiting for an event too)."""
        self._closed = True
        if self in self._client._streams:
            self._client._streams.remove(self)
        if self._queue is not None:
            while not self._queue.empty():      # what was not read will not be
                self._queue.get_nowait()
            self._queue.put_nowait(None)        # wakes a waiting reader: the end
        if self._subscribing is not None:     # still connecting (NATS down?): given up
            self._subscribing.cancel()
            await asyncio.wait([self._subscribing])
        if self._sub is not None:
            sub, self._sub = self._sub, None
            with contextlib.suppress(Exception):
                await sub.unsubscribe()

    async def __aenter__(self) -> EventStream:
        await self.subscribe()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> UrlProcessed:
        await self.subscribe()
        if self._closed or self._queue is None:
            raise StopAsyncIteration
        event = await self._queue.get()        # given up (cancelled), the event stays queued
        if event is None:
            self._queue.put_nowait(None)       # the end, for any other reader too
            raise StopAsyncIteration
        return event
