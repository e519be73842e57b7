"""Finding the records a forget erases in the content log, with bounded memory.

`members(reader)` walks a content-log file one gzip member at a time, inflating each in pieces
(never a whole member, let alone a whole file, in memory) and keeping only its WARC headers; it
stops before a member cut short (a writer's append in flight, or a killed writer's tail: see
warc_rolling.complete_length), which is left alone.

`Selection(urls, domain)` says which records go (ContentStore.forget's contract):
- a record whose WARC-Target-URI (or WARC-Refers-To-Target-URI: a revisit naming the URL) is one
  of `urls` as spiderduck.stores.keys.lookup_key forms, or, with `domain`, whose host is of that
  registrable domain: responses, revisits, conversions (a conversion of the rendered DOM has the
  page's URI too), requests if a writer logs them;
- and the records bound to a record that goes: WARC-Refers-To naming it (a conversion, a
  revisit), or WARC-Concurrent-To naming it (a request, and a page's related fetches, which the
  crawl recorder logs as concurrent to the page's record).
A bound record comes after the record it names (the same writer wrote it later: later in the
file, or in one of its later files, which sort after), so one pass over the files in name order
finds them all.

`plan(files, selection)` is that pass; the stores then replace each found member by a filler of
its length (spiderduck.stores.warc_filler), the last found first: should a forget stop part-way,
the records that lead to the rest (a page's response before its related fetches) are still
there, and the repeated forget finds everything again.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import BinaryIO, Callable, Collection, ContextManager, Iterable, Iterator

from isal import igzip_lib, isal_zlib

from spiderduck.stores.content import parse_warc_record
from spiderduck.stores.forget_scope import domain_form, in_domain
from spiderduck.stores.keys import lookup_key
from spiderduck.stores.warc_filler import filler, is_erased

CHUNK = 1 << 20               # bytes read, and inflated, at a time
HEAD_BYTES = 64 << 10         # a record's WARC headers are read from this much of its start
_BAD = (isal_zlib.error, igzip_lib.IsalError, zlib.error, ValueError)
_URI_FIELDS = ("WARC-Target-URI", "WARC-Refers-To-Target-URI")
_BINDING_FIELDS = ("WARC-Refers-To", "WARC-Concurrent-To")


@dataclass(frozen=True)
class Member:
    offset: int
    length: int
    headers: dict[str, str] = field(compare=False)

    @property
    def record_id(self) -> str:
        return self.headers.get("WARC-Record-ID", "")


def members(reader: BinaryIO, *, chunk: int = CHUNK) -> Iterator[Member]:
    """The whole gzip members of a file from its start, with their WARC headers."""
    data, offset = b"", 0                       # data: read, not yet part of a member; at offset
    while True:
        if not data:
            data = reader.read(chunk)
            if not data:
                return
        start, fed = offset, 0                  # fed: bytes before `data` given to this member
        d = isal_zlib.decompressobj(31)
        head = bytearray()
        try:
            while True:
                out = d.decompress(data, chunk)
                while True:
                    if len(head) < HEAD_BYTES:
                        head += out[:HEAD_BYTES - len(head)]
                    # Output held back by the cap may be all that is left (the member's end).
                    if d.eof or not d.unconsumed_tail and len(out) < chunk:
                        break
                    out = d.decompress(d.unconsumed_tail, chunk)
                if d.eof:
                    break
                fed += len(data)
                data = reader.read(chunk)
                if not data:
                    return                      # a member cut short: left alone
        except _BAD:
            return                              # no gzip from here on: nothing of ours to read
        rest = d.unused_data
        length = fed + len(data) - len(rest)
        headers, _ = parse_warc_record(bytes(head)) if head else ({}, b"")
        yield Member(start, length, headers)
        data, offset = rest, start + length


class Selection:
    """Which records a forget of `urls` (and `domain`) erases; remembers the record IDs taken."""

    def __init__(self, urls: Collection[str], domain: str = ""):
        self._keys = {lookup_key(url) for url in urls if url and url.strip()}
        self._domain = domain_form(domain)
        self._taken: set[str] = set()

    def _names(self, uri: str) -> bool:
        return lookup_key(uri) in self._keys or bool(self._domain) and in_domain(uri, self._domain)

    def takes(self, headers: dict[str, str]) -> bool:
        """Whether the record goes; a record that goes is remembered, so those bound to it go."""
        if is_erased(headers):
            return False
        hit = (any(self._names(headers[f]) for f in _URI_FIELDS if headers.get(f))
               or any(headers.get(f) in self._taken for f in _BINDING_FIELDS if headers.get(f)))
        if hit and headers.get("WARC-Record-ID"):
            self._taken.add(headers["WARC-Record-ID"])
        return hit


def plan(files: Iterable[tuple[str, Callable[[], ContextManager[BinaryIO]]]],
         selection: Selection) -> list[tuple[str, list[Member]]]:
    """(path, the members to erase) of each file holding any, in the order given (name order)."""
    found = []
    for path, open_file in files:
        with open_file() as reader:
            hits = [m for m in members(reader) if selection.takes(m.headers)]
        if hits:
            found.append((path, hits))
    return found


def patched(reader: BinaryIO, erase: list[Member], when: float, *,
            chunk: int = CHUNK) -> Iterator[bytes]:
    """The file's bytes as read, each member of `erase` (in offset order) replaced by a filler
    of its length; in pieces of about `chunk`."""
    pos = 0
    for member in sorted(erase, key=lambda m: m.offset):
        yield from _copy(reader, member.offset - pos, chunk)
        _skip(reader, member.length, chunk)
        yield from filler(member.length, when)
        pos = member.offset + member.length
    while True:
        data = reader.read(chunk)
        if not data:
            return
        yield data


def _copy(reader: BinaryIO, n: int, chunk: int) -> Iterator[bytes]:
    while n > 0:
        data = reader.read(min(n, chunk))
        if not data:
            raise EOFError("the file is shorter than when it was scanned")
        n -= len(data)
        yield data


def _skip(reader: BinaryIO, n: int, chunk: int) -> None:
    for _ in _copy(reader, n, chunk):
        pass
