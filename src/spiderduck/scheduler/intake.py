"""The scheduler's intake: messages of the durable pull consumer, each handed on as it arrives.

nats-py's `fetch(n, timeout)` returns once it has n messages or the timeout has passed, so a lone
URL waited for a batch to fill (up to the whole timeout: 132-786 ms seen). Here one pull request
at a time asks for at most the room the scheduler has (`pull(n)`), stays open for
PULL_EXPIRES, and yields every message the moment the server delivers it. A request ends when
all its messages have come, when the server says it is over (404, 408, 409), or when nothing at
all came for PULL_EXPIRES + PULL_GRACE (a connection that dropped takes its requests with it).
"""
from __future__ import annotations

import json
import logging
import time
from typing import AsyncIterator

import nats.errors
from nats.js.api import DEFAULT_PREFIX, ConsumerConfig
from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError

log = logging.getLogger("spiderduck.scheduler")

PULL_EXPIRES = 0.5        # seconds a pull request waits on the server for messages; at shutdown
                          # the open one is read to its end, so this bounds that wait too
PULL_GRACE = 0.5          # and how much longer we wait for a word from the server about it
_OVER = ("404", "408", "409")   # no messages (no-wait), request expired, request cancelled


class PullIntake:
    def __init__(self, nc, js, *, stream: str, durable: str, config: ConsumerConfig):
        self._nc = nc
        self._js = js
        self._stream = stream
        self._durable = durable
        self._config = config
        self._next_subject = f"{DEFAULT_PREFIX}.CONSUMER.MSG.NEXT.{stream}.{durable}"
        self._sub = None
        self._inbox = ""
        self._open = 0                  # messages the request in progress may still bring
        self._open_until = 0.0          # monotonic time by which the server ends it

    async def start(self) -> None:
        """Create the durable consumer unless it exists (as pull_subscribe does), or bring an
        existing one's max_ack_pending to ours (a limit shared by every scheduler, raised in the
        config when schedulers are added); subscribe to our own inbox for its deliveries."""
        try:
            info = await self._js.consumer_info(self._stream, self._durable)
        except NotFoundError:
            await self._js.add_consumer(self._stream, config=self._config)
        else:
            wanted = self._config.max_ack_pending
            if wanted and info.config.max_ack_pending != wanted:
                log.info("consumer %s: max_ack_pending %s -> %s", self._durable,
                         info.config.max_ack_pending, wanted)
                info.config.max_ack_pending = wanted
                await self._js.add_consumer(self._stream, config=info.config)   # an update
        self._inbox = self._nc.new_inbox()
        self._sub = await self._nc.subscribe(self._inbox)

    async def pull(self, n: int) -> AsyncIterator:
        """Up to `n` messages, each as soon as it arrives; ends with its pull request."""
        request = {"batch": n, "expires": int(PULL_EXPIRES * 1e9)}
        self._open, self._open_until = n, time.monotonic() + PULL_EXPIRES + PULL_GRACE
        await self._nc.publish(self._next_subject, json.dumps(request).encode(), reply=self._inbox)
        while self._open > 0:
            try:
                msg = await self._sub.next_msg(timeout=PULL_EXPIRES + PULL_GRACE)
            except (nats.errors.TimeoutError, TimeoutError):
                self._open = 0                      # the request is gone with no word
                return
            kind = self._take(msg)
            if kind == "over":
                return
            if kind == "message":
                yield msg

    def _take(self, msg) -> str:
        """What a delivery is to the open request: a "message" (counted against it), "over"
        (the server ended it) or "heartbeat" (it goes on)."""
        status = JetStreamContext.is_status_msg(msg)
        if status is None:
            self._open -= 1
            return "message"
        if status in _OVER:
            if status == "409":
                log.info("pull request ended: %s", (msg.headers or {}).get("Description", "409"))
            self._open = 0
            return "over"
        return "heartbeat"

    async def leftovers(self) -> list:
        """At shutdown, what the request in progress still brings, until the server ends it
        (or it has brought all it asked for): those messages, to be handed back."""
        out = []
        while self._sub is not None:
            wait = self._open_until - time.monotonic() if self._open > 0 else 0.05
            try:
                msg = await self._sub.next_msg(timeout=max(wait, 0.05))
            except (nats.errors.TimeoutError, TimeoutError):
                break
            kind = self._take(msg)
            if kind == "message":
                out.append(msg)
            elif kind == "over":
                break
        return out

    async def stop(self) -> None:
        if self._sub is not None:
            try:
                await self._sub.unsubscribe()
            except Exception:   # noqa: BLE001 -- the connection may be gone already
                pass
            self._sub = None
