"""ExplainUrl: why a URL's preview looks as it does (issue 30).

    record (the store) -> Explanation { metadata, fields (each filled field's source), findings }

This first step explains from what the record holds: each field's `source` as the extraction
stored it (UrlMetadata.provenance). Re-running extraction on the stored raw page, for the values
that lost (`rejected`), and the findings per platform are later steps of issue 30.
A URL never seen is NOT_FOUND.
"""
from __future__ import annotations

import grpc

from common.errors import StoreError
from common.findings import findings
from common.stores.keys import lookup_key
from common.stores.metadata import MetadataStore
from spiderduck.v1 import metadata_pb2


async def explain(store: MetadataStore, request: metadata_pb2.ExplainUrlRequest,
                  context: grpc.aio.ServicerContext) -> metadata_pb2.Explanation:
    if not request.url:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "ExplainUrl needs a url")
    try:
        [wire] = await store.get_many_wire([lookup_key(request.url)])
    except StoreError as exc:
        refusal = str(exc)
    else:
        refusal = None
    if refusal is not None:
        await context.abort(grpc.StatusCode.UNAVAILABLE, refusal)
    if wire is None:
        await context.abort(grpc.StatusCode.NOT_FOUND, f"{request.url} has never been seen")
    metadata = metadata_pb2.UrlMetadata.FromString(wire)
    metadata.url = request.url
    return metadata_pb2.Explanation(metadata=metadata, fields=list(metadata.provenance),
                                    findings=findings(metadata))
