"""MetadataService over gRPC: GetUrlMetadata over the metadata store (a thin adapter).

Answers are written from the stored records' bytes (metadata_api.responses): the method is
registered with a serializer that sends bytes as they are.
"""
from __future__ import annotations

import grpc

from common import urls
from common.errors import StoreError
from common.stores.metadata import MetadataStore
from metadata_api import responses
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc

SERVICE_NAME = metadata_pb2.DESCRIPTOR.services_by_name["MetadataService"].full_name


def lookup_key(url: str) -> str:
    """The form a URL is stored under: canonical if it parses, else as given (trimmed)."""
    try:
        return urls.canonicalize(url)
    except urls.InvalidUrl:
        return url.strip()


class MetadataServicer(metadata_pb2_grpc.MetadataServiceServicer):
    def __init__(self, store: MetadataStore, max_urls: int):
        self._store = store
        self._max_urls = max_urls

    async def GetUrlMetadata(self, request, context: grpc.aio.ServicerContext):
        if len(request.urls) > self._max_urls:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"{len(request.urls)} URLs requested; at most {self._max_urls} per call")
        try:
            records = await self._store.get_many_wire([lookup_key(u) for u in request.urls])
        except StoreError as exc:
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        return responses.response(request.urls, records)


def _as_is(data: bytes) -> bytes:
    return data


def _add_servicer(servicer: MetadataServicer, grpc_server) -> None:
    """As metadata_pb2_grpc.add_MetadataServiceServicer_to_server, but the answer is bytes
    already: the response serializer sends them as they are."""
    grpc_server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, {
        "GetUrlMetadata": grpc.unary_unary_rpc_method_handler(
            servicer.GetUrlMetadata,
            request_deserializer=metadata_pb2.GetUrlMetadataRequest.FromString,
            response_serializer=_as_is)}),))


def register(server, store: MetadataStore, max_urls: int) -> None:
    server.add(_add_servicer, MetadataServicer(store, max_urls), SERVICE_NAME)
