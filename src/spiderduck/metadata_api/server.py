"""MetadataService over gRPC: GetUrlMetadata over the metadata store (a thin adapter), and
ResolveUrl (metadata_api.resolver) when the metadata-api has NATS; with traces on
(src/spiderduck/core/telemetry.py) a ResolveUrl call is a span continuing its caller's trace.

Answers are written from the stored records' bytes (metadata_api.responses): the method is
registered with a serializer that sends bytes as they are. A malformed request (garbage, invalid
UTF-8 in a URL) is INVALID_ARGUMENT with the reason, as on every service of a
spiderduck.rpc.server server (spiderduck.rpc.guard.checked). An answer over metadata_api.max_response_bytes is
RESOURCE_EXHAUSTED before it is built. A URL not found is `pending` when it is queued or being
crawled (spiderduck.bus.pending; only with NATS). ResolveUrl calls wait in places of their own
(metadata_api.places): max_concurrent_resolves in all, max_resolves_per_caller for one caller.

What the server receives is capped (request_caps; spiderduck.rpc.server refuses a larger
request RESOURCE_EXHAUSTED, never reading it whole), with REQUEST_HEADROOM (64 KiB) over each
method's largest legitimate request, a URL counted at URL_BYTES (MAX_URL_CHARS characters, 4
bytes each in UTF-8 at worst: 32 KiB):
  GetUrlMetadata  metadata_api.max_urls URLs, each with its framing (8 bytes), but no more than
                  metadata_api.max_response_bytes, since the answer repeats every URL (a request
                  whose URLs alone pass it cannot be answered): 4 MiB + 64 KiB by default
  ResolveUrl      one URL, a max_age and a flag: ONE_URL_CAP (96 KiB)
  ExplainUrl      one URL: ONE_URL_CAP
  Forget          metadata_api.max_urls URLs, a domain and a reason (max_forget_reason_chars)
  Unforget        metadata_api.max_urls URLs and a domain
  ListForgotten   nothing: REQUEST_HEADROOM

Forget, ListForgotten and Unforget (metadata_api.forget) are admin actions; a URL or domain they
forgot is answered by GetUrlMetadata and ResolveUrl as never seen (spiderduck.bus.denylist:
a set lookup per URL), even if a record of it were still stored.
"""
from __future__ import annotations

import logging

import grpc
from opentelemetry.trace import SpanKind

from spiderduck.wire import record_proto

from spiderduck.core import telemetry

from spiderduck.bus.pending import PendingLookup
from spiderduck.core import urls
from spiderduck.core.config import MetadataApiSettings, Settings
from spiderduck.core.errors import BusError, StoreError
from spiderduck.metadata_api import explain, responses
from spiderduck.bus.denylist import Denylist
from spiderduck.metadata_api.admins import Admins
from spiderduck.metadata_api.auth import RateLimit, TokenFile, metadata_guard
from spiderduck.metadata_api.forget import ForgetService
from spiderduck.metadata_api.places import Places, caller_of
from spiderduck.query.explainer import Explainer
from spiderduck.query.resolver import Forgotten, Resolver, StillResolving
from spiderduck.rpc.server import REQUEST_HEADROOM, GrpcServer
from spiderduck.stores.keys import lookup_key
from spiderduck.stores.metadata import AnswerTooLarge, MetadataStore
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc
from spiderduck.wire.record_limits import MAX_URL_CHARS
from spiderduck.core.frozen import evolve

log = logging.getLogger("spiderduck.metadata_api")
RESOLUTION_KEY = "spiderduck-resolution"   # ResolveUrl's trailing metadata: how it was answered
_REPLY_ROOM = 0.05      # seconds of a caller's deadline kept for the answer to reach it
SERVICE_NAME = metadata_pb2.DESCRIPTOR.services_by_name["MetadataService"].full_name


# Bytes of framing per result beyond its URL and record (tags and lengths), at most.
_FRAMING = 16
URL_BYTES = 4 * MAX_URL_CHARS
ONE_URL_CAP = URL_BYTES + 64 + REQUEST_HEADROOM


def request_caps(settings: MetadataApiSettings) -> dict[str, int]:
    """The largest request each method receives (see the module's words)."""
    urls = min(settings.max_urls * (URL_BYTES + 8), settings.max_response_bytes)   # each URL is answered
    listed = settings.max_urls * (URL_BYTES + 8) + 1024 + REQUEST_HEADROOM      # URLs and a domain
    return {f"/{SERVICE_NAME}/GetUrlMetadata": urls + REQUEST_HEADROOM,
            f"/{SERVICE_NAME}/ResolveUrl": ONE_URL_CAP, f"/{SERVICE_NAME}/ExplainUrl": ONE_URL_CAP,
            f"/{SERVICE_NAME}/Forget": listed + 4 * settings.max_forget_reason_chars + 8,
            f"/{SERVICE_NAME}/Unforget": listed, f"/{SERVICE_NAME}/ListForgotten": REQUEST_HEADROOM}


