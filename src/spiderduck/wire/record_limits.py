"""A record's fields bounded before it is stored and announced, whatever the page held.

A hostile page can say anything: a 1 MB title, 10,000 JSON-LD blocks, a lone surrogate (which no
UTF-8 encoder takes), an image 99,999,999,999 pixels wide. `bounded` makes every record storable,
readable over gRPC, and small enough that its UrlProcessed event fits NATS's max payload:

- text is cut at TEXT_LIMITS characters (the cut ends in "…"), and any other text field at
  OTHER_TEXT_LIMIT;
- a lone surrogate becomes U+FFFD, in every string and in structured data;
- an optional URL (canonical, favicon, image, video) longer than MAX_URL_CHARS is dropped;
- a list (robots_directives, removed_params) keeps its first MAX_LIST_ITEMS items, each cut at
  OTHER_TEXT_LIMIT;
- image and video sizes are clamped to 0..2^31-1 (protobuf int32), as are word_count,
  reading_time_s and a document's pages; lengths and a file's size are never negative;
- the card's lists keep their first MAX_CARD_ITEMS images and labels, a label's name and value
  cut at OTHER_TEXT_LIMIT, as are an offer's parts; an image, logo or audio whose URL is longer
  than MAX_URL_CHARS is dropped, as is the honesty check's browser_final_url;
- structured data over MAX_STRUCTURED_BYTES, encoded, loses its last JSON-LD blocks and
  microdata items, then its OpenGraph, until it fits (or is dropped).

The limits are part of the record's contract; docs/api-and-events.md ("Limits of a record") lists them.
"""
from __future__ import annotations

from typing import Any

from spiderduck.core.record import Audio, Image, Label, Offer, UrlRecord, Video
from spiderduck.wire import struct_wire
from spiderduck.core.frozen import evolve

TEXT_LIMITS = {"title": 1_000, "description": 5_000, "error": 2_000, "embed_html": 4_096}
OTHER_TEXT_LIMIT = 256       # site_name, author, type, lang, charset, content_type, published_time, ...
MAX_LIST_ITEMS = 32
MAX_CARD_ITEMS = 8           # images, labels: a card shows one image and two labels
MAX_URL_CHARS = 8_192
MAX_STRUCTURED_BYTES = 256 * 1024
_INT32 = 2**31 - 1
_TEXT = ("title", "description", "error", "site_name", "author", "type", "lang", "charset",
         "content_type", "published_time", "modified_time", "fediverse_creator", "fetch_mode",
         "medium", "theme_color", "theme_color_dark", "card_style")
_COUNTS = ("word_count", "reading_time_s")       # int32
_URLS = ("url", "canonical_url", "final_url", "favicon", "content_ref", "clean_url")
_OPTIONAL_URLS = ("canonical_url", "favicon", "clean_url")
_LISTS = ("robots_directives", "removed_params")


def clean_text(value: str) -> str:
    """`value` with each lone surrogate replaced by U+FFFD (a string JSON may hold, UTF-8 cannot)."""
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def trim(value: str, limit: int) -> str:
    value = clean_text(value)
    return value if len(value) <= limit else value[:limit - 1] + "…"


def bounded(rec: UrlRecord) -> UrlRecord:
    """`rec` within the limits above (the same object when it already is)."""
    changes: dict[str, Any] = {}
    for name in _TEXT:
        value = getattr(rec, name)
        if value:
            cut = trim(value, TEXT_LIMITS.get(name, OTHER_TEXT_LIMIT))
            if cut is not value:
                changes[name] = cut
    for name in _URLS:
        value = getattr(rec, name)
        if value:
            cleaned = "" if name in _OPTIONAL_URLS and len(value) > MAX_URL_CHARS else clean_text(value)
            if cleaned is not value:
                changes[name] = cleaned
    if rec.embed_html:                         # a cut iframe is broken markup: none at all
        embed = "" if len(rec.embed_html) > TEXT_LIMITS["embed_html"] else clean_text(rec.embed_html)
        if embed is not rec.embed_html:
            changes["embed_html"] = embed
    for name in _LISTS:
        items = getattr(rec, name)
        if items:
            kept = tuple(trim(v, OTHER_TEXT_LIMIT) for v in items[:MAX_LIST_ITEMS])
            if kept != items:
                changes[name] = kept
    for name in ("image", "video", "logo"):
        media = getattr(rec, name)
        if media is not None:
            fixed = _media(media)
            if fixed is not media:
                changes[name] = fixed
    changes.update(_card(rec))
    if not 0 <= rec.content_length <= _INT32:
        changes["content_length"] = min(max(rec.content_length, 0), _INT32)
    if rec.redirects and any(clean_text(r.url) is not r.url or len(r.kind) > OTHER_TEXT_LIMIT
                             for r in rec.redirects):
        changes["redirects"] = tuple(evolve(r, url=clean_text(r.url), kind=trim(r.kind, OTHER_TEXT_LIMIT))
                                     for r in rec.redirects)
    if rec.structured_data:
        data = _structured(rec.structured_data)
        if data is not rec.structured_data:
            changes["structured_data"] = data
    return evolve(rec, **changes) if changes else rec


