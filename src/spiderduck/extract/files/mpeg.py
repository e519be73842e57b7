"""MP3 (MPEG audio): title and artist from ID3v2 (at the start) or ID3v1 (the last 128 bytes),
duration from the first frame's Xing/Info or VBRI header (the frame count) or, for a constant
bitrate, from the file's size and the bitrate.

next_range asks for the first frame when an ID3v2 tag (its pictures) pushes it past the head, and
for the last 128 bytes when no title was found. The frame search looks at SYNC_WINDOW bytes at
most, each candidate checked in constant time.
"""
from __future__ import annotations

from dataclasses import dataclass

from spiderduck.core.record import Audio, FieldSource
from spiderduck.extract.files import id3, sparse

SYNC_WINDOW = 64 * 1024        # bytes after the ID3v2 tag searched for the first frame
FRAME_PROBE = 8 * 1024         # bytes asked for at the first frame when the head lacks it
_V1_KBPS = {1: (0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448),
            2: (0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384),
            3: (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320)}
_V2_KBPS = {1: (0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256),
            2: (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
            3: (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160)}
_RATES = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}


@dataclass(frozen=True)
class Frame:
    version: int               # 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
    layer: int                 # 1, 2, 3
    kbps: int
    rate: int
    mono: bool
    length: int                # bytes, padding included

    @property
    def samples(self) -> int:
        if self.layer == 1:
            return 384
        return 1152 if self.version == 3 or self.layer == 2 else 576


def frame_at(data: bytes, at: int) -> Frame | None:
    h = data[at:at + 4]
    if len(h) < 4 or h[0] != 0xFF or h[1] & 0xE0 != 0xE0:
        return None
    version, layer_bits = (h[1] >> 3) & 3, (h[1] >> 1) & 3
    rate_i, kbps_i = (h[2] >> 2) & 3, h[2] >> 4
    if version == 1 or layer_bits == 0 or rate_i == 3 or kbps_i in (0, 15):
        return None
    layer = 4 - layer_bits
    kbps = (_V1_KBPS if version == 3 else _V2_KBPS)[layer][kbps_i]
    rate = _RATES[version][rate_i]
    pad = (h[2] >> 1) & 1
    if layer == 1:
        length = (12 * kbps * 1000 // rate + pad) * 4
    else:
        length = (144 if version == 3 or layer == 2 else 72) * kbps * 1000 // rate + pad
    return Frame(version, layer, kbps, rate, (h[3] >> 6) == 3, length)


def first_frame(data: bytes) -> tuple[int, Frame] | None:
    """The first frame of `data` whose successor (when within data) is a frame too."""
    at, end = 0, min(len(data), SYNC_WINDOW)
    while at < end:
        at = data.find(b"\xff", at, end)
        if at < 0:
            return None
        frame = frame_at(data, at)
        if frame is not None:
            after = at + frame.length
            if after + 4 > len(data) or frame_at(data, after) is not None:
                return at, frame
        at += 1
    return None


def frame_count(data: bytes, at: int, frame: Frame) -> int:
    """The frame count of the Xing/Info or VBRI header in the frame at `at`; 0 when none."""
    side = (32 if not frame.mono else 17) if frame.version == 3 else (17 if not frame.mono else 9)
    xing = at + 4 + side
    if data[xing:xing + 4] in (b"Xing", b"Info") and len(data) >= xing + 12 and data[xing + 7] & 1:
        return int.from_bytes(data[xing + 8:xing + 12], "big")
    vbri = at + 36
    if data[vbri:vbri + 4] == b"VBRI":
        return int.from_bytes(data[vbri + 14:vbri + 18], "big")
    return 0


def next_range(total: int, parts) -> tuple[int, int] | None:
    head = sparse.prefix(parts)
    start = id3.v2_size(head)
    if total and start < total and not sparse.covered(parts, start, min(total, start + 4)):
        return start, min(total, start + FRAME_PROBE) - 1
    if total > 128 and not sparse.covered(parts, total - 128, total):
        if "title" not in id3.read_v2(sparse.contiguous(parts, 0, start or 10)):
            return total - 128, total - 1
    return None


def read(content_type: str, url: str, total: int, parts):
    head = sparse.prefix(parts)
    start = id3.v2_size(head)
    found = id3.read_v2(sparse.contiguous(parts, 0, start)) if start else {}
    tail_read = total > 128 and sparse.covered(parts, total - 128, total)
    v1 = id3.read_v1(sparse.slice_of(parts, total - 128, total)) if tail_read else {}
    for key, value in v1.items():
        found.setdefault(key, value)
    incomplete = (start > len(sparse.contiguous(parts, 0, start))) or (not found and not tail_read)
    duration_ms = 0
    audio = sparse.contiguous(parts, start, SYNC_WINDOW)
    located = first_frame(audio)
    if located is None:
        incomplete = True
    else:
        at, frame = located
        frames = frame_count(audio, at, frame)
        if frames:
            duration_ms = frames * frame.samples * 1000 // frame.rate
        elif total:
            size = total - start - at - (128 if v1 or (tail_read and _has_v1(parts, total)) else 0)
            duration_ms = max(0, size) * 8 // frame.kbps
        else:
            incomplete = True
    fields: dict = {}
    sources: list[FieldSource] = []
    for key, (value, source) in found.items():
        fields[key] = value
        sources.append(FieldSource(key, source))
    ct = content_type if content_type.startswith("audio/") else "audio/mpeg"
    if located is not None or found:
        fields["audio"] = Audio(url, ct, duration_ms if duration_ms < 10 ** 12 else 0)
        sources.append(FieldSource("audio", "mpeg:xing" if located and frame_count(audio, *located)
                                   else "mpeg:frame"))
        fields["medium"] = "audio"
    return fields, sources, incomplete


def _has_v1(parts, total: int) -> bool:
    return sparse.slice_of(parts, total - 128, total - 125) == b"TAG"
