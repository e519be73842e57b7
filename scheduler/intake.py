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
from typing import AsyncIterator

import nats.errors
from nats.js.api import DEFAULT_PREFIX, ConsumerConfig
from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError

log = logging.getLogger("spiderduck.scheduler")

PULL_EXPIRES = 5.0        # seconds a pull request waits on the server for messages
PULL_GRACE = 1.0          # and how much longer we wait for a word from the server about it
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

    async def start(self) -> None:
        """Create the durable consumer unless it exists (as pull_subscribe does); subscribe
        to our own inbox for its deliveries."""
        try:
            await self._js.consumer_info(self._stream, self._durable)
        except NotFoundError:
            await self._js.add_consumer(self._stream, config=self._config)
        self._inbox = self._nc.new_inbox()
        self._sub = await self._nc.subscribe(self._inbox)

    async def pull(self, n: int) -> AsyncIterator:
        """Up to `n` messages, each as soon as it arrives; ends with its pull request."""
        request = {"batch": n, "expires": int(PULL_EXPIRES * 1e9)}
        await self._nc.publish(self._next_subject, json.dumps(request).encode(), reply=self._inbox)
        left = n
        while left > 0:
            try:
                msg = await self._sub.next_msg(timeout=PULL_EXPIRES + PULL_GRACE)
            except (nats.errors.TimeoutError, TimeoutError):
                return                              # the request is gone with no word
            status = JetStreamContext.is_status_msg(msg)
            if status is None:
                left -= 1
                yield msg
            elif status in _OVER:
                if status == "409":
                    log.info("pull request ended: %s", (msg.headers or {}).get("Description", "409"))
                return
            # 100: an idle heartbeat or flow control; the request goes on

    async def leftovers(self) -> list:
        """Messages already delivered to the inbox but not pulled (at shutdown)."""
        out = []
        while self._sub is not None:
            try:
                msg = await self._sub.next_msg(timeout=0.05)
            except (nats.errors.TimeoutError, TimeoutError):
                break
            if JetStreamContext.is_status_msg(msg) is None:
                out.append(msg)
        return out

    async def stop(self) -> None:
        if self._sub is not None:
            try:
                await self._sub.unsubscribe()
            except Exception:   # noqa: BLE001 -- the connection may be gone already
                pass
            self._sub = None
