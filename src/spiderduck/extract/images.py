"""An image's width, height and type from its first bytes (Pillow reads the header only; what
Pillow reads only whole, GIF, WebP, AVIF/HEIF and SVG, spiderduck.extract.image_headers reads from
the header).

The representative image of a page is probed from a bounded read of `process.image_probe_bytes`;
a URL that is itself an image is probed from the body already fetched. Pixels are never
decoded, so a hostile image costs no more than its header.
"""
from __future__ import annotations

import io
import struct
import warnings
from typing import NamedTuple

from PIL import Image as PILImage
from PIL import UnidentifiedImageError

from spiderduck.extract import image_headers

# What Pillow's format plugins raise on short or malformed headers.
_UNREADABLE = (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError, IndexError,
               TypeError, KeyError, struct.error, PILImage.DecompressionBombError)


class ImageInfo(NamedTuple):
    width: int
    height: int
    content_type: str         # e.g. image/jpeg; '' when Pillow knows no MIME type for the format


def probe(data: bytes) -> ImageInfo | None:
    """The size and type of the image whose first bytes are `data`; None when they say nothing.

    Images of more than twice Pillow's MAX_IMAGE_PIXELS (about 179 megapixels) are refused by
    Pillow as decompression bombs and give None too: no preview shows them.
    """
    if not data:
        return None
    try:
        with warnings.catch_warnings():
            # Only the header is read: a large size is a fact to report, not a danger, and a
            # header cut short is expected.
            warnings.simplefilter("ignore")
            with PILImage.open(io.BytesIO(data)) as im:
                width, height = im.size
                kind = PILImage.MIME.get(im.format or "", "")
    except PILImage.DecompressionBombError:
        return None
    except _UNREADABLE:
        return _jpeg_frame(data) or _from_header(data)
    if width <= 0 or height <= 0:
        return None
    return ImageInfo(width, height, kind)


def _from_header(data: bytes) -> ImageInfo | None:
    size = image_headers.read(data)
    return ImageInfo(*size) if size is not None else None


_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}   # start-of-frame markers (not DHT, JPG, DAC)


def _jpeg_frame(data: bytes) -> ImageInfo | None:
    """The size in a JPEG's start-of-frame segment. Pillow reads every segment up to the scan
    (Huffman tables included) before it answers, so it fails on a probe that ends after the
    frame header but before the scan; this finds the frame header alone."""
    if not data.startswith(b"\xff\xd8"):
        return None
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:                       # fill byte
            i += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            i += 2
            continue
        length = int.from_bytes(data[i + 2:i + 4], "big")
        if marker in _SOF:
            if i + 9 > len(data):
                return None
            height = int.from_bytes(data[i + 5:i + 7], "big")
            width = int.from_bytes(data[i + 7:i + 9], "big")
            return ImageInfo(width, height, "image/jpeg") if width and height else None
        if marker == 0xDA or length < 2:          # the scan: no frame header before it
            return None
        i += 2 + length
    return None
