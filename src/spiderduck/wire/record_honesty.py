"""A record's `honesty` (issue 43) <-> UrlMetadata.honesty and its JSON (protobuf's JSON mapping:
`checked_at` as RFC 3339, `differences` left out when empty), for spiderduck.wire.record_proto."""
from __future__ import annotations

from typing import Any

from spiderduck.core.record import Honesty, UrlRecord
from spiderduck.v1 import metadata_pb2 as pb
from spiderduck.wire import timestamps


def to_proto(rec: UrlRecord, msg: pb.UrlMetadata) -> None:
    h = rec.honesty
    if h is None:
        return
    msg.honesty.CopyFrom(pb.Honesty(verdict=h.verdict, differences=h.differences,
                                    browser_final_url=h.browser_final_url))
    if h.checked_at:
        msg.honesty.checked_at.CopyFrom(timestamps.from_epoch(h.checked_at))


def from_proto(msg: pb.UrlMetadata) -> Honesty | None:
    if not msg.HasField("honesty"):
        return None
    h = msg.honesty
    at = timestamps.to_epoch(h.checked_at) if h.HasField("checked_at") else 0.0
    return Honesty(h.verdict, tuple(h.differences), h.browser_final_url, at)


def to_dict(rec: UrlRecord, out: dict[str, Any]) -> None:
    h = rec.honesty
    if h is None:
        return
    value: dict[str, Any] = {}
    if h.verdict:
        value["verdict"] = h.verdict
    if h.differences:
        value["differences"] = list(h.differences)
    if h.browser_final_url:
        value["browser_final_url"] = h.browser_final_url
    if h.checked_at:
        value["checked_at"] = timestamps.from_epoch(h.checked_at).ToJsonString()
    out["honesty"] = value
