"""What an erased WARC record leaves in its place: a filler of exactly its length.

A content-log file is a run of gzip members, one record each, and a content_ref names a member
by offset and length; metadata records elsewhere hold the refs of the records after an erased
one, so erasing must move nothing. The erased member's bytes are replaced by a filler of the
same length that is itself a valid gzip member (RFC 1952), so every reader (warcio, gzip, zlib,
igzip, our own) still walks the file from start to end:

    1f 8b 08 FLG(FCOMMENT) MTIME(0) XFL(0) OS(255)   10 bytes
    COMMENT: spaces ... NUL                           the padding, any length (RFC 1952 2.3.1)
    deflate of a small WARC `metadata` record         "a record was removed", no URL, no digest
    CRC32, ISIZE                                      8 bytes

The record is WARC/1.1 `metadata` with Content-Type ERASED_CONTENT_TYPE (how `is_erased` tells a
filler from a record). A member too short for that record (none we write is: a response record
has a URI and two digests more than a filler) gets the honest alternative, an empty member (an
empty deflate stream) padded the same way: warcio and zlib read it as no record at all, and
`is_erased` knows it by its empty content. A member shorter than EMPTY_MEMBER cannot be a gzip
member at all, so nothing can replace it and `filler` raises ValueError.
"""
from __future__ import annotations

import struct
import zlib
from datetime import datetime, timezone
from typing import Iterator

from spiderduck.stores.content import new_record_id

ERASED_CONTENT_TYPE = "application/x-spiderduck-erased"
_TEXT = b"A record was removed from this file.\r\n"
_MAGIC = b"\x1f\x8b\x08"
_FCOMMENT = 0x10
_OS_UNKNOWN = b"\xff"
_HEADER = 10                  # a gzip header without optional fields
_TRAILER = 8                  # CRC32 and ISIZE
_PAD_CHUNK = 1 << 16          # padding is produced in pieces of this size (a member can be MBs)


def erased_record(when: float) -> bytes:
    """The uncompressed WARC record a filler holds."""
    date = datetime.fromtimestamp(when, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    head = ("WARC/1.1\r\nWARC-Type: metadata\r\n"
            f"WARC-Record-ID: {new_record_id()}\r\nWARC-Date: {date}\r\n"
            f"Content-Type: {ERASED_CONTENT_TYPE}\r\nContent-Length: {len(_TEXT)}\r\n\r\n")
    return head.encode("ascii") + _TEXT + b"\r\n\r\n"


def _deflate(raw: bytes) -> bytes:
    d = zlib.compressobj(9, zlib.DEFLATED, -15)           # raw deflate: the member's body
    return d.compress(raw) + d.flush()


EMPTY_MEMBER = _HEADER + len(_deflate(b"")) + _TRAILER     # 20 bytes: the shortest gzip member


def filler(length: int, when: float) -> Iterator[bytes]:
    """The bytes of a gzip member of exactly `length` bytes holding no trace of what it replaces
    (an erased record, or nothing when `length` is too short for one), in pieces."""
    if length < EMPTY_MEMBER:
        raise ValueError(f"{length} bytes cannot hold a gzip member (at least {EMPTY_MEMBER})")
    raw = erased_record(when)
    body = _deflate(raw)
    if length < _HEADER + 1 + len(body) + _TRAILER:      # the honest alternative: no record
        raw, body = b"", _deflate(b"")
    pad = length - _HEADER - len(body) - _TRAILER          # comment bytes, its NUL included
    flags = _FCOMMENT if pad else 0
    yield _MAGIC + bytes([flags]) + b"\0\0\0\0" + b"\0" + _OS_UNKNOWN
    while pad > 1:
        n = min(pad - 1, _PAD_CHUNK)
        yield b" " * n
        pad -= n
    if pad:
        yield b"\0"
    yield body + struct.pack("<II", zlib.crc32(raw), len(raw))


def is_erased(headers: dict[str, str]) -> bool:
    """A record's WARC headers (parse_warc_record's) are a filler's, or there was no record."""
    return not headers or headers.get("Content-Type") == ERASED_CONTENT_TYPE
