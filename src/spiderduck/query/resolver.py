"""ResolveUrl: the record of one URL, fresh enough, crawling it first if need be, within the
caller's deadline.

    resolver = await Resolver(store, nc, js, queued, ...).start()
    resolution, record = await resolver.resolve(url, max_age=None, refresh=False, wait=12.5)

Answered at once from the stored record when it is young enough: with `max_age`, fetched less
than max_age ago; without, before its expires_at (FRESH), or, expired less than serve_stale_for
ago, STALE, the record's refresh submitted as the scheduler submits it (spiderduck.core.freshness). Else
the URL is submitted (refresh when asked for, or when max_age found the record too old; the
scheduler's min_refresh_interval still bounds re-fetches) with the header SpiderDuck-Reply-To
naming one of this resolver's inbox subjects, and the scheduler, instead of announcing the
outcome on spiderduck.events.processed, sends its UrlProcessed there. Past `wait` it raises
StillResolving: the submission stays in the stream, so the crawl goes on and its record appears.

Used by the metadata API's ResolveUrl and the web UI's /api/v1/preview alike. Without NATS
(`nc`, `js` and `queued_kv` None) it answers what the store holds fresh enough, and raises
NeedsNats for the rest.

A URL on the denylist (`denylist`, spiderduck.bus.denylist: forgotten, or of a forgotten domain)
is answered as never seen, Forgotten (a NeverSeen), even if a record of it is still stored, and
is never submitted: forgetting it must not start its crawl.
"""
from __future__ import annotations

import asyncio
import time
import uuid

from google.protobuf.message import DecodeError

from spiderduck.wire import record_proto

from spiderduck.bus import submissions

from spiderduck.bus.streams import REPLIES_PREFIX, unsubscribe
from spiderduck.bus.submissions import stale_refresh
from spiderduck.core import urls
from spiderduck.core.errors import BusError, SpiderDuckError
from spiderduck.core.freshness import Freshness
from spiderduck.core.record import UrlRecord
from spiderduck.query.explainer import NeverSeen
from spiderduck.stores.metadata import MetadataStore
from spiderduck.v1 import events_pb2
from spiderduck.wire.record_limits import MAX_URL_CHARS

SOURCE = "metadata-api"


class StillResolving(SpiderDuckError):
    """The crawl did not end within the wait; it goes on (asked again, the record may be there)."""
    retryable = True


class Forgotten(NeverSeen):
    """The URL, or its domain, is on the denylist: answered as never seen, never crawled."""


class NeedsNats(BusError):
    """The record is not fresh enough, and this resolver has no NATS to crawl or refresh it."""


class Resolver:
    def __init__(self, store: MetadataStore, nc, js, queued_kv, *, freshness: Freshness,
                 serve_stale_for: float, clock=time.time, denylist=None):
        self._store = store
        self._denylist = denylist
        self._nc = nc
        self._js = js
        self._queued = queued_kv
        self._freshness = freshness
        self._serve_stale_for = serve_stale_for
        self._clock = clock
        self._prefix = f"{REPLIES_PREFIX}.{uuid.uuid4().hex}"
        self._waiting: dict[str, asyncio.Future] = {}
        self._sub = None

    async def start(self) -> "Resolver":
        if self._nc is not None:
            self._sub = await self._nc.subscribe(f"{self._prefix}.*", cb=self._on_reply)
        return self

    async def close(self) -> None:
        await unsubscribe(self._sub)

    async def _on_reply(self, msg) -> None:
        future = self._waiting.get(msg.subject.rsplit(".", 1)[-1])
        if future is not None and not future.done():
            future.set_result(msg.data)

    async def resolve(self, url: str, *, max_age: float | None, refresh: bool,
                      wait: float) -> tuple[str, UrlRecord]:
        """(resolution name, record). Raises urls.InvalidUrl, Forgotten, StillResolving, StoreError, BusError.
        The URL's userinfo (`user:password@`) is dropped first: it is never submitted."""
        url = urls.without_userinfo(url)
        deadline = asyncio.get_running_loop().time() + wait     # what the store and NATS take counts
        if len(url) > MAX_URL_CHARS:
            raise urls.InvalidUrl(url[:100] + "...", f"{len(url)} characters; at most {MAX_URL_CHARS}")
        key = urls.canonicalize(url)
        if self._denylist is not None and self._denylist.forgotten(key, canonical=True):
            raise Forgotten(f"{url} was never seen")
        stored = await self._store.get(key)
        if stored is not None and stored.fetched_at and not refresh:
            now = self._clock()
            if max_age is not None:
                if now - stored.fetched_at < max_age:
                    return "FRESH", stored
                refresh = True          # too old for this caller, however fresh for others
            elif self._freshness.is_fresh(stored, now):
                return "FRESH", stored
            elif self._js is not None and self._freshness.servable_stale(stored, now, self._serve_stale_for):
                await submissions.publish(self._js, submissions.Outgoing(*stale_refresh(key, stored)))
                return "STALE", stored
        return await self._crawl(url, key, refresh, deadline)

    async def _crawl(self, url: str, key: str, refresh: bool, deadline: float) -> tuple[str, UrlRecord]:
        if self._js is None:
            raise NeedsNats("resolving a URL without a fresh record needs NATS, and there is none "
                            "here (set nats_url)")
        call = uuid.uuid4().hex
        future = asyncio.get_running_loop().create_future()
        self._waiting[call] = future
        try:
            # a failed mark is tolerated: only `pending` in GetUrlMetadata suffers
            await submissions.submit(self._js, self._queued, submissions.encode(
                url, refresh=refresh, submission_id=call, source=SOURCE,
                reply_to=f"{self._prefix}.{call}"), mark_required=False)
            try:
                async with asyncio.timeout_at(deadline):
                    reply = await future
            except TimeoutError:
                raise StillResolving(f"still resolving {url}; the crawl goes on and its record will "
                                     "appear (GetUrlMetadata)") from None
        finally:
            self._waiting.pop(call, None)
        try:
            event = events_pb2.UrlProcessed.FromString(reply)
            resolution = events_pb2.Resolution.Name(event.resolution)
        except (DecodeError, ValueError) as exc:     # anyone may publish to an inbox subject
            raise BusError(f"{url}: the scheduler's reply is not a UrlProcessed: {exc}") from exc
        if event.HasField("metadata"):
            return resolution, record_proto.from_proto(event.metadata)
        record = await self._store.get(key)     # cut from the event to fit NATS's max payload
        if record is None:
            raise StillResolving(f"{url}: processed ({resolution}) but its record is not readable yet")
        return resolution, record
