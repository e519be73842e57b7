"""AsyncClient: the client for asyncio code (get, lookups, resolve, submit, events)."""
from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator
from typing import Any

import grpc
import grpc.aio
from nats.errors import Error as NatsError
from nats.errors import NoRespondersError
from nats.js.errors import NoStreamResponseError

from spiderduck.client.keys import without_userinfo
from spiderduck.client.errors import (Error, InvalidUrl, NotConfigured, ServiceError, StillResolving,
                                      Unavailable)
from spiderduck.client.events import EventStream
from spiderduck.client.names import (DEFAULT_METADATA, MAX_URLS, PROTOBUF_CONTENT_TYPE, PUBLISH_WINDOW,
                                     QUEUE_SUBJECT, QUEUED_TTL, RESOLUTION_KEY, SUBMIT_SUBJECT)
from spiderduck.client.results import Lookup, Resolution
from spiderduck.client.security import (GrpcOptions, NatsOptions, PlaintextServer, abandon, nats_refusal,
                                        shown_url)
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc
from spiderduck.v1.events_pb2 import UrlSubmission


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
    `queued_ttl`: no longer used (the service writes the queued markers); kept so that code
    passing it still runs.
    `source`: what `submit` names as the submissions' source (echoed in their events).

    Security, as the service's deployment turns it on (the same names as its config):
    `token` is sent as `authorization: Bearer <token>` on every MetadataService call (the
    service's `metadata_api.tokens_file`). `tls_ca` (PEM bundle the server's certificate must
    chain to) turns TLS on for gRPC; `tls_cert` and `tls_key` (PEM files) are the client
    certificate a server with `tls.client_auth: require` asks for; `tls_server_name` verifies
    the server's certificate against that name instead of the host of `metadata`. For NATS:
    `nats_creds` (a .creds file), `nats_nkey_seed` (a file holding an nkey seed), `nats_user`
    with `nats_password_file`, or `nats_token_file`; `nats_tls_ca`, `nats_tls_cert` and
    `nats_tls_key` for a NATS served over TLS. Secrets are read from files (the token is the
    one exception) and never appear in the client's errors.

    Nothing connects until a method needs it; use one AsyncClient from one event loop.
    """

    def __init__(self, metadata: str = DEFAULT_METADATA, nats_url: str | None = None, *,
                 timeout: float = 30.0, resolve_timeout: float = 35.0, max_urls: int = MAX_URLS,
                 connect_timeout: float = 5.0, queued_ttl: float = QUEUED_TTL,
                 source: str = "spiderduck.client", name: str = "spiderduck-client",
                 token: str | None = None, tls_ca: str | None = None, tls_cert: str | None = None,
                 tls_key: str | None = None, tls_server_name: str | None = None,
                 nats_creds: str | None = None, nats_nkey_seed: str | None = None,
                 nats_user: str | None = None, nats_password_file: str | None = None,
                 nats_token_file: str | None = None, nats_tls_ca: str | None = None,
                 nats_tls_cert: str | None = None, nats_tls_key: str | None = None):
        if max_urls < 1:
            raise ValueError(f"max_urls must be at least 1, not {max_urls}")
        self._grpc = GrpcOptions(token=token or None, ca=tls_ca or None, cert=tls_cert or None,
                                 key=tls_key or None, server_name=tls_server_name or None)
        self._nats_auth = NatsOptions(creds=nats_creds or None, nkey_seed=nats_nkey_seed or None,
                                      user=nats_user or None, password_file=nats_password_file or None,
                                      token_file=nats_token_file or None, tls_ca=nats_tls_ca or None,
                                      tls_cert=nats_tls_cert or None, tls_key=nats_tls_key or None)
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
        self._direct = False          # no metadata-api answered on QUEUE_SUBJECT: publish straight
        self._direct_ready = False    # _before_direct done
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
            nc, self._nc = self._nc, None
            with contextlib.suppress(Exception):
                await nc.close()

    def _check_open(self) -> None:
        if self._closed:
            raise Error("this SpiderDuck client is closed")

    # -- gRPC: get and resolve

    def _service(self) -> metadata_pb2_grpc.MetadataServiceStub:
        self._check_open()
        if self._stub is None:
            self._channel = self._grpc.channel(self.metadata)
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
                response = await service.GetUrlMetadata(request, timeout=self.timeout,
                                                         metadata=self._grpc.call_metadata)
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
        call = service.ResolveUrl(request, timeout=deadline, metadata=self._grpc.call_metadata)
        try:
            result = await call
            trailing = await call.trailing_metadata()
        except grpc.aio.AioRpcError as exc:
            raise self._failed(exc, url=url, elapsed=loop.time() - started, resolving=True) from None
        resolution = dict(trailing or ()).get(RESOLUTION_KEY, "")
        return Resolution(url=url, resolution=str(resolution), record=result.metadata)

    async def explain(self, url: str, timeout: float | None = None) -> metadata_pb2.Explanation:
        """Why the URL's preview looks as it does (ExplainUrl): its record, where each field was
        read, and what each platform will show of its card. Never fetches. ServiceError with code
        "NOT_FOUND" for a URL the service has never seen."""
        try:
            request = metadata_pb2.ExplainUrlRequest(url=url)
        except (TypeError, ValueError) as exc:
            raise InvalidUrl(f"the URL must be text (str, UTF-8): {exc}") from None
        try:
            return await self._service().ExplainUrl(request, timeout=timeout,
                                                    metadata=self._grpc.call_metadata)
        except grpc.aio.AioRpcError as exc:
            raise self._failed(exc, url=url) from None

    # -- NATS: submit and events

    async def _nats(self) -> Any:
        """The NATS connection, made on first use."""
        self._check_open()
        if self.nats_url is None:
            raise NotConfigured(
                "submit() and events() need nats_url, the NATS the service uses (e.g. "
                "nats_url='nats://127.0.0.1:4222'; `spiderduck up` writes its own's to var/nats.url, "
                "and the token it requires to var/nats.token: nats_token_file='var/nats.token')")
        if self._nats_lock is None:
            self._nats_lock = asyncio.Lock()
        async with self._nats_lock:
            if self._nc is None or self._nc.is_closed:
                self._nc = await self._connect_nats()
                self._direct = False
        return self._nc

    async def _connect_nats(self) -> Any:
        """Connect to any server of `nats_url` within `connect_timeout`; once connected, the
        connection reconnects by itself (NATS restarts, cluster failovers)."""
        assert self.nats_url is not None
        servers = [part.strip() for part in self.nats_url.split(",") if part.strip()]
        if not servers:
            raise NotConfigured(f"nats_url {self.nats_url!r} names no server")
        failures: list[BaseException] = []
        url, connected = self.nats_url, False

        async def on_error(exc: Exception) -> None:    # nats-py's default logs a traceback
            failures.append(exc)
            refused = None if connected else nats_refusal(exc)
            if refused:             # out of nats-py's first connect(), which would try for ever
                raise NotConfigured(self._nats_auth.refused(url, refused))

        options: dict[str, Any] = {     # (nats-py's hints say int for seconds; floats work)
            "name": self.name, "error_cb": on_error, "connect_timeout": min(5.0, self.connect_timeout),
            "allow_reconnect": True, "max_reconnect_attempts": -1, "reconnect_time_wait": 0.5,
            **self._nats_auth.connect_kwargs()}
        try:
            async with asyncio.timeout(self.connect_timeout):
                while True:
                    nc = self._nats_auth.new_client()
                    try:
                        await nc.connect(servers, **options)
                        connected = True
                        return nc
                    except NotConfigured:
                        abandon(nc)
                        raise
                    except PlaintextServer as exc:
                        abandon(nc)
                        raise NotConfigured(self._nats_auth.refused(self.nats_url, str(exc))) from None
                    except (NatsError, OSError) as exc:
                        failures.append(exc)
                        await asyncio.sleep(0.25)
        except TimeoutError:
            last = f"{type(failures[-1]).__name__}: {failures[-1]}" if failures else "no answer"
            raise Unavailable(shown_url(f"cannot connect to NATS at {self.nats_url} within "
                                        f"{self.connect_timeout:g}s: {last}")) from None

    async def _before_direct(self, js: Any) -> None:
        """Called once before `submit` publishes straight to the stream (no metadata-api answers
        on the queue subject): the CLI's client makes SpiderDuck's streams here, as the service
        does."""

    async def _submit_one(self, nc: Any, data: bytes, headers: dict[str, str]) -> None:
        """Ask the service to mark one submission queued and publish it (QUEUE_SUBJECT); with no
        metadata-api there to answer, publish it straight to SUBMIT_SUBJECT, unmarked. Raises
        Unavailable."""
        if not self._direct:
            try:
                answer = await nc.request(QUEUE_SUBJECT, data, timeout=self.timeout, headers=headers)
            except NoRespondersError:
                self._direct = True
            except (NatsError, asyncio.TimeoutError) as exc:
                raise Unavailable(f"submit on {QUEUE_SUBJECT} failed: {exc}") from exc
            else:
                if answer.data:
                    raise Unavailable(f"submit on {QUEUE_SUBJECT} failed: "
                                      f"{answer.data.decode('utf-8', 'replace')}")
                return
        js = nc.jetstream()
        if not self._direct_ready:
            await self._before_direct(js)
            self._direct_ready = True
        try:
            await js.publish(SUBMIT_SUBJECT, data, headers=headers)
        except (NoRespondersError, NoStreamResponseError) as exc:
            raise Unavailable(f"publish to {SUBMIT_SUBJECT} failed: no stream takes it on "
                              f"{shown_url(self.nats_url or '')}: is that the service's NATS, "
                              "and has the service started there?") from exc
        except (NatsError, asyncio.TimeoutError, OSError) as exc:
            raise Unavailable(f"publish to {SUBMIT_SUBJECT} failed: {exc}") from exc

    async def submit(self, urls: Iterable[str] = (), *, tweets: Iterable[str] = (),
                     refresh: bool = False, source: str | None = None, submission_id: str = "",
                     on_progress: Callable[[int], object] | None = None) -> int:
        """Publish URLs (and tweets, whose URLs the service resolves) to be resolved; returns
        how many submissions were published. Each URL gets one UrlProcessed (see `events`).

        Each is sent as a protobuf UrlSubmission to `spiderduck.urls.queue`, where the service
        marks its URLs queued and publishes it to `spiderduck.urls.submit` with JetStream, and
        answers once stored; with no metadata-api running to answer, it is published to
        `spiderduck.urls.submit` straight, unmarked (its URLs show as pending once a scheduler
        claims them). `refresh`:
        re-fetch even a fresh record. `source` (default the client's) and `submission_id` (at
        most 256 characters each) are echoed in the events as `source` and `submission_id`.
        `on_progress(n)` is called after each window of submissions confirmed, with how many
        were confirmed so far."""
        options: dict[str, Any] = {"source": self.source if source is None else source,
                                   "refresh": refresh}
        if submission_id:
            options["id"] = submission_id
        items = [UrlSubmission(url=without_userinfo(u), **options) for u in _url_list(urls, "submit")]
        items += [UrlSubmission(tweet=t, **options) for t in _url_list(tweets, "submit")]
        if not items:
            return 0
        nc = await self._nats()
        headers = {"Content-Type": PROTOBUF_CONTENT_TYPE}
        for start in range(0, len(items), PUBLISH_WINDOW):
            batch = items[start:start + PUBLISH_WINDOW]
            await asyncio.gather(*(self._submit_one(nc, item.SerializeToString(), headers) for item in batch))
            if on_progress is not None:
                on_progress(start + len(batch))
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

