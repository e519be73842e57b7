"""FetcherService over gRPC: a thin adapter; errors map to gRPC codes here only. With traces on
(src/spiderduck/core/telemetry.py) each call is a `Fetch` span continuing the caller's trace (the traceparent
of its gRPC metadata)."""
from __future__ import annotations

import logging

import grpc
from opentelemetry.trace import SpanKind

from spiderduck.wire import fetch_proto

from spiderduck.core import telemetry
from spiderduck.core.errors import FetcherBusy, WrongFetcher
from spiderduck.core.freshness import Validators
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.v1 import fetcher_pb2, fetcher_pb2_grpc

log = logging.getLogger("spiderduck.fetcher")
SERVICE_NAME = fetcher_pb2.DESCRIPTOR.services_by_name["FetcherService"].full_name


class FetcherServicer(fetcher_pb2_grpc.FetcherServiceServicer):
    def __init__(self, fetcher: Fetcher):
        self._fetcher = fetcher

    async def Fetch(self, request: fetcher_pb2.FetchRequest, context: grpc.aio.ServicerContext):
        if not request.url:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "url is required")
        with telemetry.span("Fetch", parent=telemetry.extract(context.invocation_metadata()),
                            kind=SpanKind.SERVER,
                            attributes={"url.full": request.url, "spiderduck.purpose": request.purpose}):
            return await self._fetch(request, context)

    async def _fetch(self, request: fetcher_pb2.FetchRequest, context: grpc.aio.ServicerContext):
        try:
            validators = Validators(request.if_none_match, request.if_modified_since)
            result = await self._fetcher.fetch(request.url, max_body_bytes=request.max_body_bytes,
                                               purpose=request.purpose, max_wait=request.deadline_seconds,
                                               validators=validators or None, render=request.render)
        except FetcherBusy as exc:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
        except WrongFetcher as exc:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
        return fetch_proto.to_proto(result)


def register(server, fetcher: Fetcher) -> None:
    server.add(fetcher_pb2_grpc.add_FetcherServiceServicer_to_server, FetcherServicer(fetcher),
               SERVICE_NAME)
