"""The parts of a file read so far, as the readers see them: bytes at absolute offsets, zeros
where nothing was read, and a seekable file object of the file's true length for the libraries
that want one (pypdf).

Nothing here holds more than the parts themselves: a file declared 100 GiB long costs no memory,
one read() returns at most READ_CAP bytes, and once READ_BUDGET bytes were served every read
raises OSError: a library that searches a hostile 10 GiB of zeros backwards for a marker, or
reads "the rest of the file", stops after a bounded amount of work.
"""
from __future__ import annotations

import io

READ_CAP = 4 * 1024 * 1024     # the most bytes one read() of a Sparse returns
# A read of one byte counts as CALL_COST: pypdf reads a byte at a time over whitespace, so a run of
# megabytes of it would cost a million calls; 16 MiB / 80 is 200,000 reads, twelve times what pypdf
# makes on the largest test PDF.
CALL_COST = 80
READ_BUDGET = 16 * 1024 * 1024  # the most bytes all reads of one Sparse return (and CALL_COST more a read)


def merged(parts) -> list[tuple[int, bytes]]:
    """The parts sorted by offset, overlapping or touching ones joined (the later part wins)."""
    out: list[tuple[int, bytearray]] = []
    for start, data in sorted((int(s), bytes(d)) for s, d in parts if d and s >= 0):
        if out and start <= out[-1][0] + len(out[-1][1]):
            prev_start, prev = out[-1]
            at = start - prev_start
            prev[at:at + len(data)] = data
        else:
            out.append((start, bytearray(data)))
    return [(s, bytes(d)) for s, d in out]


def read_end(parts) -> int:
    """The offset just past the last byte read."""
    return max((s + len(d) for s, d in parts), default=0)


def length(total: int, parts) -> int:
    """The file's length as far as known: its declared total, else the end of what was read."""
    return max(total, read_end(parts))


def covered(parts, start: int, end: int) -> bool:
    """Whether every byte of [start, end) was read."""
    if end <= start:
        return True
    for s, d in parts:
        if s <= start and end <= s + len(d):
            return True
    return False


def prefix(parts) -> bytes:
    """The bytes read from offset 0 without a gap (the head and whatever joined it)."""
    for s, d in parts:
        if s == 0:
            return d
    return b""


def part_at(parts, offset: int) -> tuple[int, bytes] | None:
    """The part holding the byte at `offset`, or None."""
    for s, d in parts:
        if s <= offset < s + len(d):
            return s, d
    return None


def slice_of(parts, start: int, end: int, fill: bytes = b"\x00") -> bytes:
    """The bytes [start, end) with `fill` where nothing was read; at most READ_CAP bytes."""
    end = min(end, start + READ_CAP)
    if end <= start:
        return b""
    out = bytearray(fill * (end - start)) if fill != b"\x00" else bytearray(end - start)
    for s, d in parts:
        lo, hi = max(s, start), min(s + len(d), end)
        if lo < hi:
            out[lo - start:hi - start] = d[lo - s:hi - s]
    return bytes(out)


def contiguous(parts, start: int, limit: int) -> bytes:
    """The bytes read from `start` on without a gap, at most `limit` of them."""
    found = part_at(parts, start)
    if found is None:
        return b""
    s, d = found
    return d[start - s:start - s + limit]


class Sparse(io.RawIOBase):
    """A read-only, seekable file of `size` bytes: the parts where read, zeros elsewhere."""

    def __init__(self, parts, size: int, budget: int = READ_BUDGET, fill: bytes = b"\x00") -> None:
        super().__init__()
        self._fill = fill
        self._budget = budget
        self._parts = merged(parts)
        self._size = max(size, read_end(self._parts))
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = self._size - self._pos
        n = max(0, min(n, self._size - self._pos, READ_CAP))
        self._budget -= n + CALL_COST
        if self._budget < 0:
            raise OSError("the read budget of this sparse file is spent")
        data = slice_of(self._parts, self._pos, self._pos + n, self._fill)
        self._pos += len(data)
        return data

    def readall(self) -> bytes:
        return self.read(-1)

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)
