"""What the scheduler's File Reader stage does with a file, done here on the bytes of a real
file: the head (the first fetcher.file_head_bytes, 64 KiB), then at most two Range requests that
next_range chooses, then file_card on the parts."""
from __future__ import annotations

import pathlib
from dataclasses import dataclass

from spiderduck.extract.files import FileBytes, FileCard, file_card, next_range

FILES = pathlib.Path(__file__).resolve().parents[2] / "files"
HEAD = 64 * 1024
RANGES = 2
MAX_RANGE = 1024 * 1024


@dataclass
class Read:
    card: FileCard
    ranges: list[tuple[int, int]]
    bytes_read: int

    @property
    def requests(self) -> int:
        return 1 + len(self.ranges)


def read_as_stage(data: bytes, content_type: str, url: str, *, ranges: int = RANGES,
                  head: int = HEAD, total: int | None = None) -> Read:
    total = len(data) if total is None else total
    parts = [(0, data[:head])]
    asked: list[tuple[int, int]] = []
    for _ in range(ranges):
        r = next_range(content_type, url, FileBytes(total, tuple(parts)))
        if r is None:
            break
        start, end = r
        assert 0 <= start <= end, r
        assert end - start + 1 <= MAX_RANGE, r
        if total:
            assert end < total, r
        asked.append(r)
        parts.append((start, data[start:end + 1]))
    card = file_card(content_type, url, FileBytes(total, tuple(parts)))
    return Read(card, asked, len(parts[0][1]) + sum(len(d) for _, d in parts[1:]))


def source(card: FileCard, field: str) -> str:
    return next((s.source for s in card.provenance if s.field == field), "")


def pdf_of(objects: list[bytes], trailer: bytes, *, prev_self: bool = False) -> bytes:
    """A PDF of `objects` (1..n) with a correct classic xref table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    prev = b" /Prev %d" % xref if prev_self else b""
    out += b"trailer\n<< /Size %d %s%s >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, trailer, prev, xref)
    return bytes(out)
