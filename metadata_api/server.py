"""MetadataService over gRPC: GetUrlMetadata over the metadata store (a thin adapter)."""
from __future__ import annotations

import grpc

from common import record_proto, urls
from common.errors import StoreError
from common.stores.metadata import MetadataStore
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
            records = await self._store.get_many([lookup_key(u) for u in request.urls])
        except StoreError as exc:
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        response = metadata_pb2.GetUrlMetadataResponse()
        for url, record in zip(request.urls, records):
            result = response.results.add(url=url, found=record is not None)
            if record is not None:
                result.metadata.CopyFrom(record_proto.to_proto(record))
        return response


def register(server, store: MetadataStore, max_urls: int) -> None:
    server.add(metadata_pb2_grpc.add_MetadataServiceServicer_to_server,
               MetadataServicer(store, max_urls), SERVICE_NAME)
