"""MP4, MOV and M4A (ISO base media files): duration, the video track's size and the iTunes-style
title and artist, all in the `moov` box, found at either end of the file.

next_range walks the top-level boxes by their sizes (an `mdat` of 400 MB is stepped over by its
header) to where `moov` starts, and asks for exactly that box. The walk is bounded: at most
TOP_BOXES top-level boxes, a fixed set of containers entered (so the depth is fixed), CHILD_BOXES
boxes in each, and a size that is smaller than its own header ends the walk.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from spiderduck.core.record import Audio, FieldSource, Video
from spiderduck.extract.files import sparse

MAX_RANGE = 1024 * 1024        # the most bytes one Range request asks for
MOOV_CAP = 4 * 1024 * 1024     # the most bytes of a moov read
TOP_BOXES = 1024
CHILD_BOXES = 512
_QT_BRANDS = (b"qt  ",)


@dataclass
class Box:
    kind: bytes
    at: int
    header: int
    size: int


def _header(parts, at: int, end: int) -> Box | None:
    """The box whose header is at `at` (size 0: to `end`); None where its header was not read or
    makes no sense (kind '' then)."""
    h = sparse.contiguous(parts, at, 16)
    if len(h) < 8:
        return None
    size, kind, header = int.from_bytes(h[:4], "big"), h[4:8], 8
    if size == 1:
        if len(h) < 16:
            return None
        size, header = int.from_bytes(h[8:16], "big"), 16
    elif size == 0:
        size = max(end - at, header)
    if size < header:
        return Box(b"", at, header, 0)
    return Box(kind, at, header, size)


def top_level(parts, total: int) -> tuple[list[Box], int | None]:
    """The top-level boxes whose headers were read, and the offset of the next box header not
    read (None when the walk ended: the file's end, a bad size, or TOP_BOXES)."""
    end = sparse.length(total, parts)
    boxes: list[Box] = []
    at = 0
    for _ in range(TOP_BOXES):
        if at >= end and total:
            return boxes, None
        box = _header(parts, at, end)
        if box is None:
            return boxes, at
        if not box.kind:
            return boxes, None
        boxes.append(box)
        at += box.size
    return boxes, None


def next_range(total: int, parts) -> tuple[int, int] | None:
    boxes, pending = top_level(parts, total)
    moov = next((b for b in boxes if b.kind == b"moov"), None)
    if moov is not None:
        end = moov.at + min(moov.size, MOOV_CAP)
        if total:
            end = min(end, total)
        read_ = sparse.contiguous(parts, moov.at, end - moov.at)
        start = moov.at + len(read_)
        if start >= end or _enough(parse_moov(read_[moov.header:])):
            return None
        return start, min(end, start + MAX_RANGE) - 1
    if pending is not None and total and pending < total:
        return pending, min(total, pending + MAX_RANGE) - 1
    return None


def _enough(movie: "Movie") -> bool:
    """Whether a moov read in part already gave all a card takes (the tags come last)."""
    return bool(movie.duration_ms and (movie.width or not movie.video) and movie.udta)


def children(data: bytes, start: int, end: int, budget: list[int]):
    """(kind, payload start, payload end) of the boxes in data[start:end]; `budget` a one-item
    list of the boxes left to visit in the whole parse, shared by every level."""
    at, end = start, min(end, len(data))
    for _ in range(CHILD_BOXES):
        if at + 8 > end or budget[0] <= 0:
            return
        budget[0] -= 1
        size, kind, header = int.from_bytes(data[at:at + 4], "big"), data[at + 4:at + 8], 8
        if size == 1 and at + 16 <= end:
            size, header = int.from_bytes(data[at + 8:at + 16], "big"), 16
        elif size == 0:
            size = end - at
        if size < header:
            return
        yield kind, at + header, min(at + size, end)
        at += size


@dataclass
class Movie:
    duration_ms: int = 0
    width: int = 0
    height: int = 0
    video: bool = False
    sound: bool = False
    tags: dict[bytes, str] = field(default_factory=dict)
    udta: bool = False
    visited: int = 0


BOX_BUDGET = 4096              # the most boxes one moov parse visits
_TAGS = (b"\xa9nam", b"\xa9ART", b"aART", b"\xa9day")


def parse_moov(data: bytes) -> Movie:
    movie = Movie()
    budget = [BOX_BUDGET]
    for kind, s, e in children(data, 0, len(data), budget):
        if kind == b"mvhd":
            movie.duration_ms = _duration(data[s:e], 12) or movie.duration_ms
        elif kind == b"trak":
            _trak(data, s, e, budget, movie)
        elif kind == b"udta":
            movie.udta = True
            _udta(data, s, e, budget, movie)
    movie.visited = BOX_BUDGET - budget[0]
    return movie


def _duration(payload: bytes, at_v0: int) -> int:
    """The duration in ms of an mvhd or mdhd payload (timescale at 12 in version 0, 20 in 1)."""
    if len(payload) < 4:
        return 0
    if payload[0] == 1:
        scale = int.from_bytes(payload[20:24], "big")
        units = int.from_bytes(payload[24:32], "big")
    else:
        scale = int.from_bytes(payload[at_v0:at_v0 + 4], "big")
        units = int.from_bytes(payload[at_v0 + 4:at_v0 + 8], "big")
    if not scale or units in (0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF):
        return 0
    ms = units * 1000 // scale
    return ms if ms < 10 ** 12 else 0


def _trak(data: bytes, start: int, end: int, budget: list[int], movie: Movie) -> None:
    width = height = 0
    handler = b""
    track_ms = 0
    for kind, s, e in children(data, start, end, budget):
        if kind == b"tkhd" and e - s >= 84:
            width = int.from_bytes(data[e - 8:e - 4], "big") >> 16
            height = int.from_bytes(data[e - 4:e], "big") >> 16
        elif kind == b"mdia":
            for kind2, s2, e2 in children(data, s, e, budget):
                if kind2 == b"hdlr" and e2 - s2 >= 12:
                    handler = data[s2 + 8:s2 + 12]
                elif kind2 == b"mdhd":
                    track_ms = _duration(data[s2:e2], 12)
    if handler == b"vide" and 0 < width <= 65536 and 0 < height <= 65536:
        movie.video = True
        if width * height > movie.width * movie.height:
            movie.width, movie.height = width, height
    elif handler == b"soun":
        movie.sound = True
    if not movie.duration_ms and track_ms:
        movie.duration_ms = track_ms


def _udta(data: bytes, start: int, end: int, budget: list[int], movie: Movie) -> None:
    for kind, s, e in children(data, start, end, budget):
        if kind != b"meta":
            continue
        if data[s + 4:s + 8] != b"hdlr":          # a full box (ISO); QuickTime's has no version
            s += 4
        for kind2, s2, e2 in children(data, s, e, budget):
            if kind2 != b"ilst":
                continue
            for item, s3, e3 in children(data, s2, e2, budget):
                if item not in _TAGS or item in movie.tags:
                    continue
                for kind4, s4, e4 in children(data, s3, e3, budget):
                    if kind4 == b"data" and e4 - s4 > 8 and data[s4 + 1:s4 + 4] == b"\x00\x00\x01":
                        text = data[s4 + 8:e4].decode("utf-8", "replace").strip("\x00 ")
                        if text:
                            movie.tags[item] = text[:1000]
                        break


def read(content_type: str, url: str, total: int, parts, head: bytes, audio_brand: bool):
    """(fields, provenance, incomplete) of an ISO media file: fields by the card's names."""
    boxes, _ = top_level(parts, total)
    moov = next((b for b in boxes if b.kind == b"moov"), None)
    if moov is None:
        return {}, [], True
    want = min(moov.size, MOOV_CAP)
    data = sparse.contiguous(parts, moov.at, want)
    movie = parse_moov(data[moov.header:])
    fields: dict = {}
    sources: list[FieldSource] = []
    if movie.tags.get(b"\xa9nam"):
        fields["title"] = movie.tags[b"\xa9nam"]
        sources.append(FieldSource("title", "mp4:\u00a9nam"))
    artist = movie.tags.get(b"\xa9ART") or movie.tags.get(b"aART")
    if artist:
        fields["author"] = artist
        sources.append(FieldSource("author", "mp4:\u00a9ART" if movie.tags.get(b"\xa9ART") else "mp4:aART"))
    qt = head[8:12] in _QT_BRANDS
    if movie.video and not (audio_brand and not movie.width):
        ct = content_type if content_type.startswith("video/") else (
            "video/quicktime" if qt else "video/mp4")
        fields["video"] = Video(url, movie.width, movie.height, ct, movie.duration_ms)
        sources.append(FieldSource("video", "mp4:moov"))
        fields["medium"] = "video"
    elif movie.sound or audio_brand:
        ct = content_type if content_type.startswith("audio/") else "audio/mp4"
        fields["audio"] = Audio(url, ct, movie.duration_ms)
        sources.append(FieldSource("audio", "mp4:moov"))
        fields["medium"] = "audio"
    return fields, sources, len(data) < want
