"""An image's size from the first bytes of formats Pillow reads only whole: GIF, WebP, AVIF and
HEIF (ISO base media boxes), and SVG (its root element). spiderduck.extract.images.probe tries
Pillow first and these when it fails: Pillow opens a WebP, AVIF or GIF through decoders that want
more than the header (a 512-byte GIF, a 16 KB WebP fail), and reads no SVG at all.

Each reader looks at a bounded prefix and never follows a length the data states past it, so a
hostile header costs at most the prefix. An SVG is not parsed as XML (no entity is expanded):
its first `<svg` start tag is read for `width`, `height` and `viewBox`.
"""
from __future__ import annotations

import math
import re
from typing import NamedTuple


class Size(NamedTuple):
    width: int
    height: int
    content_type: str


SVG_PREFIX = 16 * 1024        # bytes of an SVG searched for its root element
_BOXES = 64                   # ISO boxes walked at one level before giving up
_MOST_PIXELS = 1 << 16        # a side longer than this (65,536) is not believed
_MOST_AREA = 2 * 89_478_485   # nor an area past twice Pillow's MAX_IMAGE_PIXELS, which it refuses


def read(data: bytes) -> Size | None:
    """The size in the header of a GIF, WebP, AVIF/HEIF or SVG; None for anything else (and for
    a header that makes no sense: a reader's error on hostile bytes is no size, never a raise)."""
    try:
        return _read(data)
    except (ValueError, OverflowError, IndexError):
        return None


def _read(data: bytes) -> Size | None:
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return _size(int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little"),
                     "image/gif")
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp(data)
    if data[4:8] == b"ftyp":
        return _isobmff(data)
    return _svg(data[:SVG_PREFIX])


def _size(width: float, height: float, kind: str) -> Size | None:
    if not (math.isfinite(width) and math.isfinite(height)):
        return None
    width, height = round(width), round(height)
    if 0 < width <= _MOST_PIXELS and 0 < height <= _MOST_PIXELS and width * height <= _MOST_AREA:
        return Size(width, height, kind)
    return None


def _webp(data: bytes) -> Size | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":     # a key frame's start code
        return _size(int.from_bytes(data[26:28], "little") & 0x3FFF,
                     int.from_bytes(data[28:30], "little") & 0x3FFF, "image/webp")
    if chunk == b"VP8L" and data[20:21] == b"\x2f" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return _size((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1, "image/webp")
    if chunk == b"VP8X" and len(data) >= 30:
        return _size(int.from_bytes(data[24:27], "little") + 1,
                     int.from_bytes(data[27:30], "little") + 1, "image/webp")
    return None


_BRANDS = {b"avif": "image/avif", b"avis": "image/avif", b"heic": "image/heic",
           b"heix": "image/heic", b"mif1": "image/heif", b"msf1": "image/heif"}


def _boxes(data: bytes, start: int, end: int):
    """(type, payload start, payload end) of the boxes between start and end, within data."""
    at = start
    for _ in range(_BOXES):
        if at + 8 > end:
            return
        size = int.from_bytes(data[at:at + 4], "big")
        kind = data[at + 4:at + 8]
        header = 8
        if size == 1 and at + 16 <= end:                        # a 64-bit size follows
            size, header = int.from_bytes(data[at + 8:at + 16], "big"), 16
        elif size == 0:                                          # to the end
            size = end - at
        if size < header:
            return
        yield kind, at + header, min(at + size, end)
        at += size


def _isobmff(data: bytes) -> Size | None:
    """The largest `ispe` (image spatial extents) property of an AVIF or HEIF file: the primary
    image's, not a thumbnail's or a tile's."""
    kind = _BRANDS.get(data[8:12])
    if kind is None:
        return None
    for name, start, end in _boxes(data, 0, len(data)):
        if name != b"meta":
            continue
        for name, start, end in _boxes(data, start + 4, end):    # meta is a full box
            if name != b"iprp":
                continue
            for name, start, end in _boxes(data, start, end):
                if name != b"ipco":
                    continue
                sizes = [(int.from_bytes(data[s + 4:s + 8], "big"),
                          int.from_bytes(data[s + 8:s + 12], "big"))
                         for name, s, e in _boxes(data, start, end) if name == b"ispe" and e - s >= 12]
                if sizes:
                    return _size(*max(sizes, key=lambda wh: wh[0] * wh[1]), kind)
    return None


# Bounded so that no input of SVG_PREFIX bytes costs more than a linear scan: the root tag at
# most 4 KiB, an attribute's name at most 64 characters and only where a name can start.
_SVG_ROOT = re.compile(rb"<svg\b([^>]{0,4096})>", re.IGNORECASE)
_COMMENT = re.compile(rb"<!--.*?(?:-->|$)", re.DOTALL)    # an unclosed one runs to the end
_ATTRIBUTE = re.compile(rb"""(?<![-\w:.])([A-Za-z_:][-\w:.]{0,63})\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_LENGTH = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(px|in|cm|mm|pt|pc)?\s*$")
_PER_UNIT = {None: 1.0, "px": 1.0, "in": 96.0, "cm": 96 / 2.54, "mm": 9.6 / 2.54, "pt": 96 / 72,
             "pc": 16.0}


def _svg(data: bytes) -> Size | None:
    """width and height of the root `<svg>` in CSS pixels; where one is missing or relative
    (`100%`, `em`), from the viewBox's aspect; None when neither says."""
    if b"<svg" not in data.lower():
        return None
    root = _SVG_ROOT.search(_COMMENT.sub(b"", data))
    if root is None:
        return None
    attributes = {}
    for name, double, single in _ATTRIBUTE.findall(root.group(1)):
        attributes.setdefault(name.decode("ascii").lower(), (double or single).decode("utf-8", "replace"))
    width, height = _length(attributes.get("width")), _length(attributes.get("height"))
    box = _view_box(attributes.get("viewbox"))
    if width and height:
        return _size(width, height, "image/svg+xml")
    if box is None:
        return None
    if width:
        return _size(width, width * box[1] / box[0], "image/svg+xml")
    if height:
        return _size(height * box[0] / box[1], height, "image/svg+xml")
    return _size(*box, "image/svg+xml")


def _length(value: str | None) -> float | None:
    match = _LENGTH.match(value or "")
    if match is None:
        return None
    pixels = float(match.group(1)) * _PER_UNIT[match.group(2)]
    return pixels if 0 < pixels <= _MOST_PIXELS else None


def _view_box(value: str | None) -> tuple[float, float] | None:
    parts = (value or "").replace(",", " ").split()
    if len(parts) != 4:
        return None
    try:
        width, height = float(parts[2]), float(parts[3])
    except ValueError:
        return None
    return (width, height) if 0 < width <= _MOST_PIXELS and 0 < height <= _MOST_PIXELS else None
