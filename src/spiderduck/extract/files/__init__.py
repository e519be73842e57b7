"""A file's card from a few byte ranges (issue 41): what a PDF, an image, an audio track or a
video says of itself, read from as few bytes as its format allows.

    next_range(content_type, url, have) -> (start, end) | None   the next Range to fetch (inclusive)
    file_card(content_type, url, have) -> FileCard                 never raises; bounded work

`have` is a FileBytes: the file's declared size and the parts read so far (the head, offset 0,
first). The scheduler's File Reader (src/spiderduck/scheduler/stages/file_ranges.py) asks
next_range after each request, at most fetcher.file_max_requests in all, and hands the parts to
file_card in an extraction worker.

Each format is its own module (sniff.py tells which): pdfxref/pdf, mpeg (MP3), mp4 (MP4, MOV,
M4A), ebml (WebM, Matroska), ogg, flac, riff (WAV); images go to spiderduck.extract.images.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from spiderduck.core.record import PROVENANCE_FIELDS, Audio, Document, FieldSource, Image, Video
from spiderduck.extract import images
from spiderduck.extract.files import ebml, flac, mp4, mpeg, names, ogg, pdf, pdfxref, riff, sniff, sparse

__all__ = ["FileBytes", "FileCard", "next_range", "file_card"]


@dataclass(frozen=True)
class FileBytes:
    total: int                                  # the declared size (Content-Length, Content-Range total); 0 unknown
    parts: tuple[tuple[int, bytes], ...] = ()   # (offset, bytes) read so far, the head (offset 0) first


@dataclass(frozen=True)
class FileCard:
    medium: str = "file"                        # image, audio, video, document or file
    title: str = ""
    author: str = ""
    published_time: str = ""                    # RFC 3339
    modified_time: str = ""                     # RFC 3339
    image: Image | None = None
    audio: Audio | None = None
    video: Video | None = None
    document: Document | None = None
    provenance: tuple[FieldSource, ...] = ()    # one per filled field
    incomplete: bool = False                    # fields the format keeps lay in bytes not read


def next_range(content_type: str, url: str, have: FileBytes) -> tuple[int, int] | None:
    """The byte range (start, end inclusive) that would give fields the parts read so far lack;
    None when they are complete or no range would add to them."""
    try:
        parts = sparse.merged(have.parts)
        total = max(0, int(have.total))
        if total and sparse.covered(parts, 0, total):
            return None
        kind = sniff.kind(content_type, sparse.prefix(parts))
        found = _RANGES[kind](total, parts) if kind in _RANGES else None
    except Exception:  # noqa: BLE001 - no range is the answer to bytes that make no sense
        return None
    if found is None:
        return None
    start, end = found
    holding = sparse.part_at(parts, start)
    if holding is not None:                     # what was read already is not asked again
        start = holding[0] + len(holding[1])
    end = min(end, start + MAX_RANGE - 1, total - 1) if total else min(end, start + MAX_RANGE - 1)
    if start < 0 or end < start or sparse.covered(parts, start, end + 1):
        return None
    return start, end


def file_card(content_type: str, url: str, have: FileBytes) -> FileCard:
    """The card of the file's parts read so far. Never raises."""
    try:
        return _card(content_type, url, have)
    except Exception:  # noqa: BLE001 - a reader's bug on hostile bytes is a card without fields
        return _named(url, FileCard(incomplete=True), [])


MAX_RANGE = 1024 * 1024        # the most bytes one Range request asks for, whatever the format
_GENERIC = ("", "application/octet-stream", "binary/octet-stream", "application/x-download",
            "application/download", "application/force-download", "application/unknown")


def _image_range(total: int, parts) -> tuple[int, int] | None:
    """More of an image whose header the head did not hold (a JPEG's frame after a large EXIF)."""
    head = sparse.prefix(parts)
    if not total or len(head) >= total or images.probe(head) is not None:
        return None
    return len(head), min(total, len(head) + MAX_RANGE) - 1


_RANGES = {sniff.PDF: pdfxref.next_range, sniff.MP3: mpeg.next_range, sniff.MP4: mp4.next_range,
           sniff.EBML: ebml.next_range, sniff.OGG: ogg.next_range, sniff.FLAC: flac.next_range,
           sniff.WAV: riff.next_range, sniff.IMAGE: _image_range}


def _image(content_type: str, url: str, total: int, parts):
    found = images.probe(sparse.prefix(parts)[:MAX_RANGE * 2])
    if found is None:
        return {}, [], True
    kind = found.content_type or (content_type if content_type.startswith("image/") else "")
    return ({"image": Image(url, found.width, found.height, kind), "medium": "image"},
            [FieldSource("image", "derived")], False)


_MEDIUM = {sniff.PDF: "document", sniff.IMAGE: "image", sniff.MP3: "audio", sniff.OGG: "audio",
           sniff.FLAC: "audio", sniff.WAV: "audio", sniff.MP4: "video", sniff.EBML: "video"}
_READERS = {sniff.PDF: pdf.read, sniff.MP3: mpeg.read, sniff.EBML: ebml.read, sniff.OGG: ogg.read,
            sniff.FLAC: flac.read, sniff.WAV: riff.read, sniff.IMAGE: _image}


def _card(content_type: str, url: str, have: FileBytes) -> FileCard:
    parts = sparse.merged(have.parts)
    total = max(0, int(have.total))
    head = sparse.prefix(parts)
    kind = sniff.kind(content_type, head)
    declared = sniff.declared(content_type)
    declared = "" if declared in _GENERIC else declared
    if kind == sniff.MP4:
        fields, sources, incomplete = mp4.read(declared, url, total, parts, head,
                                               sniff.is_audio_mp4(content_type, head))
    elif kind in _READERS:
        fields, sources, incomplete = _READERS[kind](declared, url, total, parts)
    else:
        fields, sources, incomplete = {}, [], False
    if kind in _MEDIUM:
        audio_only = sniff.is_audio_mp4(content_type, head) if kind == sniff.MP4 else declared.startswith("audio/")
        fields.setdefault("medium", "audio" if audio_only else _MEDIUM[kind])
    if "medium" in fields:
        sources.append(FieldSource("medium", "derived"))
    return _named(url, FileCard(incomplete=incomplete, **fields), sources)


def _named(url: str, card: FileCard, sources: list[FieldSource]) -> FileCard:
    """The card with the file's name as its title where the file states none, and its
    provenance in the record's order."""
    if not card.title:
        title = names.title_from_url(url)
        if title:
            card = replace(card, title=title)
            sources = [s for s in sources if s.field != "title"] + [FieldSource("title", "derived")]
    order = {name: i for i, name in enumerate(PROVENANCE_FIELDS)}
    kept = sorted((s for s in sources if s.field in order), key=lambda s: order[s.field])
    return replace(card, provenance=tuple(kept))
