"""The latest processed URLs: the end of SPIDERDUCK_EVENTS, then each new UrlProcessed, kept as
short summaries and handed to the pages' live lists (server-sent events).

The feed reads the stream with an ordered consumer from `size` events back, so the lookup page
lists recent URLs even just after a restart. A listener that falls behind (a full queue) is
dropped, never waited for; at most `max_listeners` listen at once."""
from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
from collections import deque
from typing import AsyncIterator

from google.protobuf.message import DecodeError
from nats.js.api import ConsumerConfig, DeliverPolicy

from spiderduck.bus import streams as bus
from spiderduck.core.errors import SpiderDuckError
from spiderduck.v1 import events_pb2, metadata_pb2

log = logging.getLogger("spiderduck.web")
LISTENER_QUEUE = 64      # summaries a live list may lag behind before it is dropped
TITLE_CHARS = 200        # of a title, in a summary


LAGGED = object()        # what a listener that fell behind gets last (None: the feed closed)


class TooManyListeners(SpiderDuckError):
    """Every live list this server allows is open; one may close soon."""
    retryable = True


class FeedClosed(SpiderDuckError):
    """The server is stopping; another may serve the list."""
    retryable = True


def summary(event: events_pb2.UrlProcessed) -> dict:
    """What a live list shows of one event (plain strings: the page escapes them)."""
    at = event.processed_at.ToDatetime(datetime.timezone.utc) if event.HasField("processed_at") else None
    return {"url": event.url, "status": metadata_pb2.Status.Name(event.status),
            "resolution": events_pb2.Resolution.Name(event.resolution),
            "title": event.metadata.title[:TITLE_CHARS],
            "at": at.strftime("%H:%M:%S") if at else ""}


class RecentFeed:
    def __init__(self, js, *, size: int, max_listeners: int):
        self._js = js
        self._recent: deque[dict] = deque(maxlen=max(1, size))
        self._size = size
        self._max_listeners = max_listeners
        self._listeners: set[asyncio.Queue] = set()
        self._sub = None
        self._closed = False

    async def start(self) -> "RecentFeed":
        info = await self._js.stream_info(bus.EVENTS_STREAM)
        first = max(info.state.first_seq, info.state.last_seq - self._size + 1, 1)
        self._sub = await self._js.subscribe(
            bus.PROCESSED_SUBJECT, ordered_consumer=True, cb=self._on_message,
            config=ConsumerConfig(deliver_policy=DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=first))
        return self

    async def close(self) -> None:
        self._closed = True                  # a live list asked for from now on is refused
        for queue in list(self._listeners):
            self._drop(queue)
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()

    def recent(self) -> list[dict]:
        """Newest first."""
        return list(self._recent)

    async def _on_message(self, msg) -> None:
        event = events_pb2.UrlProcessed()
        try:
            event.ParseFromString(msg.data)
        except DecodeError:
            log.warning("web: an event on %s is not a UrlProcessed: skipped", msg.subject)
            return
        item = summary(event)
        self._recent.appendleft(item)
        for queue in list(self._listeners):
            if queue.full():
                log.info("web: a live list fell %d events behind: dropped", LISTENER_QUEUE)
                self._drop(queue, LAGGED)
            else:
                queue.put_nowait(item)

    def _drop(self, queue: asyncio.Queue, last=None) -> None:
        self._listeners.discard(queue)
        with contextlib.suppress(asyncio.QueueEmpty):
            while True:
                queue.get_nowait()
        queue.put_nowait(last)              # the end of this listener's stream

    @contextlib.asynccontextmanager
    async def listen(self) -> AsyncIterator[asyncio.Queue]:
        """A queue of summaries, ending with None (the feed closed) or LAGGED (this listener fell
        behind and was dropped); TooManyListeners past the limit,
        FeedClosed once the server stops."""
        if self._closed:
            raise FeedClosed("the web UI is stopping")
        if len(self._listeners) >= self._max_listeners:
            raise TooManyListeners(f"{len(self._listeners)} live lists open already")
        queue: asyncio.Queue = asyncio.Queue(LISTENER_QUEUE + 1)
        self._listeners.add(queue)
        try:
            yield queue
        finally:
            self._listeners.discard(queue)