def _card(rec: UrlRecord) -> dict[str, Any]:
    """The changes that bound issue 41's card fields (images, labels, offer, audio, counts)."""
    changes: dict[str, Any] = {}
    if rec.images:
        images = tuple(m for m in (_media(i) for i in rec.images[:MAX_CARD_ITEMS]) if m is not None)
        if images != rec.images:
            changes["images"] = images
    if rec.labels:
        labels = tuple(Label(trim(label.name, OTHER_TEXT_LIMIT), trim(label.value, OTHER_TEXT_LIMIT))
                       for label in rec.labels[:MAX_CARD_ITEMS])
        if labels != rec.labels:
            changes["labels"] = labels
    if rec.offer is not None:
        offer = Offer(*(trim(v, OTHER_TEXT_LIMIT) for v in (rec.offer.price, rec.offer.currency,
                                                            rec.offer.availability)))
        if offer != rec.offer:
            changes["offer"] = offer
    if rec.audio is not None:
        audio = rec.audio
        bounded_audio = None if len(audio.url) > MAX_URL_CHARS else Audio(
            clean_text(audio.url), trim(audio.content_type, OTHER_TEXT_LIMIT), max(audio.duration_ms, 0))
        if bounded_audio != audio:
            changes["audio"] = bounded_audio
    for name in _COUNTS:
        value = getattr(rec, name)
        if not 0 <= value <= _INT32:
            changes[name] = min(max(value, 0), _INT32)
    if rec.document is not None and not 0 <= rec.document.pages <= _INT32:
        changes["document"] = evolve(rec.document, pages=min(max(rec.document.pages, 0), _INT32))
    if rec.file_size < 0:
        changes["file_size"] = 0
    if rec.honesty is not None and (len(rec.honesty.browser_final_url) > MAX_URL_CHARS
                                    or clean_text(rec.honesty.browser_final_url) is not rec.honesty.browser_final_url):
        url = rec.honesty.browser_final_url
        changes["honesty"] = evolve(rec.honesty, browser_final_url="" if len(url) > MAX_URL_CHARS else clean_text(url))
    return changes


def _media(media: Image | Video) -> Image | Video | None:
    if len(media.url) > MAX_URL_CHARS:
        return None
    changes: dict[str, Any] = {}
    for name in ("width", "height"):
        value = getattr(media, name)
        if not 0 <= value <= _INT32:
            changes[name] = min(max(value, 0), _INT32)
    if getattr(media, "duration_ms", 0) < 0:
        changes["duration_ms"] = 0
    url, content_type = clean_text(media.url), trim(media.content_type, OTHER_TEXT_LIMIT)
    if url is not media.url:
        changes["url"] = url
    if content_type is not media.content_type:
        changes["content_type"] = content_type
    return evolve(media, **changes) if changes else media


def _structured(data: Any) -> Any:
    """Structured data whose Struct bytes fit MAX_STRUCTURED_BYTES; None when nothing does."""
    wire = getattr(data, "wire", None)            # spiderduck.wire.record_proto.StructuredData
    if wire is not None and len(wire) <= MAX_STRUCTURED_BYTES:
        return data
    plain = dict(data)
    if wire is None and _fits(plain):
        return data
    for key in ("json-ld", "microdata"):
        items = list(plain.pop(key, None) or ())
        if _fits(plain):
            # The most leading items that still fit, found by halving (one encoding a try).
            fits, over = 0, len(items) + 1
            while over - fits > 1:
                middle = (fits + over) // 2
                if _fits({**plain, key: items[:middle]}):
                    fits = middle
                else:
                    over = middle
            if fits:
                plain[key] = items[:fits]
            return _same_kind(data, plain)
    plain.pop("opengraph", None)
    return _same_kind(data, plain) if plain and _fits(plain) else None


def _fits(plain: dict[str, Any]) -> bool:
    return len(struct_wire.encode(plain)) <= MAX_STRUCTURED_BYTES


def _same_kind(original: Any, plain: dict[str, Any]) -> Any:
    if getattr(original, "wire", None) is not None:
        return type(original)(struct_wire.encode(plain))
    return plain
