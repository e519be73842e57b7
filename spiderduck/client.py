"""A Python client of a running SpiderDuck: look records up, resolve a URL, submit URLs, and
follow what the service processed.

    from spiderduck.client import Client

    with Client("127.0.0.1:50051", nats_url="nats://127.0.0.1:4222") as spiderduck:
        for lookup in spiderduck.get(["https://example.com/", "https://t.co/abc"]):
            print(lookup.url, lookup.record.title if lookup.found else "not found")
        answer = spiderduck.resolve("https://example.com/", timeout=10)   # crawled if need be
        print(answer.resolution, answer.status, answer.record.title)
        spiderduck.submit(["https://example.com/a", "https://example.com/b"])

`AsyncClient` is the same client for asyncio code: the same methods as coroutines, and
`events()`, an async iterator of the `UrlProcessed` events the service publishes:

    from spiderduck.v1 import events_pb2

    async with AsyncClient(nats_url="nats://127.0.0.1:4222") as spiderduck:
        async with spiderduck.events() as events:         # subscribed from here on
            await spiderduck.submit(["https://example.com/a"])
            async for event in events:                    # spiderduck.v1.events_pb2.UrlProcessed
                print(event.url, events_pb2.Resolution.Name(event.resolution))

What talks to what:

- `get` and `resolve` call MetadataService (`GetUrlMetadata`, `ResolveUrl`) over gRPC at
  `metadata`, the service's `metadata_api.listen` ("127.0.0.1:50051" by default). `get` sends
  at most `max_urls` URLs per call (the server's `metadata_api.max_urls`, 300 by default) and
  makes as many calls as it needs; told by the server that it takes fewer, it asks again in
  calls of that many.
- `submit` publishes each URL as a protobuf `spiderduck.v1.UrlSubmission` on the JetStream
  subject `spiderduck.urls.submit` (header `Content-Type: application/x-protobuf`), after
  marking it queued in the KV bucket `spiderduck_url_queued` (so `get` says `pending` for it at
  once, as for `spiderduck submit`). It needs `nats_url`: the NATS the service uses (`spiderduck
  up` writes the URL of its embedded one to `var/nats.url`); a comma-separated list names the
  servers of one cluster.
- `events()` is a core NATS subscription to `spiderduck.events.processed`: it sees the events
  published while it is subscribed, nothing from before, and at most once each (a publish that
  failed over between NATS nodes may show twice). They are buffered as they come (at most
  10,000 unread; past that the oldest are dropped, and counted in the stream's `dropped`), so
  a reader may give up waiting (a timeout) without losing one. For an exact record, with
  replay, consume the JetStream stream `SPIDERDUCK_EVENTS` instead.

Errors are the client's own, never raw gRPC or NATS ones: `Unavailable` (nothing answered),
`InvalidUrl` (the service refused the URL given to `resolve`, or a URL is not text),
`StillResolving` (the deadline of `resolve` passed; the crawl goes on, and its record will
appear in `get`), `NotConfigured` (`submit` or `events` without `nats_url`) and `ServiceError`
(any other refusal, such as a `get` call refused as a whole), all subclasses of `Error`. A call
on a closed client, or cut short by closing it, raises `Error` itself.

`Client` runs an `AsyncClient` on an event loop of its own, in a background thread, so it works
from plain scripts and from any thread (calls from several threads at once are fine). Close
either with `close()`, or use it as a (async) context manager; closing a `Client` cancels the
calls other threads are still in.

Importing this module needs only grpcio, protobuf, nats-py and `spiderduck.v1`; `submit` reads
the service's own helpers (`common.pending`) when it is first called.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import itertools
import re
import threading
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Iterable, Iterator
from typing import Any, TypeVar

import grpc
import grpc.aio
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from nats.aio.client import Client as NATS
from nats.errors import Error as NatsError
from nats.errors import NoRespondersError
from nats.js.errors import NoStreamResponseError

from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc
from spiderduck.v1.events_pb2 import UrlProcessed, UrlSubmission
from spiderduck.v1.metadata_pb2 import UrlMetadata

__all__ = [
    "AsyncClient", "Client", "Error", "EventIterator", "EventStream", "InvalidUrl", "Lookup",
    "NotConfigured", "Resolution", "ServiceError", "StillResolving", "Unavailable",
    "UrlMetadata", "UrlProcessed",
]

DEFAULT_METADATA = "127.0.0.1:50051"      # metadata_api.listen's default
MAX_URLS = 300                            # metadata_api.max_urls's default: URLs per GetUrlMetadata
SUBMIT_SUBJECT = "spiderduck.urls.submit"
PROCESSED_SUBJECT = "spiderduck.events.processed"
PROTOBUF_CONTENT_TYPE = "application/x-protobuf"
RESOLUTION_KEY = "spiderduck-resolution"  # ResolveUrl's trailing metadata: how it was answered
QUEUED_TTL = 3600.0                       # streams.queued_ttl's default (the marker bucket's TTL)
PUBLISH_WINDOW = 256                      # submissions in flight at once (acks awaited together)
CLOSE_CALLS_TIMEOUT = 5.0                 # seconds Client.close() lets cancelled calls finish

T = TypeVar("T")


# --- errors ---------------------------------------------------------------------------------------

class Error(Exception):
    """Base of the errors this client raises.

    `code` is the gRPC status name the service answered with ("UNAVAILABLE", ...), or None when
    no gRPC call failed (NATS, configuration); `details` is what the service said."""

    def __init__(self, message: str, *, code: str | None = None, details: str = ""):
        super().__init__(message)
        self.code = code
        self.details = details


class Unavailable(Error):
    """Nothing answered: the metadata-api is down or unreachable, it did not answer in time,
    NATS cannot be reached, or a publish was not confirmed."""


class InvalidUrl(Error, ValueError):
    """The URL was refused: `resolve`'s by the service (not a fetchable URL, ...), or, before
    any call, a URL given to `resolve`, `get` or `lookups` that is not text (str, UTF-8). A URL
    `get` cannot read is answered not found; `get` refused as a whole is a ServiceError."""


class StillResolving(Error, TimeoutError):
    """`resolve` reached its deadline while the URL was still being crawled. The crawl goes on:
    its record will appear in `get`. `url` is the URL, `elapsed` the seconds waited."""

    def __init__(self, message: str, *, url: str, elapsed: float, code: str | None = None,
                 details: str = ""):
        super().__init__(message, code=code, details=details)
        self.url = url
        self.elapsed = elapsed


class NotConfigured(Error):
    """The client lacks what the call needs: `submit` and `events` need `nats_url`."""


class ServiceError(Error):
    """Any other refusal by the service: too many calls at once or too large an answer
    (RESOURCE_EXHAUSTED), ResolveUrl on a metadata-api without NATS (FAILED_PRECONDITION), a
    GetUrlMetadata request refused as a whole (INVALID_ARGUMENT, `details` says why), ..."""


# --- results --------------------------------------------------------------------------------------

def _record_dict(record: UrlMetadata) -> dict[str, Any]:
    """A record as `spiderduck get` prints it: protobuf's JSON mapping, proto field names
    (common.record_proto.message_to_dict)."""
    return json_format.MessageToDict(record, preserving_proto_field_name=True)


@dataclasses.dataclass(frozen=True)
class Lookup:
    """What `get` answered for one URL.

    `found`: the service has a record for it (a shortener link, a redirect hop and the final
    URL all give the final page's record; a URL that was seen and failed has one too, with
    `status` saying why). `pending`: no record yet, but the URL is queued or being crawled.
    `record` is the `spiderduck.v1.UrlMetadata` when found, else None; its `url` is the URL
    asked for. Treat it as read-only."""

    url: str
    found: bool
    pending: bool
    record: UrlMetadata | None

    @property
    def status(self) -> str | None:
        """The record's status name ("OK", "HTTP_ERROR", ...), None when not found."""
        return str(metadata_pb2.Status.Name(self.record.status)) if self.record is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object `spiderduck get` prints for this URL: the record, or
        {"url": ..., "found": false} (with "pending": true when it is queued or in flight)."""
        if self.found and self.record is not None:
            return _record_dict(self.record)
        if self.pending:
            return {"url": self.url, "found": False, "pending": True}
        return {"url": self.url, "found": False}


@dataclasses.dataclass(frozen=True)
class Resolution:
    """What `resolve` answered: the URL's record, fresh enough, and how it was had.

    `resolution` is the name of a `spiderduck.v1.Resolution`: "CRAWLED" (fetched now), "FRESH"
    (a fresh record, no fetch), "JOINED" (a crawl already in flight), "REJECTED" (not fetched:
    invalid, blocked, ...), "REVALIDATED" (fetched again, unchanged) or "STALE" (an expired OK
    record, while a refresh re-fetches it). `record` is the `spiderduck.v1.UrlMetadata`, its
    `url` the URL asked for."""

    url: str
    resolution: str
    record: UrlMetadata

    @property
    def status(self) -> str:
        """The record's status name ("OK", "ROBOTS_DISALLOWED", ...)."""
        return str(metadata_pb2.Status.Name(self.record.status))

    def to_dict(self) -> dict[str, Any]:
        """The record as `spiderduck resolve` prints it (as `get` does)."""
        return _record_dict(self.record)


