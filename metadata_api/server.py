"""MetadataService over gRPC: GetUrlMetadata over the metadata store (a thin adapter).

Answers are written from the stored records' bytes (metadata_api.responses): the method is
registered with a serializer that sends bytes as they are. Requests arrive as bytes too and are
parsed here, so a malformed one (garbage, invalid UTF-8 in a URL) is INVALID_ARGUMENT with the
reason rather than gRPC's UNKNOWN. An answer over metadata_api.max_response_bytes is
RESOURCE_EXHAUSTED before it is built. A URL not found is `pending` when it is queued or being
crawled (common.pending; only with NATS).
"""
from __future__ import annotations

import logging

import grpc
from google.protobuf.message import DecodeError

from common import urls
from common.errors import BusError, StoreError
from common.pending import PendingLookup
from common.stores.metadata import AnswerTooLarge, MetadataStore
from metadata_api import responses
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc

log = logging.getLogger("spiderduck.metadata_api")
SERVICE_NAME = metadata_pb2.DESCRIPTOR.services_by_name["MetadataService"].full_name


def lookup_key(url: str) -> str:
    """The form a URL is stored under: canonical if it parses, else as given (trimmed)."""
    try:
        return urls.canonicalize(url)
    except urls.InvalidUrl:
        return url.strip()


# Bytes of framing per result beyond its URL and record (tags and lengths), at most.
_FRAMING = 16


class MetadataServicer(metadata_pb2_grpc.MetadataServiceServicer):
    def __init__(self, store: MetadataStore, max_urls: int, max_response_bytes: int,
                 pending: PendingLookup | None = None):
        self._store = store
        self._max_urls = max_urls
        self._max_response_bytes = max_response_bytes
        self._pending = pending

    async def GetUrlMetadata(self, data: bytes, context: grpc.aio.ServicerContext):
        try:
            request = metadata_pb2.GetUrlMetadataRequest.FromString(data)
        except DecodeError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"not a GetUrlMetadataRequest (URLs must be UTF-8 text): {exc}")
        if len(request.urls) > self._max_urls:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"{len(request.urls)} URLs requested; at most {self._max_urls} per call")
        framing = sum(len(u) + _FRAMING for u in request.urls)
        refusal = None
        try:
            # Reading stops once the records pass what is left of the budget: a call never
            # holds much more than max_response_bytes, however many big records it names.
            records = await self._store.get_many_wire([lookup_key(u) for u in request.urls],
                                                      max_bytes=max(1, self._max_response_bytes - framing))
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
        return responses.response(request.urls, records, await self._waiting(request.urls, records))

    async def _waiting(self, asked, records) -> list[bool] | None:
        """Which URLs not found are queued or in flight (None: no NATS to ask). NATS failing
        costs the answer its `pending`, never the answer."""
        missing = [n for n, record in enumerate(records) if record is None]
        if self._pending is None or not missing:
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
    grpc_server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, {
        "GetUrlMetadata": grpc.unary_unary_rpc_method_handler(
            servicer.GetUrlMetadata,
            request_deserializer=_as_is,
            response_serializer=_as_is)}),))


def register(server, store: MetadataStore, max_urls: int, max_response_bytes: int,
             pending: PendingLookup | None = None) -> None:
    server.add(_add_servicer, MetadataServicer(store, max_urls, max_response_bytes, pending), SERVICE_NAME)
