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
