"""FLAC: the duration from STREAMINFO (total samples / sample rate), the title and artist from the
VORBIS_COMMENT block. Both are metadata blocks before the audio; a large PICTURE block can push the
comments past the head, and then next_range asks for them, found by the blocks' lengths."""
from __future__ import annotations

from spiderduck.core.record import Audio, FieldSource
from spiderduck.extract.files import id3, sparse, vorbis

BLOCKS = 128
COMMENT_CAP = 1024 * 1024      # the most bytes of a VORBIS_COMMENT block asked for
_STREAMINFO, _COMMENT = 0, 4


def _blocks(parts, start: int):
    """(type, payload offset, length, header read) of the metadata blocks from `start`; the walk
    ends at the last block, at BLOCKS, or at the first header not read (yielded with False)."""
    at = start
    for _ in range(BLOCKS):
        header = sparse.contiguous(parts, at, 4)
        if len(header) < 4:
            yield -1, at, 0, False
            return
        kind, size = header[0] & 0x7F, int.from_bytes(header[1:4], "big")
        yield kind, at + 4, size, True
        if header[0] & 0x80 or kind == 127:
            return
        at += 4 + size


def _start(head: bytes) -> int:
    skip = id3.v2_size(head)
    return skip + 4 if head[skip:skip + 4] == b"fLaC" else -1


def next_range(total: int, parts) -> tuple[int, int] | None:
    start = _start(sparse.prefix(parts))
    if start < 0:
        return None
    for kind, at, size, read in _blocks(parts, start):
        end = at + min(size, COMMENT_CAP)
        if total:
            end = min(end, total)
        if not read:
            return (at - 4, min(total, at + 64 * 1024) - 1) if total and at - 4 < total else None
        if kind == _COMMENT:
            if sparse.covered(parts, at, end):
                return None
            begin = at + len(sparse.contiguous(parts, at, end - at))
            return (begin, end - 1) if total and begin < end else None
    return None


def read(content_type: str, url: str, total: int, parts):
    fields: dict = {}
    sources: list[FieldSource] = []
    start = _start(sparse.prefix(parts))
    if start < 0:
        return fields, sources, True
    duration_ms, comments, incomplete = 0, None, True
    for kind, at, size, read in _blocks(parts, start):
        if not read:
            break
        if kind == _STREAMINFO and size >= 18:
            info = sparse.contiguous(parts, at, 18)
            if len(info) == 18:
                bits = int.from_bytes(info[10:18], "big")
                rate, samples = bits >> 44, bits & ((1 << 36) - 1)
                duration_ms = samples * 1000 // rate if rate else 0
        elif kind == _COMMENT:
            data = sparse.contiguous(parts, at, min(size, COMMENT_CAP))
            comments = vorbis.comments(data, "vorbis")
            incomplete = len(data) < min(size, COMMENT_CAP)
            break
    for key, (value, source) in (comments or {}).items():
        fields[key] = value
        sources.append(FieldSource(key, source))
    ct = content_type if content_type.startswith("audio/") else "audio/flac"
    fields["audio"] = Audio(url, ct, duration_ms if duration_ms < 10 ** 12 else 0)
    sources.append(FieldSource("audio", "flac:STREAMINFO"))
    fields["medium"] = "audio"
    return fields, sources, incomplete
