"""WAV (RIFF WAVE): the duration from the `fmt ` chunk's byte rate and the `data` chunk's size,
the title and artist from a `LIST`/`INFO` chunk (INAM, IART) or an `id3 ` chunk, which most
writers put after the audio: next_range asks for the bytes after the data chunk, whose size says
where they start."""
from __future__ import annotations

from spiderduck.core.record import Audio, FieldSource
from spiderduck.extract.files import id3, sparse

CHUNKS = 256
MAX_RANGE = 1024 * 1024
TAG_CAP = 1024 * 1024
_INFO = {b"INAM": ("title", "riff:INAM"), b"IART": ("author", "riff:IART")}


def _chunks(parts, total: int):
    """(id, payload offset, size, header read) of the chunks after `WAVE`."""
    at, end = 12, sparse.length(total, parts)
    for _ in range(CHUNKS):
        if at + 8 > end:
            return
        header = sparse.contiguous(parts, at, 8)
        if len(header) < 8:
            yield b"", at, 0, False
            return
        size = int.from_bytes(header[4:8], "little")
        yield header[:4], at + 8, size, True
        at += 8 + size + (size & 1)


def next_range(total: int, parts) -> tuple[int, int] | None:
    if not total:
        return None
    tags = False
    for ident, at, size, read in _chunks(parts, total):
        if not read:
            return None if tags else (at, min(total, at + MAX_RANGE) - 1)
        if ident in (b"LIST", b"id3 ", b"ID3 "):
            end = min(total, at + min(size, TAG_CAP))
            if not sparse.covered(parts, at, end):
                begin = at + len(sparse.contiguous(parts, at, end - at))
                return begin, min(end, begin + MAX_RANGE) - 1
            tags = True
    return None


def read(content_type: str, url: str, total: int, parts):
    found: dict[str, tuple[str, str]] = {}
    byte_rate = data_size = 0
    incomplete = False
    for ident, at, size, read in _chunks(parts, total):
        if not read:
            incomplete = True
            break
        if ident == b"fmt " and size >= 12:
            byte_rate = int.from_bytes(sparse.contiguous(parts, at + 8, 4), "little")
        elif ident == b"data":
            data_size = size
        elif ident == b"LIST":
            body = sparse.contiguous(parts, at, min(size, TAG_CAP))
            if body[:4] == b"INFO":
                _info(body, found)
        elif ident in (b"id3 ", b"ID3 "):
            for key, value in id3.read_v2(sparse.contiguous(parts, at, min(size, TAG_CAP))).items():
                found.setdefault(key, value)
    fields: dict = {}
    sources: list[FieldSource] = []
    for key, (value, source) in found.items():
        fields[key] = value
        sources.append(FieldSource(key, source))
    duration_ms = data_size * 1000 // byte_rate if byte_rate else 0
    ct = content_type if content_type.startswith("audio/") else "audio/wav"
    fields["audio"] = Audio(url, ct, duration_ms if duration_ms < 10 ** 12 else 0)
    sources.append(FieldSource("audio", "riff:fmt"))
    fields["medium"] = "audio"
    return fields, sources, incomplete or not byte_rate


def _info(body: bytes, found: dict) -> None:
    at = 4
    for _ in range(CHUNKS):
        if at + 8 > len(body):
            return
        ident, size = body[at:at + 4], int.from_bytes(body[at + 4:at + 8], "little")
        if ident in _INFO and _INFO[ident][0] not in found:
            value = body[at + 8:at + 8 + size].split(b"\x00", 1)[0].decode("utf-8", "replace").strip()
            if value:
                found[_INFO[ident][0]] = (value[:1000], _INFO[ident][1])
        at += 8 + size + (size & 1)
