"""Erasing a forgotten URL's events from the SPIDERDUCK_EVENTS stream (MetadataService.Forget).

The stream is read once, from its first message to the one that was last when the erasure
started, by an ordered consumer (flow-controlled, so memory stays bounded by its window, not by
the stream); each message that decodes as a spiderduck.v1.UrlProcessed naming a forgotten URL is
deleted with erasure: JetStream's $JS.API.STREAM.MSG.DELETE without no_erase, which overwrites
the message's bytes where the server stored them, not only marks them deleted. A message that
does not decode is left alone."""
from __future__ import annotations

import asyncio
import logging
from typing import Collection

from google.protobuf.message import DecodeError
from nats.errors import Error as NatsError
from nats.js.api import DeliverPolicy
from nats.js.errors import APIError

from spiderduck.bus.denylist import domain_of
from spiderduck.core import urls as urllib
from spiderduck.core.errors import BusError
from spiderduck.v1 import events_pb2

log = logging.getLogger("spiderduck.bus.events_erase")

_DELETE_FAILED = 10057                     # JetStream's "message delete failed" (its description says why)
QUIET = 10.0       # seconds without a message before the read ends (the stream's last ones went meanwhile)


def named_urls(event: events_pb2.UrlProcessed) -> list[str]:
    """Every URL an event names: its url, canonical_url, and its record's url, final_url,
    canonical_url and redirects' urls."""
    record = event.metadata
    named = [event.url, event.canonical_url, record.url, record.final_url, record.canonical_url,
             *(hop.url for hop in record.redirects)]
    return [url for url in named if url]


class _Match:
    """Whether an event names one of the URLs (in lookup form) or a URL of the domain."""

    def __init__(self, urls: Collection[str], domain: str):
        self.urls = {urllib.lookup_key(url) for url in urls if url.strip()}
        self.domain = urllib.domain_named(domain) if domain else ""

    def __bool__(self) -> bool:
        return bool(self.urls or self.domain)

    def __call__(self, data: bytes) -> bool:
        try:
            event = events_pb2.UrlProcessed.FromString(data)
        except DecodeError:
            return False
        for url in named_urls(event):
            key = urllib.lookup_key(url)
            if key in self.urls or (self.domain and domain_of(key) == self.domain):
                return True
        return False


async def erase_events(js, urls: Collection[str], domain: str = "", *,
                       stream: str = "SPIDERDUCK_EVENTS") -> int:
    """Erase (overwrite on disk, not only mark deleted) every message of `stream` whose
    UrlProcessed names one of `urls` (its url, canonical_url, or its record's url, final_url,
    canonical_url or a redirect's url; compared as lookup_key forms) or, with `domain`, a URL of
    that registrable domain. Returns how many were erased; idempotent. Raises BusError when the
    stream cannot be read or a message cannot be erased (the forget can be repeated)."""
    match = _Match(urls, domain)
    if not match:
        return 0
    try:
        state = (await js.stream_info(stream)).state
    except (NatsError, asyncio.TimeoutError) as exc:
        raise BusError(f"cannot read the stream {stream}: {exc}") from exc
    if not state.messages:
        return 0
    erased = 0
    sub = None
    try:
        sub = await js.subscribe("", stream=stream, ordered_consumer=True, deliver_policy=DeliverPolicy.ALL)
        while True:
            try:
                msg = await sub.next_msg(timeout=QUIET)
            except asyncio.TimeoutError:      # nothing more: the last messages went meanwhile
                break
            seq = msg.metadata.sequence.stream
            if match(msg.data):
                erased += await _erase(js, stream, seq)
            if seq >= state.last_seq or not msg.metadata.num_pending:
                break
    except (NatsError, asyncio.TimeoutError) as exc:
        raise BusError(f"cannot erase events of {stream} ({erased} erased so far): {exc}") from exc
    finally:
        if sub is not None:
            try:
                await sub.unsubscribe()
            except NatsError:
                pass
    log.info("erased %d events of %s", erased, stream)
    return erased


async def _erase(js, stream: str, seq: int) -> int:
    """Erase message `seq` of `stream`: 1, or 0 when it is gone already (a forget beside this one)."""
    try:
        await js.delete_msg(stream, seq)      # {"seq": n}: no_erase absent, so the bytes are overwritten
    except APIError as exc:
        if exc.err_code == _DELETE_FAILED and "no message found" in (exc.description or ""):
            return 0
        raise
    return 1
