"""The card fields of a record (issue 41) <-> UrlMetadata and its JSON: what a link is (`medium`), the
page's images in order, its logo, theme colours, card style, labels, offer, word count and reading
time, its audio, a document's pages and a file's size; and a hop's Redirect.kind.

spiderduck.wire.record_proto calls these for every record; the JSON is protobuf's JSON mapping
(int64 values as strings: `file_size`, `duration_ms`), held equal to MessageToDict's by
tests/wire/test_record_card.py.
"""
from __future__ import annotations

from typing import Any

from spiderduck.core.record import (HTTP_REDIRECT, Audio, Document, Image, Label, Offer, Redirect,
                                    UrlRecord, Video)
from spiderduck.v1 import metadata_pb2 as pb

_STRINGS = ("medium", "theme_color", "theme_color_dark", "card_style")
_INTS = ("word_count", "reading_time_s")           # int32: numbers in JSON


def redirect_to_proto(r: Redirect) -> dict[str, Any]:
    """A Redirect's UrlMetadata.redirects entry (kind left out for a plain 3xx: records stay as
    they were for the common case)."""
    values = {"url": r.url, "http_status": r.http_status}
    if r.kind and r.kind != HTTP_REDIRECT:
        values["kind"] = r.kind
    return values


def redirect_from_proto(r: pb.Redirect) -> Redirect:
    return Redirect(r.url, r.http_status, r.kind or HTTP_REDIRECT)


def _image(m: Image) -> pb.Image:
    return pb.Image(url=m.url, width=m.width, height=m.height, content_type=m.content_type)


def to_proto(rec: UrlRecord, msg: pb.UrlMetadata) -> None:
    """Fill `msg` with the record's card fields (and Video.duration_ms)."""
    for name in _STRINGS + _INTS:
        value = getattr(rec, name)
        if value:
            setattr(msg, name, value)
    for image in rec.images:
        msg.images.append(_image(image))
    if rec.logo is not None:
        msg.logo.CopyFrom(_image(rec.logo))
    for label in rec.labels:
        msg.labels.add(name=label.name, value=label.value)
    if rec.offer is not None:
        msg.offer.CopyFrom(pb.Offer(price=rec.offer.price, currency=rec.offer.currency,
                                    availability=rec.offer.availability))
    if rec.audio is not None:
        msg.audio.CopyFrom(pb.Audio(url=rec.audio.url, content_type=rec.audio.content_type,
                                    duration_ms=rec.audio.duration_ms))
    if rec.document is not None:
        msg.document.CopyFrom(pb.Document(pages=rec.document.pages))
    if rec.file_size:
        msg.file_size = rec.file_size
    if rec.video is not None and rec.video.duration_ms:
        msg.video.duration_ms = rec.video.duration_ms


def from_proto(msg: pb.UrlMetadata) -> dict[str, Any]:
    """The record's card fields of `msg`, for UrlRecord(**...)."""
    values: dict[str, Any] = {name: getattr(msg, name) for name in _STRINGS + _INTS}
    values["images"] = tuple(Image(i.url, i.width, i.height, i.content_type) for i in msg.images)
    if msg.HasField("logo"):
        values["logo"] = Image(msg.logo.url, msg.logo.width, msg.logo.height, msg.logo.content_type)
    values["labels"] = tuple(Label(label.name, label.value) for label in msg.labels)
    if msg.HasField("offer"):
        values["offer"] = Offer(msg.offer.price, msg.offer.currency, msg.offer.availability)
    if msg.HasField("audio"):
        values["audio"] = Audio(msg.audio.url, msg.audio.content_type, msg.audio.duration_ms)
    if msg.HasField("document"):
        values["document"] = Document(msg.document.pages)
    values["file_size"] = msg.file_size
    return values


def video_from_proto(v: pb.Video) -> Video:
    return Video(v.url, v.width, v.height, v.content_type, v.duration_ms)


def _nonzero(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v}


def media_dict(m: Image | Video) -> dict[str, Any]:
    """An Image's or Video's JSON (duration_ms, an int64, as a string)."""
    out = _nonzero({"url": m.url, "width": m.width, "height": m.height, "content_type": m.content_type})
    duration = getattr(m, "duration_ms", 0)
    if duration:
        out["duration_ms"] = str(duration)
    return out


def redirect_dict(r: Redirect) -> dict[str, Any]:
    return _nonzero(redirect_to_proto(r))


def to_dict(rec: UrlRecord, out: dict[str, Any]) -> None:
    """Add the record's card fields to its JSON `out` (record_proto.to_dict)."""
    for name in _STRINGS + _INTS:
        value = getattr(rec, name)
        if value:
            out[name] = value
    if rec.images:
        out["images"] = [media_dict(i) for i in rec.images]
    if rec.logo is not None:
        out["logo"] = media_dict(rec.logo)
    if rec.labels:
        out["labels"] = [_nonzero({"name": label.name, "value": label.value}) for label in rec.labels]
    if rec.offer is not None:
        out["offer"] = _nonzero({"price": rec.offer.price, "currency": rec.offer.currency,
                                 "availability": rec.offer.availability})
    if rec.audio is not None:
        out["audio"] = _nonzero({"url": rec.audio.url, "content_type": rec.audio.content_type,
                                 "duration_ms": str(rec.audio.duration_ms) if rec.audio.duration_ms else ""})
    if rec.document is not None:
        out["document"] = _nonzero({"pages": rec.document.pages})
    if rec.file_size:
        out["file_size"] = str(rec.file_size)
