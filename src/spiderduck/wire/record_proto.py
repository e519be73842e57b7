"""UrlRecord <-> spiderduck.v1.UrlMetadata, its stored bytes, and its JSON (protobuf's JSON mapping).

Stores keep a record as the bytes of its UrlMetadata (`to_bytes`), without share_count, which is
counted apart; `with_share_count` appends the current count to those bytes for an answer, so a
stored record reaches a GetUrlMetadata caller without being parsed (protobuf merges a message's
concatenated fields: the last value of a scalar wins). A page's structured data travels as the
bytes of its protobuf Struct (`StructuredData`), built once where it is extracted: converting a
dict into a Struct field by field is the costliest part of encoding a record.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, Iterator

from google.protobuf import json_format
from google.protobuf.struct_pb2 import Struct
from google.protobuf.timestamp_pb2 import Timestamp

from spiderduck.core.record import FieldSource, Image, PageMetadata, Redirect, UrlRecord, Video, with_page
from spiderduck.core.status import Status
from spiderduck.v1 import metadata_pb2 as pb
from spiderduck.wire import record_card, record_honesty, struct_wire, timestamps
from spiderduck.wire.struct_wire import varint
from spiderduck.core.frozen import evolve

_SCALARS = ("url", "canonical_url", "final_url", "http_status", "content_type", "charset", "title",
            "description", "site_name", "author", "lang", "favicon", "type", "share_count",
            "content_ref", "error", "content_length", "etag", "clean_url", "sensitive", "embed_html",
            "fediverse_creator", "truncated", "fetch_mode")
_DATES = ("published_time", "modified_time")         # RFC 3339 strings as Timestamps
_LISTS = ("robots_directives", "removed_params")     # repeated string: tuples of str
_TIMES = ("first_seen", "fetched_at", "expires_at", "last_modified")   # epoch floats as Timestamps


class StructuredData(Mapping):
    """Structured data as the bytes of a protobuf Struct; read as a dict (decoded on first use).

    Only the bytes are pickled, so it crosses from an extraction worker as bytes."""

    __slots__ = ("wire", "_dict")

    def __init__(self, wire: bytes):
        self.wire = wire
        self._dict: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> "StructuredData":
        return cls(struct_wire.encode(value))

    def _decoded(self) -> dict[str, Any]:
        if self._dict is None:
            struct = Struct()
            struct.ParseFromString(self.wire)
            self._dict = json_format.MessageToDict(struct)
        return self._dict

    def __getitem__(self, key: str) -> Any:
        return self._decoded()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())

    def __bool__(self) -> bool:
        return bool(self.wire)

    def __repr__(self) -> str:
        return f"StructuredData({self._decoded()!r})"

    def __reduce__(self):
        return (StructuredData, (self.wire,))


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
        msg.redirects.add(**record_card.redirect_to_proto(r))
    for name in _DATES:
        ts = _ts_from_rfc3339(getattr(rec, name)) if getattr(rec, name) else None
        if ts is not None:
            getattr(msg, name).CopyFrom(ts)
    if rec.image:
        msg.image.CopyFrom(pb.Image(url=rec.image.url, width=rec.image.width,
                                    height=rec.image.height, content_type=rec.image.content_type))
    if rec.video:
        msg.video.CopyFrom(pb.Video(url=rec.video.url, width=rec.video.width,
                                    height=rec.video.height, content_type=rec.video.content_type))
    if isinstance(rec.structured_data, StructuredData):
        if rec.structured_data.wire:
            msg.structured_data.ParseFromString(rec.structured_data.wire)
    elif rec.structured_data:
        msg.structured_data.ParseFromString(struct_wire.encode(rec.structured_data))
    for name in _TIMES:
        if getattr(rec, name):
            getattr(msg, name).CopyFrom(timestamps.from_epoch(getattr(rec, name)))
    for name in _LISTS:
        if getattr(rec, name):
            getattr(msg, name).extend(getattr(rec, name))
    for p in _provenance(rec):
        msg.provenance.add(field=p.field, source=p.source)
    record_card.to_proto(rec, msg)
    record_honesty.to_proto(rec, msg)
    return msg


def _provenance(rec: UrlRecord) -> list[FieldSource]:
    """The record's provenance for the fields it holds: a field emptied after extraction (a robots
    directive's, a limit's) has none."""
    return [p for p in rec.provenance if getattr(rec, p.field, None)]


def from_proto(msg: pb.UrlMetadata) -> UrlRecord:
    values: dict[str, Any] = {name: getattr(msg, name) for name in _SCALARS}
    values["status"] = Status(msg.status)
    values["redirects"] = tuple(record_card.redirect_from_proto(r) for r in msg.redirects)
    for name in _DATES:
        if msg.HasField(name):
            values[name] = getattr(msg, name).ToJsonString()
    if msg.HasField("image"):
        values["image"] = Image(msg.image.url, msg.image.width, msg.image.height, msg.image.content_type)
    if msg.HasField("video"):
        values["video"] = record_card.video_from_proto(msg.video)
    if msg.HasField("structured_data"):
        values["structured_data"] = StructuredData(msg.structured_data.SerializeToString())
    for name in _TIMES:
        if msg.HasField(name):
            values[name] = timestamps.to_epoch(getattr(msg, name))
    for name in _LISTS:
        values[name] = tuple(getattr(msg, name))
    values["provenance"] = tuple(FieldSource(p.field, p.source) for p in msg.provenance)
    values.update(record_card.from_proto(msg))
    values["honesty"] = record_honesty.from_proto(msg)
    return UrlRecord(**values)


def to_bytes(rec: UrlRecord) -> bytes:
    """The record as stored: its UrlMetadata's bytes, share_count left out (counted apart)."""
    msg = to_proto(rec)
    msg.ClearField("share_count")
    return msg.SerializeToString()