def grpc_server(settings: Settings, *, tokens: TokenFile | None = None,
                limit: RateLimit | None = None, admin_tokens: TokenFile | None = None) -> GrpcServer:
    """The metadata API's gRPC server, not serving yet: its guard (metadata_api.auth; `tokens` and
    the ResolveUrl rate `limit` shared with the web UI when given, else its own), the places of its calls
    (max_concurrent_calls, and max_concurrent_resolves for ResolveUrl) and its caps."""
    api = settings.metadata_api
    return GrpcServer(api.listen, max_concurrent_rpcs=api.max_concurrent_calls + api.max_concurrent_resolves,
                      stop_grace=settings.drain_seconds, tls=settings.tls, request_caps=request_caps(api),
                      guards={SERVICE_NAME: metadata_guard(api, settings.tls, tokens, limit, admin_tokens)})


class MetadataServicer(metadata_pb2_grpc.MetadataServiceServicer):
    def __init__(self, store: MetadataStore, settings: MetadataApiSettings,
                 pending: PendingLookup | None = None, resolver: Resolver | None = None,
                 explainer: Explainer | None = None, places: Places | None = None,
                 forgetting: ForgetService | None = None, denylist: Denylist | None = None):
        self._store = store
        self._forgetting = forgetting or ForgetService(None, Admins(settings), settings)
        self._denylist = denylist
        self._explainer = explainer or Explainer(store, None, workers=0, budget=1.0, parser="",
                                                         robots_token="")
        self._max_urls = settings.max_urls
        self._max_response_bytes = settings.max_response_bytes
        self._pending = pending
        self._resolver = resolver
        self._resolve_timeout = settings.resolve_timeout
        # Each method its own bound: ResolveUrl calls wait for crawls, and must never take the
        # places of GetUrlMetadata's (the server admits the sum).
        self._slots = {"GetUrlMetadata": settings.max_concurrent_calls,
                       "ExplainUrl": settings.max_concurrent_calls}
        self._resolves = places or Places(settings.max_concurrent_resolves, settings.max_resolves_per_caller)

    async def _take_slot(self, method: str, context) -> None:
        """A place among `method`'s calls (RESOURCE_EXHAUSTED when none is left); the caller
        gives it back (self._slots[method] += 1) in a finally. Not an async context manager:
        that is a generator and two more awaits on every call, a tenth of what a single-URL
        GetUrlMetadata costs in Python."""
        if self._slots[method] <= 0:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, f"too many {method} calls at once")
        self._slots[method] -= 1

    async def ResolveUrl(self, request: metadata_pb2.ResolveUrlRequest, context: grpc.aio.ServicerContext):
        if self._resolver is None:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                "ResolveUrl needs NATS, and this metadata-api has none (set nats_url)")
        max_age = None
        if request.HasField("max_age"):
            max_age = request.max_age.seconds + request.max_age.nanos / 1e9    # ToTimedelta overflows
            if max_age < 0:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"max_age {max_age:g}s is negative")
        remaining = context.time_remaining()
        wait = self._resolve_timeout if remaining is None else min(self._resolve_timeout, remaining - _REPLY_ROOM)
        who = caller_of(context)
        refusal = self._resolves.take(who)
        if refusal is not None:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refusal)
        url = urls.without_userinfo(request.url)     # a password in it is never sent, kept or echoed
        try:
            # Traces on: a span continuing the caller's trace (its gRPC metadata's traceparent),
            # which the submission the resolver publishes carries on to the scheduler.
            with telemetry.span("ResolveUrl", parent=telemetry.extract(context.invocation_metadata()),
                                kind=SpanKind.SERVER, attributes={"url.full": url}):
                resolution, record = await self._resolver.resolve(url, max_age=max_age,
                                                                  refresh=request.refresh, wait=wait)
        except urls.InvalidUrl as exc:
            refusal = (grpc.StatusCode.INVALID_ARGUMENT, f"not a fetchable URL: {exc}")
        except Forgotten as exc:
            refusal = (grpc.StatusCode.NOT_FOUND, str(exc))
        except StillResolving as exc:
            refusal = (grpc.StatusCode.DEADLINE_EXCEEDED, str(exc))
        except (StoreError, BusError) as exc:
            refusal = (grpc.StatusCode.UNAVAILABLE, str(exc))
        finally:
            self._resolves.give(who)
        if refusal is not None:
            await context.abort(*refusal)
        context.set_trailing_metadata(((RESOLUTION_KEY, resolution),))
        metadata = record_proto.to_proto(evolve(record, url=url))
        return metadata_pb2.UrlMetadataResult(url=url, found=True, metadata=metadata).SerializeToString()

    async def Forget(self, request: metadata_pb2.ForgetRequest, context: grpc.aio.ServicerContext):
        return await self._forgetting.forget(request, context)

    async def ListForgotten(self, request: metadata_pb2.ListForgottenRequest, context: grpc.aio.ServicerContext):
        return await self._forgetting.list_forgotten(request, context)

    async def Unforget(self, request: metadata_pb2.UnforgetRequest, context: grpc.aio.ServicerContext):
        return await self._forgetting.unforget(request, context)

    async def ExplainUrl(self, request: metadata_pb2.ExplainUrlRequest, context: grpc.aio.ServicerContext):
        await self._take_slot("ExplainUrl", context)
        try:
            return await explain.explain(self._explainer, request, context)
        finally:
            self._slots["ExplainUrl"] += 1

    async def GetUrlMetadata(self, request: metadata_pb2.GetUrlMetadataRequest, context: grpc.aio.ServicerContext):
        await self._take_slot("GetUrlMetadata", context)
        try:
            return await self._get(request, context)
        finally:
            self._slots["GetUrlMetadata"] += 1

    async def _get(self, request: metadata_pb2.GetUrlMetadataRequest, context: grpc.aio.ServicerContext):
        asked = list(request.urls)       # each read of request.urls makes its strings again
        if len(asked) > self._max_urls:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"{len(asked)} URLs requested; at most {self._max_urls} per call")
        framing = sum(map(len, asked)) + _FRAMING * len(asked)
        refusal = None
        try:
            # Reading stops once the records pass what is left of the budget: a call never
            # holds much more than max_response_bytes, however many big records it names.
            keys = [lookup_key(u) for u in asked]
            records = await self._store.get_many_wire(keys, max_bytes=max(1, self._max_response_bytes - framing))
        except StoreError as exc:
            refusal = (grpc.StatusCode.UNAVAILABLE, str(exc))
        except AnswerTooLarge as exc:
            refusal = (grpc.StatusCode.RESOURCE_EXHAUSTED,
                       f"the answer would pass {exc.size + framing} bytes, over "
                       f"metadata_api.max_response_bytes ({self._max_response_bytes}); "
                       "ask for fewer URLs at a time")
        if refusal is not None:
            # Out of the except block: the abort must not carry the store's frames (and the
            # records they read) in its exception's context, which grpc keeps after the call.
            await context.abort(*refusal)
        denied = [False] * len(keys)
        if self._denylist is not None:
            denied = [self._denylist.forgotten(key, canonical=True) for key in keys]
            records = [None if gone else record for gone, record in zip(denied, records)]
        waiting = None
        if self._pending is not None and None in records:
            waiting = await self._waiting(asked, records, denied)
        return responses.response(asked, records, waiting)

    async def _waiting(self, asked, records, denied) -> list[bool] | None:
        """Which URLs not found are queued or in flight (None: NATS failed, which costs the
        answer its `pending`, never the answer). A forgotten URL (`denied`) never is: its
        submission's queued marker outlives it by streams.queued_ttl, and it is never seen."""
        missing = [n for n, record in enumerate(records) if record is None and not denied[n]]
        if not missing:
            return None
        try:
            found = await self._pending.pending([asked[n] for n in missing])
        except BusError as exc:
            log.warning("GetUrlMetadata: pending left out: %s", exc)
            return None
        waiting = [False] * len(records)
        for n, is_pending in zip(missing, found):
            waiting[n] = is_pending
        return waiting


