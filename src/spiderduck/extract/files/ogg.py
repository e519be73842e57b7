"""Ogg Vorbis and Ogg Opus: the tags from the comment header in the first pages (the head), the
duration from the granule position of the last page, in the file's tail: samples at the
identification header's rate for Vorbis, 48 kHz less the pre-skip for Opus.

Pages are read by their headers; at most PAGES are looked at, and a packet is joined from at most
PACKET_CAP bytes."""
from __future__ import annotations

from spiderduck.core.record import Audio, FieldSource
from spiderduck.extract.files import sparse, vorbis

TAIL = 64 * 1024               # an Ogg page is at most 65,307 bytes: the last one starts in here
PAGES = 256
PACKET_CAP = 1024 * 1024


def _pages(data: bytes):
    """(header type, granule, serial, payload segments) of the pages from data's start."""
    at = 0
    for _ in range(PAGES):
        if data[at:at + 4] != b"OggS" or at + 27 > len(data):
            return
        count = data[at + 26]
        table = data[at + 27:at + 27 + count]
        body = at + 27 + count
        segments = []
        for lace in table:
            segments.append(data[body:body + lace])
            body += lace
        yield data[at + 5], int.from_bytes(data[at + 6:at + 14], "little"), data[at + 14:at + 18], segments
        at = body


def packets(data: bytes, wanted: int = 2) -> tuple[bytes, list[bytes]]:
    """(serial, the first `wanted` packets) of the first logical stream."""
    out: list[bytes] = []
    current = bytearray()
    serial = b""
    for _flags, _granule, page_serial, segments in _pages(data):
        serial = serial or page_serial
        if page_serial != serial:
            continue
        for segment in segments:
            if len(current) < PACKET_CAP:
                current += segment
            if len(segment) < 255:
                out.append(bytes(current))
                current = bytearray()
                if len(out) >= wanted:
                    return serial, out
    return serial, out


def last_granule(tail: bytes, serial: bytes) -> int:
    """The granule position of the last complete page of the stream `serial` in `tail`."""
    at = len(tail)
    for _ in range(PAGES):
        at = tail.rfind(b"OggS", 0, at)
        if at < 0:
            return -1
        if tail[at + 14:at + 18] == serial and at + 27 <= len(tail):
            granule = int.from_bytes(tail[at + 6:at + 14], "little", signed=True)
            if granule >= 0:
                return granule
    return -1


def next_range(total: int, parts) -> tuple[int, int] | None:
    if not total:
        return None
    start = max(0, total - TAIL)
    if sparse.covered(parts, start, total):
        return None
    start = max(start, sparse.read_end([p for p in parts if p[0] == 0]))
    return (start, total - 1) if start < total else None


def read(content_type: str, url: str, total: int, parts):
    head = sparse.prefix(parts)
    serial, first = packets(head)
    fields: dict = {}
    sources: list[FieldSource] = []
    rate, preskip, source = 0, 0, "vorbis"
    if first and first[0].startswith(b"\x01vorbis") and len(first[0]) >= 16:
        rate = int.from_bytes(first[0][12:16], "little")
        if len(first) > 1 and first[1].startswith(b"\x03vorbis"):
            found = vorbis.comments(first[1][7:], "vorbis")
        else:
            found = {}
        ct = "audio/ogg"
    elif first and first[0].startswith(b"OpusHead") and len(first[0]) >= 12:
        rate, preskip, source = 48000, int.from_bytes(first[0][10:12], "little"), "opus"
        found = vorbis.comments(first[1][8:], "opus") if len(first) > 1 and first[1].startswith(b"OpusTags") else {}
        ct = "audio/ogg"
    else:
        return fields, sources, True
    for key, (value, src) in found.items():
        fields[key] = value
        sources.append(FieldSource(key, src))
    duration_ms = 0
    end = sparse.length(total, parts)
    tail_start = max(0, end - TAIL)
    tail = sparse.contiguous(parts, tail_start, end - tail_start)
    incomplete = len(tail) < end - tail_start
    if not incomplete and rate:
        granule = last_granule(tail, serial)
        if granule > preskip:
            duration_ms = (granule - preskip) * 1000 // rate
    ct = content_type if content_type.startswith("audio/") else ct
    fields["audio"] = Audio(url, ct, duration_ms if duration_ms < 10 ** 12 else 0)
    sources.append(FieldSource("audio", f"ogg:{source}"))
    fields["medium"] = "audio"
    return fields, sources, incomplete or len(first) < 2