def from_bytes(data: bytes, share_count: int = 0) -> UrlRecord:
    msg = pb.UrlMetadata()
    msg.ParseFromString(data)
    rec = from_proto(msg)
    return evolve(rec, share_count=share_count) if share_count else rec


_SHARE_COUNT_TAG = bytes([pb.UrlMetadata.SHARE_COUNT_FIELD_NUMBER << 3 | 0x80, 0x01])   # field 19, varint




def with_share_count(data: bytes, share_count: int) -> bytes:
    """Stored record bytes with the current share count: a UrlMetadata, still unparsed."""
    if not share_count:
        return data
    return data + _SHARE_COUNT_TAG + varint(min(share_count, 2**31 - 1))


def message_to_dict(msg) -> dict[str, Any]:
    return json_format.MessageToDict(msg, preserving_proto_field_name=True)


def to_dict(rec: UrlRecord) -> dict[str, Any]:
    """The record as printed by `get`, `extract` and `watch`: protobuf's JSON mapping of
    to_proto(rec), proto field names, built straight from the dataclass. MessageToDict over
    to_proto gives the same dict about ten times slower (tests/wire/test_record_proto.py
    holds the two equal)."""
    out: dict[str, Any] = {}
    for name in ("url", "canonical_url"):
        if getattr(rec, name):
            out[name] = getattr(rec, name)
    if rec.status:
        out["status"] = rec.status.name
    if rec.http_status:
        out["http_status"] = rec.http_status
    if rec.redirects:
        out["redirects"] = [record_card.redirect_dict(r) for r in rec.redirects]
    for name in ("content_type", "charset", "title", "description", "site_name", "author"):
        if getattr(rec, name):
            out[name] = getattr(rec, name)
    if rec.published_time:
        ts = _ts_from_rfc3339(rec.published_time)
        if ts is not None:
            out["published_time"] = ts.ToJsonString()
    if rec.lang:
        out["lang"] = rec.lang
    if rec.image is not None:
        out["image"] = _media(rec.image)
    for name in ("favicon", "type"):
        if getattr(rec, name):
            out[name] = getattr(rec, name)
    if rec.video is not None:
        out["video"] = _media(rec.video)
    if rec.structured_data:
        out["structured_data"] = structured_json(rec.structured_data)
    if rec.share_count:
        out["share_count"] = rec.share_count
    for name in ("first_seen", "fetched_at"):
        if getattr(rec, name):
            out[name] = timestamps.from_epoch(getattr(rec, name)).ToJsonString()
    for name in ("content_ref", "final_url", "error"):
        if getattr(rec, name):
            out[name] = getattr(rec, name)
    if rec.content_length:
        out["content_length"] = rec.content_length           # int32: a number in JSON
    if rec.expires_at:
        out["expires_at"] = timestamps.from_epoch(rec.expires_at).ToJsonString()
    if rec.etag:
        out["etag"] = rec.etag
    if rec.last_modified:
        out["last_modified"] = timestamps.from_epoch(rec.last_modified).ToJsonString()
    for name in ("robots_directives", "clean_url", "removed_params", "sensitive", "embed_html",
                 "fediverse_creator", "truncated", "fetch_mode"):
        value = getattr(rec, name)
        if value:
            out[name] = list(value) if isinstance(value, tuple) else value
    provenance = _provenance(rec) if rec.provenance else ()
    if provenance:
        out["provenance"] = [_nonzero({"field": p.field, "source": p.source}) for p in provenance]
    if rec.fetch_mode:
        out["fetch_mode"] = rec.fetch_mode
    if rec.modified_time:
        ts = _ts_from_rfc3339(rec.modified_time)
        if ts is not None:
            out["modified_time"] = ts.ToJsonString()
    record_card.to_dict(rec, out)
    record_honesty.to_dict(rec, out)
    return out