def _as_is(data: bytes) -> bytes:
    return data


def _add_servicer(servicer: MetadataServicer, grpc_server) -> None:
    """As metadata_pb2_grpc.add_MetadataServiceServicer_to_server, but the answer is bytes
    already: the response serializer sends them as they are."""
    handlers = {name: grpc.unary_unary_rpc_method_handler(
        getattr(servicer, name), request_deserializer=request.FromString, response_serializer=_as_is)
        for name, request in (("GetUrlMetadata", metadata_pb2.GetUrlMetadataRequest),
                              ("ResolveUrl", metadata_pb2.ResolveUrlRequest))}
    for name, request, response in (("ExplainUrl", metadata_pb2.ExplainUrlRequest, metadata_pb2.Explanation),
                                    ("Forget", metadata_pb2.ForgetRequest, metadata_pb2.ForgetResponse),
                                    ("ListForgotten", metadata_pb2.ListForgottenRequest,
                                     metadata_pb2.ListForgottenResponse),
                                    ("Unforget", metadata_pb2.UnforgetRequest, metadata_pb2.UnforgetResponse)):
        handlers[name] = grpc.unary_unary_rpc_method_handler(
            getattr(servicer, name), request_deserializer=request.FromString,
            response_serializer=response.SerializeToString)
    grpc_server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))


def register(server, store: MetadataStore, settings: MetadataApiSettings,
             pending: PendingLookup | None = None, resolver: Resolver | None = None,
             explainer: Explainer | None = None, places: Places | None = None,
             forgetting: ForgetService | None = None, denylist: Denylist | None = None) -> None:
    """`explainer`: ExplainUrl's (None: it explains from the records alone); `places`: ResolveUrl's,
    when shared with the web UI's /api/v1/preview (None: its own); `forgetting`: Forget,
    ListForgotten and Unforget (None: FAILED_PRECONDITION, no NATS); `denylist`: what
    GetUrlMetadata answers as never seen (None: nothing)."""
    server.add(_add_servicer, MetadataServicer(store, settings, pending, resolver, explainer, places,
                                               forgetting, denylist), SERVICE_NAME)
