"""The content store interface: raw fetched content as WARC records.

One WARC record per fetch (redirect hops included), gzip-compressed per record and appended to
rolling files; `content_ref` locates a record. A fetch is a `response` record (HTTP status line,
headers and body), with WARC-Payload-Digest (sha1, base32), so readers can deduplicate by
payload. It carries no WARC-Block-Digest (optional in WARC 1.1): each record is its own gzip
member, whose CRC-32 already lets a reader detect a damaged record, and a second SHA-1 over the
whole block cost 0.15 ms of the 0.73 ms a 280 KB corpus page's record takes (issue 40). A fetch given a `Revisit` is a `revisit` record instead
(WARC 1.1, section 6.7): a `304 Not Modified` to a conditional re-fetch (profile
server-not-modified), or a re-fetch whose body is the earlier one's (profile
identical-payload-digest, carrying that digest). Its block is the HTTP status line and headers
only, no body; WARC-Refers-To, -Target-URI and -Date name the earlier record when it is known.

Written by hand rather than with warcio's WARCWriter, which measured 16x slower on the corpus
pages (14.6 against 0.9 ms a record, zlib against igzip); warcio reads every record back in the
content stores' conformance suite.

Compression is ISA-L's igzip (python-isal) at level 1: standard gzip members that any reader
(gzip, warcio) opens, made about 9x faster than zlib's level 6 on the corpus pages (0.65 against
5.96 ms for a 280 KB page; 4.5:1 against 5.3:1), so the content log no longer holds the pipeline
back (bench/pipeline's profile had 36% of its samples in zlib). igzip releases the GIL.
"""
from __future__ import annotations

import abc
import base64
import hashlib
import re
import uuid
from typing import Collection
from dataclasses import dataclass
from datetime import datetime, timezone
from http import HTTPStatus

from isal import igzip, isal_zlib

from spiderduck.stores.closing import Closing

COMPRESSION_LEVEL = 1   # igzip's 0-3; 1 measured best: 2 gains 1% of size for 11% more time


SERVER_NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
IDENTICAL_PAYLOAD_DIGEST = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"


@dataclass(frozen=True)
class Revisit:
    """What a revisit record says of the earlier record it refers to."""
    profile: str                  # SERVER_NOT_MODIFIED or IDENTICAL_PAYLOAD_DIGEST
    refers_to: str = ""           # the earlier record's WARC-Record-ID ("<urn:uuid:...>"); "" = unknown (header left out)
    refers_to_uri: str = ""       # its WARC-Target-URI
    refers_to_date: str = ""      # its WARC-Date
    payload_digest: str = ""      # the earlier record's WARC-Payload-Digest (identical-payload-digest: required)

    def __post_init__(self):
        if self.profile not in (SERVER_NOT_MODIFIED, IDENTICAL_PAYLOAD_DIGEST):
            raise ValueError(f"unknown revisit profile {self.profile!r}")
        if self.profile == IDENTICAL_PAYLOAD_DIGEST and not self.payload_digest:
            raise ValueError("an identical-payload-digest revisit needs the earlier payload digest")

    @classmethod
    def of(cls, profile: str, earlier: dict[str, str]) -> "Revisit":
        """From the earlier record's WARC headers, as ContentStore.read(content_ref)[0] gives them
        ({} when that record is gone: the Refers-To headers are then left out)."""
        return cls(profile, refers_to=earlier.get("WARC-Record-ID", ""),
                   refers_to_uri=earlier.get("WARC-Target-URI", ""),
                   refers_to_date=earlier.get("WARC-Date", ""),
                   payload_digest=earlier.get("WARC-Payload-Digest", ""))


@dataclass(frozen=True)
class FetchedContent:
    url: str
    http_status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    fetched_at: float                   # epoch seconds
    remote_address: str = ""
    truncated: bool = False             # the body was cut at the fetcher's cap (or a probe's)
    revisit: Revisit | None = None      # log a `revisit` record (no body) instead of a `response`
    conversion_of: str = ""             # a WARC-Record-ID: log a `conversion` record of `body` (the
                                        # page's DOM after rendering), derived from that record
    record_id: str = ""                 # this record's WARC-Record-ID ("<urn:uuid:...>"); "" = a new one
    concurrent_to: str = ""             # a WARC-Record-ID this fetch belongs with (a related fetch:
                                        # its page's record), as WARC-Concurrent-To; what a forget
                                        # of the page follows (spiderduck.stores.warc_erase)


