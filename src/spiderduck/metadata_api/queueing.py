"""Submissions asked for on spiderduck.urls.queue (the client's `submit`, `spiderduck submit`):
each is marked queued (spiderduck.bus.pending), then published to spiderduck.urls.submit, and the
request answered: empty once JetStream stored it, else why not. The queued-marker bucket is
written here, by the service, so a producer's NATS user needs no right to write any bucket
(spiderduck.bus.permissions: the user `client`).

The requests are a queue group: with several metadata-api replicas each request is handled by
one. At most metadata_api.max_concurrent_queueing are handled at once; more wait in NATS's
subscription until one ends.
"""
from __future__ import annotations

import asyncio
import logging

from nats.errors import Error as NatsError

from spiderduck.bus import submissions
from spiderduck.bus.streams import QUEUE_SUBJECT, REPLY_TO_HEADER, unsubscribe
from spiderduck.core.errors import BusError, InvalidMessage

log = logging.getLogger("spiderduck.metadata_api")
QUEUE_GROUP = "spiderduck-metadata-api"


class QueueRequests:
    def __init__(self, nc, js, queued_kv, *, concurrency: int):
        self._nc = nc
        self._js = js
        self._queued = queued_kv
        self._places = asyncio.Semaphore(concurrency)
        self._tasks: set[asyncio.Task] = set()
        self._sub = None

    async def start(self) -> "QueueRequests":
        self._sub = await self._nc.subscribe(QUEUE_SUBJECT, queue=QUEUE_GROUP, cb=self._received)
        await self._nc.flush()          # the server has it: a request from now on is answered
        return self

    async def close(self) -> None:
        await unsubscribe(self._sub)
        if self._tasks:
            await asyncio.wait(self._tasks)

    async def _received(self, msg) -> None:
        await self._places.acquire()        # NATS's subscription holds the rest meanwhile
        task = asyncio.create_task(self._handle(msg))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _handle(self, msg) -> None:
        try:
            answer = await self.queue(msg.data, msg.headers)
            if msg.reply:
                await msg.respond(answer)
        except NatsError as exc:
            log.warning("cannot answer a submission on %s: %s", QUEUE_SUBJECT, exc)
        finally:
            self._places.release()

    async def queue(self, data: bytes, headers) -> bytes:
        """Mark the submission's URLs queued and publish it as it came (without a
        SpiderDuck-Reply-To: ResolveUrl's replies are the service's own); the answer, empty
        when published. A message that is not a submission is published unmarked: the
        scheduler dead-letters it, as any it cannot read."""
        try:
            urls = tuple(submissions.decode_submission(data, headers).urls)
        except InvalidMessage:
            urls = ()
        kept = {k: v for k, v in (headers or {}).items() if k != REPLY_TO_HEADER}
        try:
            await submissions.submit(self._js, self._queued, submissions.Outgoing(data, kept, urls))
        except BusError as exc:
            return str(exc).encode()
        return b""