def structured_json(value: Mapping[str, Any]) -> dict[str, Any]:
    """A record's structured data as to_dict prints it (its Struct's JSON mapping)."""
    if isinstance(value, StructuredData):
        return dict(value)
    try:
        return _struct_of(value)
    except Exception:   # noqa: BLE001 -- a key JSON refuses, a cycle, a huge int: as before
        return _struct_json(_jsonable(value))


def _nonzero(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v}


_media = record_card.media_dict


_KEY_WORDS = {True: "true", False: "false", None: "null"}


def _struct_of(value: Any, depth: int = 0) -> Any:
    """_struct_json(_jsonable(value)) in one pass, without JSON text in between: the same values
    for everything json.dumps(default=str) takes (tests/wire/test_record_proto.py holds the two
    equal); raises where it raises, or deeper than it would go, for the caller to fall back."""
    if value is None or value is True or value is False or type(value) is str:
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
        return number if math.isfinite(number) else None
    if depth > 100:
        raise RecursionError("structured data nested too deeply")
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                if isinstance(key, str):
                    key = str(key)
                elif key is None or isinstance(key, bool):
                    key = _KEY_WORDS[key]
                elif isinstance(key, int):
                    key = int.__repr__(key)
                elif isinstance(key, float):
                    key = json.dumps(float(key))
                else:
                    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
            out[key] = _struct_of(item, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [_struct_of(item, depth + 1) for item in value]
    return str(value)


def _struct_json(value: Any) -> Any:
    """A JSON value as a protobuf Struct holds it: every number a float, NaN and Infinity null
    (as struct_wire writes them)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        number = float(value)
        return number if math.isfinite(number) else None
    if isinstance(value, dict):
        return {k: _struct_json(v) for k, v in value.items()}
    return [_struct_json(v) for v in value]


def to_json(rec: UrlRecord) -> str:
    return json.dumps(to_dict(rec), ensure_ascii=False, sort_keys=False)


def from_json(text: str | bytes) -> UrlRecord:
    msg = pb.UrlMetadata()
    json_format.Parse(text, msg)
    return from_proto(msg)


def page_to_dict(url: str, page: PageMetadata) -> dict[str, Any]:
    """A page's extracted metadata in the record's JSON shape (for `spiderduck extract`)."""
    rec = UrlRecord(url=url, status=Status.OK, final_url=url, canonical_url=url)
    return to_dict(evolve(rec, **with_page(page)))


def _jsonable(value: Any) -> Any:
    """Struct accepts only JSON values; structured data may hold anything."""
    return json.loads(json.dumps(value, default=str))
