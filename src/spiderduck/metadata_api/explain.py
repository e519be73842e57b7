"""MetadataService.ExplainUrl over spiderduck.query.explainer (the stored record and page, extracted again):
INVALID_ARGUMENT without a url, NOT_FOUND for a URL never seen, UNAVAILABLE when the metadata
store does not answer. With traces on (src/spiderduck/core/telemetry.py) a call is a span continuing its
caller's trace. A refusal's text is cut at MAX_DETAIL characters: it travels in a header (a gRPC
client refuses more than 8 KiB of them, percent-encoded: up to 12 bytes a character)."""
from __future__ import annotations

import grpc
from opentelemetry.trace import SpanKind

from spiderduck.core import telemetry
from spiderduck.core.errors import StoreError
from spiderduck.query.explainer import Explainer, NeverSeen
from spiderduck.v1 import metadata_pb2

MAX_DETAIL = 300


async def explain(explainer: Explainer, request: metadata_pb2.ExplainUrlRequest,
                  context: grpc.aio.ServicerContext) -> metadata_pb2.Explanation:
    if not request.url:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "ExplainUrl needs a url")
    refusal = None
    with telemetry.span("ExplainUrl", parent=telemetry.extract(context.invocation_metadata()),
                        kind=SpanKind.SERVER, attributes={"url.full": request.url}):
        try:
            return await explainer.explanation(request.url)
        except NeverSeen as exc:
            refusal = (grpc.StatusCode.NOT_FOUND, str(exc))
        except StoreError as exc:
            refusal = (grpc.StatusCode.UNAVAILABLE, str(exc))
    code, detail = refusal
    await context.abort(code, detail if len(detail) <= MAX_DETAIL else detail[:MAX_DETAIL] + "...")
