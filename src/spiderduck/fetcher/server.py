"""FetcherService over gRPC: a thin adapter; errors map to gRPC codes here only. With traces on
(src/spiderduck/core/telemetry.py) each call is a `Fetch` span continuing the caller's trace (the traceparent
of its gRPC metadata).

What the fetcher's gRPC server receives is capped (spiderduck.rpc.server's request_caps):
  FetcherService  FETCH_REQUEST_CAP (145 KiB): a FetchRequest is one URL (at most MAX_URL_CHARS
                  characters, 4 bytes each in UTF-8 at worst: 32 KiB), two validators as an origin
                  sent them (an entity-tag and an HTTP-date, each at most one header line: 8 KiB),
                  a cookie (browser_profile.MAX_COOKIE_CHARS characters, 4 bytes each at worst:
                  32 KiB), a purpose word, a profile word, a file's byte range
                  (byte_ranges.MAX_RANGE_CHARS) and numbers; 81 KiB at most, with 64 KiB of
                  headroom. A malformed range, an unknown profile or a cookie that cannot be sent
                  (a control character, or too long) is INVALID_ARGUMENT.
  FetcherAdmin    ADMIN_REQUEST_CAP (319 KiB): one domain, host name or URL (32 KiB) per call, or
                  ListDomains naming up to 1,000 host names (253 bytes each, DNS's longest, 8 of
                  framing); with 64 KiB of headroom.
A larger request is RESOURCE_EXHAUSTED, and never read whole. fetcher.max_concurrent_calls
bounds the calls served at once (RESOURCE_EXHAUSTED past it)."""
from __future__ import annotations

import logging

import grpc
from opentelemetry.trace import SpanKind

from spiderduck.wire import fetch_proto

from spiderduck.core import byte_ranges, telemetry
from spiderduck.core.config import Settings
from spiderduck.core.errors import FetcherBusy, WrongFetcher
from spiderduck.core.freshness import Validators
from spiderduck.fetcher import admin, browser_profile
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.rpc.guard import callers_guard
from spiderduck.rpc.server import REQUEST_HEADROOM, GrpcServer
from spiderduck.v1 import fetcher_pb2, fetcher_pb2_grpc
from spiderduck.wire.record_limits import MAX_URL_CHARS

log = logging.getLogger("spiderduck.fetcher")
SERVICE_NAME = fetcher_pb2.DESCRIPTOR.services_by_name["FetcherService"].full_name

URL_BYTES = 4 * MAX_URL_CHARS       # the longest URL, in UTF-8 at worst
HEADER_LINE_BYTES = 8 * 1024        # the longest header line an origin's answer may carry (aiohttp's)
COOKIE_BYTES = 4 * browser_profile.MAX_COOKIE_CHARS     # the longest cookie, in UTF-8 at worst
FETCH_REQUEST_CAP = URL_BYTES + 2 * HEADER_LINE_BYTES + COOKIE_BYTES + 1024 + REQUEST_HEADROOM
MAX_LISTED_DOMAINS = 1000
ADMIN_REQUEST_CAP = max(URL_BYTES + 64, MAX_LISTED_DOMAINS * (253 + 8)) + REQUEST_HEADROOM
REQUEST_CAPS = {SERVICE_NAME: FETCH_REQUEST_CAP, admin.SERVICE_NAME: ADMIN_REQUEST_CAP}


class FetcherServicer(fetcher_pb2_grpc.FetcherServiceServicer):
    def __init__(self, fetcher: Fetcher):
        self._fetcher = fetcher

    async def Fetch(self, request: fetcher_pb2.FetchRequest, context: grpc.aio.ServicerContext):
        if not request.url:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "url is required")
        if request.range:
            try:
                byte_ranges.parse_range(request.range, self._fetcher.settings.max_body_bytes)
            except byte_ranges.InvalidRange as exc:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        try:
            browser_profile.check(request.profile, request.cookie)
        except (browser_profile.UnknownProfile, browser_profile.InvalidCookie) as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        with telemetry.span("Fetch", parent=telemetry.extract(context.invocation_metadata()),
                            kind=SpanKind.SERVER,
                            attributes={"url.full": request.url, "spiderduck.purpose": request.purpose}):
            return await self._fetch(request, context)

    async def _fetch(self, request: fetcher_pb2.FetchRequest, context: grpc.aio.ServicerContext):
        try:
            validators = Validators(request.if_none_match, request.if_modified_since)
            result = await self._fetcher.fetch(request.url, max_body_bytes=request.max_body_bytes,
                                               purpose=request.purpose, max_wait=request.deadline_seconds,
                                               validators=validators or None, render=request.render,
                                               range=request.range, profile=request.profile,
                                               cookie=request.cookie)
        except FetcherBusy as exc:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
        except WrongFetcher as exc:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
        return fetch_proto.to_proto(result)


def register(server, fetcher: Fetcher) -> None:
    server.add(fetcher_pb2_grpc.add_FetcherServiceServicer_to_server, FetcherServicer(fetcher),
               SERVICE_NAME)


def grpc_server(settings: Settings) -> GrpcServer:
    """The fetcher's gRPC server, bound neither yet nor serving: its callers' guards, at most
    fetcher.max_concurrent_calls calls at once, REQUEST_CAPS on what it receives."""
    s = settings.fetcher
    return GrpcServer(s.listen, max_concurrent_rpcs=s.max_concurrent_calls, stop_grace=settings.drain_seconds,
                      tls=settings.tls, request_caps=REQUEST_CAPS, guards={
                          SERVICE_NAME: callers_guard(s.allowed_callers, "FetcherService"),
                          admin.SERVICE_NAME: callers_guard(s.admin_callers, "FetcherAdmin")})
