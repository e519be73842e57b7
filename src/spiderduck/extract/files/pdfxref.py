"""Where a PDF keeps what its card needs, read cheaply for next_range: `startxref` in the tail,
the cross-reference sections it leads to (a classic table or an xref stream, and their /Prev
chain), and so the offsets of the Info dictionary, the catalog (/Root), its /Pages and /Metadata,
or of the object streams that hold them.

Bounded: XREF_SECTIONS sections at most (a /Prev that loops ends the chain), ENTRIES entries read
and XREF_INFLATE bytes of xref streams inflated in all the sections together (a chain of sections
each inflating its most cost seconds), and each object's bytes are looked at only up to OBJECT_CAP.
"""
from __future__ import annotations

import re
import zlib

from spiderduck.extract.files import sparse

TAIL = 32 * 1024               # the bytes at a PDF's end asked for first (startxref, trailer, xref)
MAX_RANGE = 1024 * 1024
OBJECT_CAP = 256 * 1024
XREF_SECTIONS = 16
ENTRIES = 200_000
XREF_INFLATE = 1024 * 1024    # in all the sections together

_STARTXREF = re.compile(rb"startxref\s+(\d{1,15})")
_REF = {key: re.compile(rb"/" + key.encode() + rb"\s+(\d{1,10})\s+\d{1,5}\s+R")
        for key in ("Root", "Info", "Pages", "Metadata")}
_PREV = re.compile(rb"/Prev\s+(\d{1,15})")
_SUBSECTION = re.compile(rb"(\d{1,10})[ \t]+(\d{1,10})[ \t]*\r?\n?")
_INTS = re.compile(rb"\d{1,15}")


def startxref(parts, total: int) -> int:
    tail = sparse.slice_of(parts, max(0, total - 2048), total)
    found = _STARTXREF.findall(tail)
    return int(found[-1]) if found else -1


def sections(parts, total: int) -> tuple[dict[int, tuple[int, int]], dict[str, int]]:
    """({object number: (type, offset or object stream)}, {Root/Info: object number}) from the
    xref sections read; the first section read wins for each object (the newest)."""
    table: dict[int, tuple[int, int]] = {}
    refs: dict[str, int] = {}
    at, seen = startxref(parts, total), set()
    budget = [ENTRIES, XREF_INFLATE]          # entries, inflated bytes: what every section shares
    for _ in range(XREF_SECTIONS):
        if budget[0] <= 0 or budget[1] <= 0:
            break
        if at < 0 or at in seen:
            break
        seen.add(at)
        data = sparse.contiguous(parts, at, OBJECT_CAP)
        if not data:
            break
        if data.startswith(b"xref"):
            end = data.find(b"trailer")
            dictionary = data[end:] if end >= 0 else b""
            _classic(data[4:end if end >= 0 else len(data)], table, budget)
        else:
            dictionary = data[:data.find(b"stream")] if b"stream" in data else data[:4096]
            _stream(data, dictionary, table, budget)
        for key in ("Root", "Info"):
            match = _REF[key].search(dictionary)
            if match and key not in refs:
                refs[key] = int(match.group(1))
        prev = _PREV.search(dictionary)
        at = int(prev.group(1)) if prev else -1
    return table, refs


def _classic(body: bytes, table: dict, budget: list[int]) -> None:
    """A classic table's entries into `table`, each (and each subsection header) taken off
    budget[0], the entries every section shares."""
    at = 0
    while budget[0] > 0:
        while at < len(body) and body[at] in b" \t\r\n":
            at += 1
        match = _SUBSECTION.match(body, at)
        if not match:
            return
        first, count = int(match.group(1)), int(match.group(2))
        at = match.end()
        budget[0] -= 1
        for number in range(first, first + min(count, budget[0])):
            entry = body[at:at + 20]
            if len(entry) < 18:
                return
            budget[0] -= 1
            at += 20
            if entry[17:18] == b"n":
                table.setdefault(number, (1, int(entry[:10] or b"0")))