# --- the asyncio client ---------------------------------------------------------------------------

def _url_list(urls: Iterable[str], what: str) -> Iterator[str]:
    if isinstance(urls, (str, bytes)):
        raise TypeError(f"{what}() takes a list of URLs, not one string: {what}([url])")
    return iter(urls)


class AsyncClient:
    """SpiderDuck's client for asyncio code. See the module's documentation.

    `metadata`: the metadata-api's gRPC address (HOST:PORT). `nats_url`: the service's NATS
    ("nats://host:4222", or several servers of one cluster, comma-separated), needed by
    `submit` and `events` only. `timeout`: seconds a `get` call may take. `resolve_timeout`:
    the deadline of `resolve` when it is given none (the server waits at most its own
    `metadata_api.resolve_timeout`, 30 s by default). `max_urls`: URLs per GetUrlMetadata call
    (the server's `metadata_api.max_urls`). `connect_timeout`: seconds to reach NATS.
    `queued_ttl`: the TTL of the queued-marker bucket, should `submit` have to create it.
    `source`: what `submit` names as the submissions' source (echoed in their events).

    Nothing connects until a method needs it; use one AsyncClient from one event loop.
    """

    def __init__(self, metadata: str = DEFAULT_METADATA, nats_url: str | None = None, *,
                 timeout: float = 30.0, resolve_timeout: float = 35.0, max_urls: int = MAX_URLS,
                 connect_timeout: float = 5.0, queued_ttl: float = QUEUED_TTL,
                 source: str = "spiderduck.client", name: str = "spiderduck-client"):
        if max_urls < 1:
            raise ValueError(f"max_urls must be at least 1, not {max_urls}")
        self.metadata = metadata
        self.nats_url = nats_url or None
        self.timeout = timeout
        self.resolve_timeout = resolve_timeout
        self.max_urls = max_urls
        self.connect_timeout = connect_timeout
        self.queued_ttl = queued_ttl
        self.source = source
        self.name = name
        self._channel: grpc.aio.Channel | None = None
        self._stub: metadata_pb2_grpc.MetadataServiceStub | None = None
        self._nc: Any = None
        self._nats_lock: asyncio.Lock | None = None
        self._queued_kv: Any = None
        self._streams: list[EventStream] = []
        self._closed = False
        self._server_max_urls: int | None = None   # what the server said it takes per call

    # -- lifecycle

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the gRPC channel, the event subscriptions and the NATS connection."""
        self._closed = True
        for stream in list(self._streams):
            await stream.close()
        if self._channel is not None:
            channel, self._channel, self._stub = self._channel, None, None
            await channel.close()
        if self._nc is not None:
            nc, self._nc, self._queued_kv = self._nc, None, None
            with contextlib.suppress(Exception):
                await nc.close()

    def _check_open(self) -> None:
        if self._closed:
            raise Error("this SpiderDuck client is closed")

    # -- gRPC: get and resolve

    def _service(self) -> metadata_pb2_grpc.MetadataServiceStub:
        self._check_open()
        if self._stub is None:
            self._channel = grpc.aio.insecure_channel(self.metadata)
            self._stub = metadata_pb2_grpc.MetadataServiceStub(self._channel)
        return self._stub

    def _failed(self, exc: grpc.aio.AioRpcError, *, url: str = "", elapsed: float = 0.0,
                resolving: bool = False) -> Error:
        """The client's error for a failed call: of ResolveUrl (`resolving`, for `url`), or else
        GetUrlMetadata, whose INVALID_ARGUMENT refuses the request as a whole (ServiceError):
        it answers each URL, even one that is not a URL, with a Lookup."""
        code, details = exc.code(), exc.details() or ""
        name = code.name if code is not None else "UNKNOWN"
        message = f"metadata-api at {self.metadata}: {name}: {details}"
        if code == grpc.StatusCode.UNAVAILABLE:
            return Unavailable(message + "; is the service running (spiderduck up) there?",
                               code=name, details=details)
        if code == grpc.StatusCode.INVALID_ARGUMENT and resolving:
            return InvalidUrl(details or message, code=name, details=details)
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            if resolving:
                return StillResolving(
                    f"still resolving {url} after {elapsed:.1f}s; the crawl goes on and its "
                    "record will appear in get()", url=url, elapsed=elapsed, code=name, details=details)
            return Unavailable(message, code=name, details=details)
        return ServiceError(message, code=name, details=details)

    async def lookups(self, urls: Iterable[str]) -> AsyncGenerator[Lookup, None]:
        """`get`, one Lookup at a time, in the order asked, as each call of at most `max_urls`
        URLs is answered (any iterable of URLs; it is read a call's worth at a time).

        A server that takes fewer URLs per call (its `metadata_api.max_urls`) refuses a call
        with more, saying how many it takes: the client then asks again in calls of that many,
        and keeps to it from then on. Any other refusal of a call is a ServiceError (code
        "INVALID_ARGUMENT" for a request refused as a whole); a URL the service cannot read is
        answered not found. InvalidUrl only for a URL that is not text (str, UTF-8)."""
        pending = _url_list(urls, "lookups")
        service = self._service()
        held: list[str] = []          # read, not yet asked for (a refused call's URLs)
        while True:
            size = min(self.max_urls, self._server_max_urls or self.max_urls)
            batch, held = held[:size], held[size:]
            if len(batch) < size:
                batch += itertools.islice(pending, size - len(batch))
            if not batch:
                return
            try:
                request = metadata_pb2.GetUrlMetadataRequest(urls=batch)
            except (TypeError, ValueError) as exc:
                raise InvalidUrl(f"URLs must be text (str, UTF-8): {exc}") from None
            try:
                response = await service.GetUrlMetadata(request, timeout=self.timeout)
            except grpc.aio.AioRpcError as exc:
                takes = _urls_per_call(exc, len(batch))
                if takes is None:
                    raise self._failed(exc) from None
                self._server_max_urls = takes      # fewer than asked: the same URLs again
                held = batch + held
                continue
            for result in response.results:
                yield Lookup(url=result.url, found=result.found, pending=result.pending,
                             record=result.metadata if result.found else None)

    async def get(self, urls: Iterable[str]) -> list[Lookup]:
        """The stored record of each URL (GetUrlMetadata), one Lookup per URL in the order
        asked; never fetches. As many calls as `max_urls` requires."""
        return [lookup async for lookup in self.lookups(urls)]

    async def resolve(self, url: str, timeout: float | None = None, *, refresh: bool = False,
                      max_age: float | None = None) -> Resolution:
        """The URL's record, crawled first unless a fresh one is stored (ResolveUrl).

        `timeout`: seconds to wait (default `resolve_timeout`); past it, StillResolving (the
        crawl goes on). `refresh`: re-fetch even a fresh record (at most once per the service's
        `min_refresh_interval`). `max_age`: seconds; an older record counts as stale."""
        service = self._service()
        try:
            request = metadata_pb2.ResolveUrlRequest(url=url, refresh=refresh)
        except (TypeError, ValueError) as exc:
            raise InvalidUrl(f"the URL must be text (str, UTF-8): {exc}") from None
        if max_age is not None:
            request.max_age.seconds = int(max_age)
            request.max_age.nanos = int(round((max_age - int(max_age)) * 1e9))
        deadline = self.resolve_timeout if timeout is None else timeout
        loop = asyncio.get_running_loop()
        started = loop.time()
        call = service.ResolveUrl(request, timeout=deadline)
        try:
            result = await call
            trailing = await call.trailing_metadata()
        except grpc.aio.AioRpcError as exc:
            raise self._failed(exc, url=url, elapsed=loop.time() - started, resolving=True) from None
        resolution = dict(trailing or ()).get(RESOLUTION_KEY, "")
        return Resolution(url=url, resolution=str(resolution), record=result.metadata)

    # -- NATS: submit and events

    async def _nats(self) -> Any:
        """The NATS connection, made on first use."""
        self._check_open()
        if self.nats_url is None:
            raise NotConfigured(
                "submit() and events() need nats_url, the NATS the service uses (e.g. "
                "nats_url='nats://127.0.0.1:4222'; `spiderduck up` writes its own's to var/nats.url)")
        if self._nats_lock is None:
            self._nats_lock = asyncio.Lock()
        async with self._nats_lock:
            if self._nc is None or self._nc.is_closed:
                self._nc = await self._connect_nats()
                self._queued_kv = None
        return self._nc

    async def _connect_nats(self) -> Any:
        """Connect to any server of `nats_url` within `connect_timeout`; once connected, the
        connection reconnects by itself (NATS restarts, cluster failovers)."""
        assert self.nats_url is not None
        servers = [part.strip() for part in self.nats_url.split(",") if part.strip()]
        if not servers:
            raise NotConfigured(f"nats_url {self.nats_url!r} names no server")
        failures: list[BaseException] = []

        async def on_error(exc: Exception) -> None:    # nats-py's default logs a traceback
            failures.append(exc)

        options: dict[str, Any] = {     # (nats-py's hints say int for seconds; floats work)
            "name": self.name, "error_cb": on_error, "connect_timeout": min(5.0, self.connect_timeout),
            "allow_reconnect": True, "max_reconnect_attempts": -1, "reconnect_time_wait": 0.5}
        try:
            async with asyncio.timeout(self.connect_timeout):
                while True:
                    nc = NATS()
                    try:
                        await nc.connect(servers, **options)
                        return nc
                    except (NatsError, OSError) as exc:
                        failures.append(exc)
                        await asyncio.sleep(0.25)
        except TimeoutError:
            last = f"{type(failures[-1]).__name__}: {failures[-1]}" if failures else "no answer"
            raise Unavailable(f"cannot connect to NATS at {self.nats_url} within "
                              f"{self.connect_timeout:g}s: {last}") from None

    async def _queued_bucket(self, js: Any) -> Any:
        """The KV bucket of queued markers (common.pending), created if missing. The CLI's
        client also makes SpiderDuck's streams here, as the service does."""
        from common.pending import queued_bucket
        return await queued_bucket(js, self.queued_ttl)

    async def submit(self, urls: Iterable[str] = (), *, tweets: Iterable[str] = (),
                     refresh: bool = False, source: str | None = None, submission_id: str = "",
                     on_progress: Callable[[int], object] | None = None) -> int:
        """Publish URLs (and tweets, whose URLs the service resolves) to be resolved; returns
        how many submissions were published. Each URL gets one UrlProcessed (see `events`).

        Each is marked queued first, then published as a protobuf UrlSubmission to
        `spiderduck.urls.submit` with JetStream, which confirms it stored it. `refresh`:
        re-fetch even a fresh record. `source` (default the client's) and `submission_id` (at
        most 256 characters each) are echoed in the events as `source` and `submission_id`.
        `on_progress(n)` is called after each window of submissions confirmed, with how many
        were confirmed so far."""
        options: dict[str, Any] = {"source": self.source if source is None else source,
                                   "refresh": refresh}
        if submission_id:
            options["id"] = submission_id
        items = [UrlSubmission(url=u, **options) for u in _url_list(urls, "submit")]
        items += [UrlSubmission(tweet=t, **options) for t in _url_list(tweets, "submit")]
        if not items:
            return 0
        from common.errors import SpiderDuckError
        from common.pending import mark_queued
        nc = await self._nats()
        js = nc.jetstream()
        try:
            if self._queued_kv is None:
                self._queued_kv = await self._queued_bucket(js)
            headers = {"Content-Type": PROTOBUF_CONTENT_TYPE}
            for start in range(0, len(items), PUBLISH_WINDOW):
                batch = items[start:start + PUBLISH_WINDOW]
                await mark_queued(self._queued_kv, [u for item in batch for u in _urls_of(item)])
                acks = [js.publish(SUBMIT_SUBJECT, item.SerializeToString(), headers=headers)
                        for item in batch]
                try:
                    await asyncio.gather(*acks)
                except (NoRespondersError, NoStreamResponseError) as exc:
                    raise Unavailable(f"publish to {SUBMIT_SUBJECT} failed: no stream takes it on "
                                      f"{self.nats_url}: is that the service's NATS, and has the "
                                      "service started there?") from exc
                except (NatsError, asyncio.TimeoutError, OSError) as exc:
                    raise Unavailable(f"publish to {SUBMIT_SUBJECT} failed: {exc}") from exc
                if on_progress is not None:
                    on_progress(start + len(batch))
        except SpiderDuckError as exc:         # the bucket or the markers (common.errors.BusError)
            raise Unavailable(str(exc)) from exc
        return len(items)

    def events(self) -> EventStream:
        """The UrlProcessed events published from now on, as an async iterator (a core NATS
        subscription to `spiderduck.events.processed`: see the module's documentation).

        Use it as a context manager to be subscribed before submitting, so that no event is
        missed; iterated without one, it subscribes at the first step. It ends when closed
        (`close()`, the context's end, or the client's close)."""
        stream = EventStream(self)
        self._streams.append(stream)
        return stream


_TOO_MANY_URLS = re.compile(r"(\d+) URLs requested; at most (\d+) per call")


def _urls_per_call(exc: grpc.aio.AioRpcError, asked: int) -> int | None:
    """How many URLs a GetUrlMetadata call may name, when `exc` refused one of `asked` URLs
    for naming too many ("6 URLs requested; at most 5 per call"); None for any other failure,
    or an answer that does not fit (a limit of 0, or not below what was asked)."""
    if exc.code() != grpc.StatusCode.INVALID_ARGUMENT:
        return None
    said = _TOO_MANY_URLS.fullmatch((exc.details() or "").strip())
    if said is None or int(said.group(1)) != asked:
        return None
    takes = int(said.group(2))
    return takes if 1 <= takes < asked else None


def _urls_of(item: UrlSubmission) -> list[str]:
    """The URLs a submission asks for, as the scheduler will read them (to mark them queued)."""
    if item.WhichOneof("payload") == "tweet":
        from common.tweets import fetchable, urls_in_tweet
        return [fetchable(u) for u in urls_in_tweet(item.tweet)]
    return [item.url]


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


# --- the synchronous client -----------------------------------------------------------------------

class Client:
    """SpiderDuck's client for plain (synchronous) code: `get`, `resolve`, `submit` and
    `events` as AsyncClient's, blocking until done. See the module's documentation.

    It takes AsyncClient's arguments, and runs one on an event loop of its own in a background
    (daemon) thread, so it works from scripts, from threads, and even beside a running event
    loop. Methods may be called from several threads at once. `close()` (or leaving a `with`
    block) stops the thread; calls still running in other threads are cancelled, and raise
    Error. `on_progress` callbacks run on that thread.
    """

    def __init__(self, metadata: str = DEFAULT_METADATA, nats_url: str | None = None,
                 **options: Any):
        self._client = AsyncClient(metadata, nats_url, **options)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="spiderduck-client",
                                        daemon=True)
        self._thread.start()
        self._lock = threading.Lock()
        self._closed = False
        self._calls: set[asyncio.Task[Any]] = set()                 # running, on the loop
        self._reads: set[asyncio.Task[Any]] = set()                 # of them, events' next
        self._waiting: set[concurrent.futures.Future[Any]] = set()  # awaited by callers
        # Forgotten without close(): its thread stops when it is collected (or at exit).
        self._finalizer = weakref.finalize(self, _stop_loop, self._loop)

    @property
    def metadata(self) -> str:
        return self._client.metadata

    @property
    def nats_url(self) -> str | None:
        return self._client.nats_url

    def _run(self, step: Awaitable[T], *, reading: bool = False) -> T:
        """Run `step` on the client's loop and wait for its result here; Error("this SpiderDuck
        client is closed") if the client is closed, before or meanwhile (close() cancels it).
        `reading`: an event stream's next, which the streams' end ends (close() lets it)."""
        coro = step if isinstance(step, Coroutine) else _awaited(step)
        if threading.current_thread() is self._thread:
            coro.close()
            raise Error("a Client's method cannot be called from its own callbacks")
        with self._lock:              # close() sees every call started before it
            if self._closed:
                coro.close()
                raise Error("this SpiderDuck client is closed")
            future = asyncio.run_coroutine_threadsafe(self._tracked(coro, reading), self._loop)
            self._waiting.add(future)
        try:
            return future.result()
        except (concurrent.futures.CancelledError, asyncio.CancelledError):
            if self._closed:
                raise Error("this SpiderDuck client is closed") from None
            raise
        except BaseException:
            future.cancel()           # interrupted (Ctrl-C): the call stops too
            raise
        finally:
            with self._lock:
                self._waiting.discard(future)

    async def _tracked(self, coro: Coroutine[Any, Any, T], reading: bool = False) -> T:
        """`coro`, known to close() while it runs (to cancel it)."""
        task = asyncio.current_task()
        assert task is not None
        self._calls.add(task)
        if reading:
            self._reads.add(task)
        try:
            return await coro
        finally:
            self._calls.discard(task)
            self._reads.discard(task)

    async def _close(self) -> None:
        """On the loop: end the event streams (their readers stop iterating), cancel the calls
        still running and let them finish, then close the connections."""
        for stream in list(self._client._streams):
            await stream.close()
        if self._reads:               # their readers see the end (StopIteration), not Error
            await asyncio.wait(list(self._reads), timeout=1.0)
        # Cancelled again until done: a cancellation can be lost in a library (Python 3.11's
        # wait_for, as nats-py's connect uses it, swallows one that comes as it finishes).
        pending = set(self._calls)
        deadline = asyncio.get_running_loop().time() + CLOSE_CALLS_TIMEOUT
        while pending and (left := deadline - asyncio.get_running_loop().time()) > 0:
            for task in pending:
                task.cancel()
            _, pending = await asyncio.wait(pending, timeout=min(0.1, left))
        await self._client.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections and stop the background thread. Idempotent.

        Calls running in other threads meanwhile are cancelled: they raise Error("this
        SpiderDuck client is closed"), and iterating `events()` ends (StopIteration)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            with contextlib.suppress(concurrent.futures.TimeoutError):
                asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout=30)
        finally:
            with self._lock:          # any call still awaited (it ignored its cancellation)
                waiting = list(self._waiting)
            for future in waiting:
                future.cancel()
            self._finalizer.detach()
            _stop_loop(self._loop)
            self._thread.join(timeout=30)
            if not self._thread.is_alive():
                self._loop.close()

    def get(self, urls: Iterable[str]) -> list[Lookup]:
        """The stored record of each URL; see AsyncClient.get."""
        return self._run(self._client.get(list(_url_list(urls, "get"))))

    def lookups(self, urls: Iterable[str]) -> Iterator[Lookup]:
        """`get`, one Lookup at a time, as each call is answered; see AsyncClient.lookups."""
        stream = self._client.lookups(urls)
        try:
            while True:
                try:
                    yield self._run(stream.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            if not self._closed:
                self._run(stream.aclose())

    def resolve(self, url: str, timeout: float | None = None, *, refresh: bool = False,
                max_age: float | None = None) -> Resolution:
        """The URL's record, crawled first if need be; see AsyncClient.resolve."""
        return self._run(self._client.resolve(url, timeout, refresh=refresh, max_age=max_age))

    def submit(self, urls: Iterable[str] = (), *, tweets: Iterable[str] = (),
               refresh: bool = False, source: str | None = None, submission_id: str = "",
               on_progress: Callable[[int], object] | None = None) -> int:
        """Publish URLs (and tweets) to be resolved; see AsyncClient.submit."""
        return self._run(self._client.submit(
            list(_url_list(urls, "submit")), tweets=list(_url_list(tweets, "submit")),
            refresh=refresh, source=source, submission_id=submission_id, on_progress=on_progress))

    def events(self) -> EventIterator:
        """The UrlProcessed events published from now on, as an iterator; see
        AsyncClient.events. Use it as a context manager to subscribe before submitting."""
        return EventIterator(self, self._client.events())


async def _awaited(step: Awaitable[T]) -> T:
    return await step


def _stop_loop(loop: asyncio.AbstractEventLoop) -> None:
    if not loop.is_closed():
        loop.call_soon_threadsafe(loop.stop)


class EventIterator:
    """UrlProcessed events as they are published; from `Client.events()`.

        with client.events() as events:       # subscribed
            client.submit([url])
            event = events.next(timeout=30)   # or: for event in events: ...
    """

    def __init__(self, client: Client, stream: EventStream):
        self._client = client
        self._stream = stream

    @property
    def dropped(self) -> int:
        """Events dropped because too many awaited reading; see EventStream."""
        return self._stream.dropped

    def subscribe(self) -> None:
        """Subscribe now (once): events published after this returns are all delivered."""
        self._client._run(self._stream.subscribe())

    def close(self) -> None:
        """Unsubscribe; iteration ends."""
        if not self._client._closed:
            self._client._run(self._stream.close())

    def __enter__(self) -> EventIterator:
        self.subscribe()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[UrlProcessed]:
        return self

    def __next__(self) -> UrlProcessed:
        try:
            return self._client._run(self._stream.__anext__(), reading=True)
        except StopAsyncIteration:
            raise StopIteration from None

    def next(self, timeout: float | None = None) -> UrlProcessed:
        """The next event; TimeoutError when none came within `timeout` seconds (an event that
        comes later is kept for the next call), StopIteration once closed."""
        async def within() -> UrlProcessed:
            return await asyncio.wait_for(self._stream.__anext__(), timeout)
        try:
            return self._client._run(within(), reading=True)
        except StopAsyncIteration:
            raise StopIteration from None