def _digest(sha1) -> str:
    """WARC's `sha1:` + base32 form (what warcio writes and checks)."""
    return "sha1:" + base64.b32encode(sha1.digest()).decode("ascii")


def payload_digest(body: bytes) -> str:
    """The WARC-Payload-Digest a response record with this body gets."""
    return _digest(hashlib.sha1(body))


def _http_head(item: FetchedContent) -> bytes:
    """The HTTP status line and headers, through the blank line that ends them."""
    reason = HTTPStatus(item.http_status).phrase if item.http_status in HTTPStatus._value2member_map_ else ""
    head = [f"HTTP/1.1 {item.http_status} {reason}".rstrip()]
    head += [f"{name}: {value}" for name, value in item.headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode("utf-8", "replace")


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _one_line(value: str) -> str:
    """A revisit field's value as one header line: control characters (CR and LF above all, which
    would end the field or the record's headers) %-escaped."""
    return _CONTROL.sub(lambda m: f"%{ord(m.group()):02X}", value)


def new_record_id() -> str:
    return f"<urn:uuid:{uuid.uuid4()}>"


def warc_record(item: FetchedContent) -> bytes:
    """One gzip member holding one WARC/1.1 record: `response`, `revisit` if item.revisit, or
    `conversion` if item.conversion_of."""
    date = datetime.fromtimestamp(item.fetched_at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if item.conversion_of:
        return _conversion_record(item, date)
    http_head = _http_head(item)
    if item.revisit is not None:
        return _revisit_record(item, http_head, date)
    fields = [
        "WARC/1.1",
        "WARC-Type: response",
        f"WARC-Record-ID: {_one_line(item.record_id) if item.record_id else new_record_id()}",
        f"WARC-Date: {date}",
        f"WARC-Target-URI: {item.url}",
    ]
    if item.remote_address:
        fields.append(f"WARC-IP-Address: {item.remote_address}")
    if item.truncated:
        fields.append("WARC-Truncated: length")
    if item.concurrent_to:
        fields.append(f"WARC-Concurrent-To: {_one_line(item.concurrent_to)}")
    payload = hashlib.sha1(item.body)                    # the body as stored (decoded)
    fields += ["Content-Type: application/http;msgtype=response",
               f"WARC-Payload-Digest: {_digest(payload)}",
               f"Content-Length: {len(http_head) + len(item.body)}"]
    # Fed in pieces, so the body (up to megabytes) is never copied into one buffer first.
    gz = isal_zlib.compressobj(COMPRESSION_LEVEL, isal_zlib.DEFLATED, 31)     # wbits 31: gzip
    return b"".join((gz.compress(("\r\n".join(fields) + "\r\n\r\n").encode("utf-8", "replace")),
                     gz.compress(http_head), gz.compress(item.body), gz.compress(b"\r\n\r\n"),
                     gz.flush()))


def _conversion_record(item: FetchedContent, date: str) -> bytes:
    """A conversion record (WARC 1.1, section 6.9): the page's DOM after a headless browser ran it,
    derived from the response record `conversion_of` names; its block is the HTML alone."""
    fields = ["WARC/1.1", "WARC-Type: conversion", f"WARC-Record-ID: {new_record_id()}",
              f"WARC-Date: {date}", f"WARC-Target-URI: {item.url}",
              f"WARC-Refers-To: {_one_line(item.conversion_of)}",
              "Content-Type: text/html; charset=utf-8",
              f"WARC-Block-Digest: {_digest(hashlib.sha1(item.body))}",
              f"Content-Length: {len(item.body)}"]
    gz = isal_zlib.compressobj(COMPRESSION_LEVEL, isal_zlib.DEFLATED, 31)     # wbits 31: gzip
    return b"".join((gz.compress(("\r\n".join(fields) + "\r\n\r\n").encode("utf-8", "replace")),
                     gz.compress(item.body), gz.compress(b"\r\n\r\n"), gz.flush()))


def _revisit_record(item: FetchedContent, http_head: bytes, date: str) -> bytes:
    """A revisit record (WARC 1.1, section 6.7): the block is the HTTP status line and headers
    only (a 304's, or the identical 200's without its body). URI, address and HTTP headers are
    written as in a response record; the revisit's own fields go through _one_line."""
    revisit = item.revisit
    fields = [
        "WARC/1.1",
        "WARC-Type: revisit",
        f"WARC-Record-ID: {_one_line(item.record_id) if item.record_id else new_record_id()}",
        f"WARC-Date: {date}",
        f"WARC-Target-URI: {item.url}",
    ]
    if item.remote_address:
        fields.append(f"WARC-IP-Address: {item.remote_address}")
    fields.append(f"WARC-Profile: {revisit.profile}")
    for name, value in (("WARC-Refers-To", revisit.refers_to),
                        ("WARC-Refers-To-Target-URI", revisit.refers_to_uri),
                        ("WARC-Refers-To-Date", revisit.refers_to_date)):
        if value:
            fields.append(f"{name}: {_one_line(value)}")
    fields.append("Content-Type: application/http;msgtype=response")
    if revisit.profile == IDENTICAL_PAYLOAD_DIGEST:      # server-not-modified: no payload to digest
        fields.append(f"WARC-Payload-Digest: {_one_line(revisit.payload_digest)}")
    fields += [f"WARC-Block-Digest: {_digest(hashlib.sha1(http_head))}",
               f"Content-Length: {len(http_head)}"]
    gz = isal_zlib.compressobj(COMPRESSION_LEVEL, isal_zlib.DEFLATED, 31)     # wbits 31: gzip
    return b"".join((gz.compress(("\r\n".join(fields) + "\r\n\r\n").encode("utf-8", "replace")),
                     gz.compress(http_head), gz.compress(b"\r\n\r\n"), gz.flush()))


def read_warc_record(member: bytes) -> tuple[dict[str, str], bytes]:
    """(WARC headers, HTTP block) of one gzip member written by warc_record."""
    return parse_warc_record(igzip.decompress(member))


def parse_warc_record(raw: bytes) -> tuple[dict[str, str], bytes]:
    """(WARC headers, HTTP block) of one record, uncompressed."""
    head, _, rest = raw.partition(b"\r\n\r\n")
    lines = head.decode("utf-8", "replace").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    length = int(headers.get("Content-Length", len(rest)))
    return headers, rest[:length]


def http_response(block: bytes) -> tuple[int, tuple[tuple[str, str], ...], bytes]:
    """(status, headers, body) of a response record's HTTP block, as _http_head wrote it; a block
    that is no HTTP response gives status 0."""
    head, _, body = block.partition(b"\r\n\r\n")
    lines = head.decode("utf-8", "replace").split("\r\n")
    parts = lines[0].split(" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[0].startswith("HTTP/") and parts[1].isdigit() else 0
    headers = tuple((name, value.strip()) for name, _, value in (line.partition(":") for line in lines[1:]) if name)
    return status, headers, body


class ContentStore(Closing, abc.ABC):
    """Async; every implementation passes tests/stores/test_content_store.py."""

    local = False       # its files are on this process's own disk (file://), erased in place

    @abc.abstractmethod
    async def append(self, item: FetchedContent) -> str:
        """Log one fetch; returns its content_ref."""

    @abc.abstractmethod
    async def read(self, content_ref: str) -> tuple[dict[str, str], bytes]:
        """The WARC headers and HTTP block (status line, headers, body) of one record."""

    @abc.abstractmethod
    async def read_following(self, content_ref: str, max_bytes: int,
                             max_records: int) -> list[tuple[dict[str, str], bytes]]:
        """The records written after `content_ref`'s in its file (its related fetches, and
        other pages' records between them), within max_bytes and max_records; one cut by the
        window's end, or still being written, is left out."""

    async def expire(self, before: float) -> int:
        """Delete the content-log files whose newest record was written before `before` (epoch
        seconds); returns how many went (retention.content). Raises NotImplementedError where
        the store cannot."""
        raise NotImplementedError(f"{type(self).__name__} does not expire content-log files")

    async def roll(self) -> None:
        """Seal the file being written now, so a forget can rewrite it (HDFS; the denylist's
        watcher calls it when a URL is forgotten). A store that erases in place needs no roll:
        nothing, here."""

    async def forget(self, urls: Collection[str], domain: str = "") -> int:
        """Erase every record whose WARC-Target-URI is one of `urls` (compared as
        spiderduck.stores.keys.lookup_key forms) or, with `domain`, whose URL's host is of that
        registrable domain, with the records bound to them (their requests, the conversion
        records of their rendered DOMs, their related fetches): the files holding them are
        rewritten without their bytes, every other record keeping its content_ref. Returns how many
        records were erased; idempotent. Raises StoreError naming what failed (a file still being
        written by another process, HDFS down): the call can be repeated until it succeeds."""
        raise NotImplementedError(f"{type(self).__name__} does not forget content records")
