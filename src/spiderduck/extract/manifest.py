"""The web app manifest (https://www.w3.org/TR/appmanifest/): where a page's is, and the icon of
it that is the record's logo when the page names none.

A page names its manifest with `<link rel="manifest" href>`; the related fetches read it (at
most process.oembed_max_bytes) and take its largest icon: each of `icons` (`{"src", "sizes",
"type", "purpose"}`) by the largest of its stated `sizes` ("192x192 512x512"), an SVG stating
"any" the largest of all, an icon for any purpose (none stated, or "any") before one only
"maskable" or "monochrome" (padded for a mask, or a silhouette). Its `src` is resolved against
the manifest's own URL, http(s) only. Bounded: the first MAX_ICONS icons, the first MAX_SIZES
sizes of each, at most 5 digits a dimension, URLs of at most MAX_URL characters.
"""
from __future__ import annotations

import json
from typing import Any

from spiderduck.core.record import Image
from spiderduck.extract import values
from spiderduck.extract.document import Document

MAX_ICONS = 64            # icons read of a manifest's list
MAX_SIZES = 16            # sizes read of an icon's `sizes`
MAX_URL = 8192            # characters of a manifest's or an icon's URL
_MAX_TYPE = 100
_ANY = 1 << 40            # an SVG's "any": larger than any stated size (at most 99999 x 99999)
SOURCE = "manifest:icons"  # the logo's provenance


def discover(doc: Document, base: str) -> str:
    """The absolute http(s) URL of the page's web app manifest, or ''."""
    for link in doc.links:
        if "manifest" in link.rel and len(link.href) <= MAX_URL:
            url = values.absolute_url(link.href, base)
            if url and len(url) <= MAX_URL:
                return url
    return ""


def logo(body: bytes, base: str) -> Image | None:
    """The manifest's largest icon (see the module's doc), `src` resolved against `base` (the
    manifest's URL); None when it is no JSON object, or names no usable icon."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    icons = data.get("icons") if isinstance(data, dict) else None
    if not isinstance(icons, list):
        return None
    best, best_rank = None, None
    for icon in icons[:MAX_ICONS]:
        chosen = _icon(icon, base)
        if chosen is not None and (best_rank is None or chosen[0] > best_rank):
            best_rank, best = chosen
    return best


def _icon(icon: Any, base: str) -> tuple[tuple[int, int], Image] | None:
    """((for any purpose, size), the icon as an Image), or None when it is no usable icon."""
    if not isinstance(icon, dict):
        return None
    src = icon.get("src")
    if not isinstance(src, str) or len(src) > MAX_URL:
        return None
    url = values.absolute_url(src, base)
    if not url or len(url) > MAX_URL:
        return None
    typed = icon.get("type")
    typed = typed.strip().lower() if isinstance(typed, str) and len(typed) <= _MAX_TYPE else ""
    typed = typed if typed.startswith("image/") else ""
    svg = typed == "image/svg+xml" or url.split("?", 1)[0].lower().endswith(".svg")
    width, height, area = _largest(icon.get("sizes"), svg)
    return (_for_any(icon.get("purpose")), area), Image(url, width, height, typed)


def _largest(sizes: Any, svg: bool) -> tuple[int, int, int]:
    """(width, height, area) of the largest stated size; (0, 0, _ANY) for an SVG's "any"; (0, 0,
    0) when none is stated or readable."""
    best = (0, 0, 0)
    if not isinstance(sizes, str):
        return best
    for size in sizes[:MAX_SIZES * 12].lower().split()[:MAX_SIZES]:
        if size == "any":
            if svg:
                return 0, 0, _ANY
            continue
        width, _, height = size.partition("x")
        if _dimension(width) and _dimension(height) and int(width) * int(height) > best[2]:
            best = (int(width), int(height), int(width) * int(height))
    return best


def _dimension(text: str) -> bool:
    """Whether `text` is a dimension: 1 to 5 ASCII digits, not zero."""
    return 0 < len(text) <= 5 and text.isascii() and text.isdigit() and int(text) > 0


def _for_any(purpose: Any) -> int:
    """1 when the icon is for any use (no purpose stated, or "any" among them), else 0."""
    if not isinstance(purpose, str) or not purpose.strip():
        return 1
    return int("any" in purpose[:200].lower().split())