def _stream(data: bytes, dictionary: bytes, table: dict, budget: list[int]) -> None:
    """An xref stream's entries into `table`: inflated within budget[1] (the bytes every section
    shares), its predictor undone only over the rows budget[0] still allows."""
    widths = re.search(rb"/W\s*\[\s*(\d)\s+(\d)\s+(\d)\s*\]", dictionary)
    start = data.find(b"stream")
    if widths is None or start < 0:
        return
    w = [int(x) for x in widths.groups()]
    index = re.search(rb"/Index\s*\[([\d\s]{1,2000})\]", dictionary)
    size = re.search(rb"/Size\s+(\d{1,10})", dictionary)
    numbers = [int(x) for x in _INTS.findall(index.group(1))] if index else [0, int(size.group(1)) if size else 0]
    body = data[start + 6:].lstrip(b"\r\n")
    columns = sum(w)
    try:
        raw = zlib.decompressobj().decompress(body, budget[1]) if b"/FlateDecode" in dictionary else body
    except zlib.error:
        return
    budget[1] -= len(raw)
    predictor = re.search(rb"/Predictor\s+(\d+)", dictionary)
    if predictor and int(predictor.group(1)) >= 10 and columns:
        raw = _unpredict(raw[:(columns + 1) * max(budget[0], 0)], columns)
    at = 0
    for first, count in zip(numbers[0::2], numbers[1::2]):
        for number in range(first, first + min(count, budget[0])):
            row = raw[at:at + columns]
            if len(row) < columns or budget[0] <= 0:
                return
            budget[0] -= 1
            at += columns
            kind = int.from_bytes(row[:w[0]], "big") if w[0] else 1
            second = int.from_bytes(row[w[0]:w[0] + w[1]], "big")
            if kind in (1, 2):
                table.setdefault(number, (kind, second))


def _unpredict(raw: bytes, columns: int) -> bytes:
    """PNG predictors (None, Sub, Up) undone, row by row."""
    out, previous = bytearray(), bytearray(columns)
    for at in range(0, len(raw) - columns, columns + 1):
        kind, row = raw[at], bytearray(raw[at + 1:at + 1 + columns])
        if kind == 1:
            for i in range(1, columns):
                row[i] = (row[i] + row[i - 1]) & 0xFF
        elif kind == 2:
            for i in range(columns):
                row[i] = (row[i] + previous[i]) & 0xFF
        elif kind != 0:
            break
        out += row
        previous = row
    return bytes(out)


def _span(number: int, table: dict, ends: list[int]) -> tuple[int, int] | None:
    entry = table.get(number)
    if entry is None:
        return None
    if entry[0] == 2:
        entry = table.get(entry[1])
        if entry is None or entry[0] != 1:
            return None
    start = entry[1]
    later = [e for e in ends if e > start]
    return start, min(min(later) if later else start + OBJECT_CAP, start + OBJECT_CAP)


def wanted(parts, total: int) -> list[tuple[int, int]]:
    """The spans of the objects the card needs that were not read."""
    table, refs = sections(parts, total)
    ends = sorted({off for kind, off in table.values() if kind == 1} | {total})
    missing = []
    for key in ("Info", "Root"):
        span = _span(refs[key], table, ends) if key in refs else None
        if span is None:
            continue
        if not sparse.covered(parts, *span):
            missing.append(span)
        elif key == "Root" and table.get(refs[key], (0,))[0] == 1:
            body = sparse.slice_of(parts, *span)
            for child in ("Pages", "Metadata"):
                match = _REF[child].search(body[:body.find(b"endobj")] if b"endobj" in body else body)
                child_span = _span(int(match.group(1)), table, ends) if match else None
                if child_span and not sparse.covered(parts, *child_span):
                    missing.append(child_span)
    return missing


def next_range(total: int, parts) -> tuple[int, int] | None:
    if not total or sparse.covered(parts, 0, total):
        return None
    tail = max(0, total - TAIL)
    if not sparse.covered(parts, tail, total):
        start = max(tail, sparse.read_end([p for p in parts if p[0] == 0]))
        return (start, total - 1) if start < total else None
    spans = wanted(parts, total)
    if not spans:
        return None
    start = min(s for s, _ in spans)
    end = min(max(e for _, e in spans), start + MAX_RANGE, total)
    return start, end - 1
