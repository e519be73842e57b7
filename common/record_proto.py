"""UrlRecord <-> spiderduck.v1.UrlMetadata, and the record's JSON (protobuf's JSON mapping)."""
from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timezone
from typing import Any

from google.protobuf import json_format
from google.protobuf.timestamp_pb2 import Timestamp

from common.record import Image, PageMetadata, Redirect, UrlRecord, Video, with_page
from common.status import Status
from spiderduck.v1 import metadata_pb2 as pb

_SCALARS = ("url", "canonical_url", "final_url", "http_status", "content_type", "charset", "title",
            "description", "site_name", "author", "lang", "favicon", "type", "share_count",
            "content_ref", "error", "content_length")


def _ts_from_epoch(seconds: float) -> Timestamp:
    ts = Timestamp()
    ts.FromNanoseconds(int(seconds * 1e9))
    return ts


def _ts_from_rfc3339(text: str) -> Timestamp | None:
    ts = Timestamp()
    try:
        ts.FromJsonString(text)
    except ValueError:
        try:
            dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
        ts.FromDatetime(dt.astimezone(timezone.utc))
    return ts


def to_proto(rec: UrlRecord) -> pb.UrlMetadata:
    msg = pb.UrlMetadata(status=int(rec.status))
    for name in _SCALARS:
        setattr(msg, name, getattr(rec, name))
    for r in rec.redirects:
        msg.redirects.add(url=r.url, http_status=r.http_status)
    if rec.published_time:
        ts = _ts_from_rfc3339(rec.published_time)
        if ts is not None:
            msg.published_time.CopyFrom(ts)
    if rec.image:
        msg.image.CopyFrom(pb.Image(url=rec.image.url, width=rec.image.width,
                                    height=rec.image.height, content_type=rec.image.content_type))
    if rec.video:
        msg.video.CopyFrom(pb.Video(url=rec.video.url, width=rec.video.width,
                                    height=rec.video.height, content_type=rec.video.content_type))
    if rec.structured_data:
        msg.structured_data.update(_jsonable(rec.structured_data))
    if rec.first_seen:
        msg.first_seen.CopyFrom(_ts_from_epoch(rec.first_seen))
    if rec.fetched_at:
        msg.fetched_at.CopyFrom(_ts_from_epoch(rec.fetched_at))
    return msg


def from_proto(msg: pb.UrlMetadata) -> UrlRecord:
    values: dict[str, Any] = {name: getattr(msg, name) for name in _SCALARS}
    values["status"] = Status(msg.status)
    values["redirects"] = tuple(Redirect(r.url, r.http_status) for r in msg.redirects)
    if msg.HasField("published_time"):
        values["published_time"] = msg.published_time.ToJsonString()
    if msg.HasField("image"):
        values["image"] = Image(msg.image.url, msg.image.width, msg.image.height, msg.image.content_type)
    if msg.HasField("video"):
        values["video"] = Video(msg.video.url, msg.video.width, msg.video.height, msg.video.content_type)
    if msg.HasField("structured_data"):
        values["structured_data"] = json_format.MessageToDict(msg.structured_data)
    if msg.HasField("first_seen"):
        values["first_seen"] = msg.first_seen.ToNanoseconds() / 1e9
    if msg.HasField("fetched_at"):
        values["fetched_at"] = msg.fetched_at.ToNanoseconds() / 1e9
    return UrlRecord(**values)


def message_to_dict(msg) -> dict[str, Any]:
    return json_format.MessageToDict(msg, preserving_proto_field_name=True)


def to_dict(rec: UrlRecord) -> dict[str, Any]:
    """The record as printed by `get`, `extract` and `watch`."""
    return message_to_dict(to_proto(rec))


def to_json(rec: UrlRecord) -> str:
    return json.dumps(to_dict(rec), ensure_ascii=False, sort_keys=False)


def from_json(text: str | bytes) -> UrlRecord:
    msg = pb.UrlMetadata()
    json_format.Parse(text, msg)
    return from_proto(msg)


def page_to_dict(url: str, page: PageMetadata) -> dict[str, Any]:
    """A page's extracted metadata in the record's JSON shape (for `spiderduck extract`)."""
    rec = UrlRecord(url=url, status=Status.OK, final_url=url, canonical_url=url)
    return to_dict(dataclasses.replace(rec, **with_page(rec, page)))


def _jsonable(value: Any) -> Any:
    """Struct accepts only JSON values; structured data may hold anything."""
    return json.loads(json.dumps(value, default=str))
