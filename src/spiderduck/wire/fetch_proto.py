"""FetchResult <-> spiderduck.v1.FetchResponse."""
from __future__ import annotations

from spiderduck.core.fetch import FetchResult
from spiderduck.core.status import Status
from spiderduck.v1 import fetcher_pb2 as pb


def to_proto(r: FetchResult) -> pb.FetchResponse:
    return pb.FetchResponse(
        status=int(r.status), http_status=r.http_status,
        headers=[pb.Header(name=k, value=v) for k, v in r.headers],
        body=r.body, truncated=r.truncated, error=r.error,
        timing=pb.FetchTiming(queued_seconds=r.queued_seconds, robots_seconds=r.robots_seconds,
                              origin_seconds=r.origin_seconds),
        remote_address=r.remote_address, fetcher_id=r.fetcher_id,
        fetched_at=r.fetched_at, rendered=r.rendered, render_outcome=r.render_outcome)


def from_proto(url: str, msg: pb.FetchResponse) -> FetchResult:
    return FetchResult(
        url=url, status=Status(msg.status), http_status=msg.http_status,
        headers=tuple((h.name, h.value) for h in msg.headers), body=msg.body,
        truncated=msg.truncated, error=msg.error, remote_address=msg.remote_address,
        fetched_at=msg.fetched_at, queued_seconds=msg.timing.queued_seconds,
        robots_seconds=msg.timing.robots_seconds, origin_seconds=msg.timing.origin_seconds,
        fetcher_id=msg.fetcher_id, rendered=msg.rendered, render_outcome=msg.render_outcome)
