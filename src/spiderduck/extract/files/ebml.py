"""WebM and Matroska (EBML): the Segment's Info (Duration x TimecodeScale, Title) and the video
track's PixelWidth/PixelHeight, both before the first Cluster in nearly every file; where the
head does not hold them, the SeekHead says where they are and next_range asks for them.

Bounded: an element's size past what was read is clamped to it, at most ELEMENT_BUDGET elements
are visited in a parse, only a fixed set of masters is entered (so the depth is fixed), and an
unknown size is allowed only to the Segment (a live stream's), which then runs to the data's end.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field

from spiderduck.core.record import Audio, FieldSource, Video
from spiderduck.extract.files import sparse

MAX_RANGE = 1024 * 1024
ELEMENT_BUDGET = 8192
SEEK_SPAN = 64 * 1024          # bytes asked for from an Info or Tracks the SeekHead places

EBML, DOC_TYPE = 0x1A45DFA3, 0x4282
SEGMENT, SEEK_HEAD, SEEK, SEEK_ID, SEEK_POSITION = 0x18538067, 0x114D9B74, 0x4DBB, 0x53AB, 0x53AC
INFO, TIMECODE_SCALE, DURATION, TITLE = 0x1549A966, 0x2AD7B1, 0x4489, 0x7BA9
TRACKS, TRACK_ENTRY, TRACK_TYPE, VIDEO = 0x1654AE6B, 0xAE, 0x83, 0xE0
PIXEL_WIDTH, PIXEL_HEIGHT, DISPLAY_WIDTH, DISPLAY_HEIGHT = 0xB0, 0xBA, 0x54B0, 0x54BA
CLUSTER = 0x1F43B675


def _vint(data: bytes, at: int, keep_marker: bool) -> tuple[int, int, bool] | None:
    """(value, length, all ones) of the variable-length integer at `at`; None if unreadable."""
    if at >= len(data):
        return None
    first = data[at]
    if first == 0:
        return None
    length = 9 - first.bit_length()
    if at + length > len(data):
        return None
    value = int.from_bytes(data[at:at + length], "big")
    if not keep_marker:
        value &= (1 << (7 * length)) - 1
    ones = value == (1 << (7 * length)) - 1
    return value, length, ones


def elements(data: bytes, start: int, end: int, budget: list[int], unknown_ok=()):
    """(id, payload start, payload end) of the elements in data[start:end]."""
    at, end = start, min(end, len(data))
    while at < end and budget[0] > 0:
        budget[0] -= 1
        ident = _vint(data, at, True)
        if ident is None or ident[1] > 4:
            return
        size = _vint(data, at + ident[1], False)
        if size is None:
            return
        payload = at + ident[1] + size[1]
        if size[2]:                               # unknown size
            if ident[0] not in unknown_ok:
                return
            yield ident[0], payload, end
            return
        yield ident[0], payload, min(payload + size[0], end)
        at = payload + size[0]


@dataclass
class Found:
    doc_type: str = ""
    segment: int = -1                      # the Segment payload's offset (SeekPosition's base)
    scale: int = 1_000_000
    duration: float = 0.0
    title: str = ""
    width: int = 0
    height: int = 0
    video: bool = False
    sound: bool = False
    info: bool = False
    tracks: bool = False
    seeks: dict[int, int] = field(default_factory=dict)   # element id -> absolute offset


def _uint(data: bytes) -> int:
    return int.from_bytes(data[:8], "big")


def _info(data: bytes, s: int, e: int, budget, found: Found) -> None:
    found.info = True
    for ident, a, b in elements(data, s, e, budget):
        if ident == TIMECODE_SCALE and 0 < b - a <= 8:
            found.scale = _uint(data[a:b]) or 1_000_000
        elif ident == DURATION and b - a in (4, 8):
            value = struct.unpack(">f" if b - a == 4 else ">d", data[a:b])[0]
            found.duration = value if math.isfinite(value) and value > 0 else 0.0
        elif ident == TITLE:
            found.title = data[a:b].decode("utf-8", "replace").strip("\x00 ")[:1000]


def _tracks(data: bytes, s: int, e: int, budget, found: Found) -> None:
    found.tracks = True
    for ident, a, b in elements(data, s, e, budget):
        if ident != TRACK_ENTRY:
            continue
        kind, size, display = 0, (0, 0), (0, 0)
        for ident2, a2, b2 in elements(data, a, b, budget):
            if ident2 == TRACK_TYPE:
                kind = _uint(data[a2:b2])
            elif ident2 == VIDEO:
                values = {i: _uint(data[a3:b3]) for i, a3, b3 in elements(data, a2, b2, budget)
                          if b3 - a3 <= 8}
                size = (values.get(PIXEL_WIDTH, 0), values.get(PIXEL_HEIGHT, 0))
                display = (values.get(DISPLAY_WIDTH, 0), values.get(DISPLAY_HEIGHT, 0))
        if kind == 1 or size[0]:
            found.video = True
            w, h = display if all(display) else size
            if 0 < w <= 65536 and 0 < h <= 65536 and w * h > found.width * found.height:
                found.width, found.height = w, h
        elif kind == 2:
            found.sound = True


def _seek_head(data: bytes, s: int, e: int, budget, found: Found) -> None:
    for ident, a, b in elements(data, s, e, budget):
        if ident != SEEK:
            continue
        entry = {i: data[a2:b2] for i, a2, b2 in elements(data, a, b, budget)}
        target, position = entry.get(SEEK_ID, b""), entry.get(SEEK_POSITION, b"")
        if target and position and len(position) <= 8:
            found.seeks.setdefault(int.from_bytes(target, "big"), found.segment + _uint(position))


def _segment_child(data: bytes, ident: int, a: int, b: int, budget, found: Found) -> bool:
    """Read one child of the Segment; False at the first Cluster (the media: stop)."""
    if ident == INFO and not found.info:
        _info(data, a, b, budget, found)
    elif ident == TRACKS and not found.tracks:
        _tracks(data, a, b, budget, found)
    elif ident == SEEK_HEAD:
        _seek_head(data, a, b, budget, found)
    elif ident == CLUSTER:
        return False
    return True


def scan(parts) -> Found:
    found = Found()
    budget = [ELEMENT_BUDGET]
    head = sparse.prefix(parts)
    for ident, s, e in elements(head, 0, len(head), budget, unknown_ok=(SEGMENT,)):
        if ident == EBML:
            for i, a, b in elements(head, s, e, budget):
                if i == DOC_TYPE:
                    found.doc_type = head[a:b].decode("ascii", "replace").strip("\x00")
        elif ident == SEGMENT:
            found.segment = s
            for i, a, b in elements(head, s, e, budget, unknown_ok=(CLUSTER,)):
                if not _segment_child(head, i, a, b, budget, found):
                    break
            break
    for target in (INFO, TRACKS):                 # elements the SeekHead placed in other parts
        at = found.seeks.get(target)
        if at is None or (found.info if target == INFO else found.tracks):
            continue
        data = sparse.contiguous(parts, at, MAX_RANGE)
        for i, a, b in elements(data, 0, len(data), budget):
            if i == target:
                _segment_child(data, i, a, b, budget, found)
            break
    return found


def next_range(total: int, parts) -> tuple[int, int] | None:
    found = scan(parts)
    wanted = [at for target, at in found.seeks.items()
              if (target == INFO and not found.info) or (target == TRACKS and not found.tracks)]
    wanted = [at for at in wanted if (not total or at < total) and sparse.part_at(parts, at) is None]
    if not wanted or not total:
        return None
    start = min(wanted)
    end = min(max(wanted) + SEEK_SPAN, start + MAX_RANGE, total)
    return start, end - 1


def read(content_type: str, url: str, total: int, parts):
    found = scan(parts)
    fields: dict = {}
    sources: list[FieldSource] = []
    if found.title:
        fields["title"] = found.title
        sources.append(FieldSource("title", "matroska:Title"))
    ms = int(found.duration * found.scale / 1_000_000)
    ms = ms if 0 < ms < 10 ** 12 else 0
    webm = found.doc_type == "webm"
    if found.video or (found.tracks and not found.sound and not content_type.startswith("audio/")):
        if found.video or found.width:
            ct = content_type if content_type.startswith("video/") else (
                "video/webm" if webm else "video/x-matroska")
            fields["video"] = Video(url, found.width, found.height, ct, ms)
            sources.append(FieldSource("video", "matroska:Tracks"))
            fields["medium"] = "video"
    elif found.sound or content_type.startswith("audio/"):
        ct = content_type if content_type.startswith("audio/") else (
            "audio/webm" if webm else "audio/x-matroska")
        fields["audio"] = Audio(url, ct, ms)
        sources.append(FieldSource("audio", "matroska:Tracks"))
        fields["medium"] = "audio"
    return fields, sources, not (found.info and found.tracks)
