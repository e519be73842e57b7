"""The content store interface: raw fetched content as WARC records.

One WARC `response` record per fetch (redirect hops included), gzip-compressed
per record and appended to rolling files; `content_ref` locates a record.
"""
from __future__ import annotations

import abc
import gzip
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from http import HTTPStatus


@dataclass(frozen=True)
class FetchedContent:
    url: str
    http_status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    fetched_at: float                   # epoch seconds
    remote_address: str = ""
    truncated: bool = False             # the body was cut at the fetcher's cap (or a probe's)


def warc_record(item: FetchedContent) -> bytes:
    """One gzip member holding one WARC/1.1 response record."""
    reason = HTTPStatus(item.http_status).phrase if item.http_status in HTTPStatus._value2member_map_ else ""
    head = [f"HTTP/1.1 {item.http_status} {reason}".rstrip()]
    head += [f"{name}: {value}" for name, value in item.headers]
    http_block = ("\r\n".join(head) + "\r\n\r\n").encode("utf-8", "replace") + item.body
    date = datetime.fromtimestamp(item.fetched_at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    fields = [
        "WARC/1.1",
        "WARC-Type: response",
        f"WARC-Record-ID: <urn:uuid:{uuid.uuid4()}>",
        f"WARC-Date: {date}",
        f"WARC-Target-URI: {item.url}",
    ]
    if item.remote_address:
        fields.append(f"WARC-IP-Address: {item.remote_address}")
    if item.truncated:
        fields.append("WARC-Truncated: length")
    fields += ["Content-Type: application/http;msgtype=response",
               f"Content-Length: {len(http_block)}"]
    raw = ("\r\n".join(fields) + "\r\n\r\n").encode("utf-8", "replace") + http_block + b"\r\n\r\n"
    return gzip.compress(raw, compresslevel=6)


def read_warc_record(member: bytes) -> tuple[dict[str, str], bytes]:
    """(WARC headers, HTTP block) of one gzip member written by warc_record."""
    raw = gzip.decompress(member)
    head, _, rest = raw.partition(b"\r\n\r\n")
    lines = head.decode("utf-8", "replace").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    length = int(headers.get("Content-Length", len(rest)))
    return headers, rest[:length]


class ContentStore(abc.ABC):
    """Async; every implementation passes tests/common/stores/test_content_store.py."""

    @abc.abstractmethod
    async def append(self, item: FetchedContent) -> str:
        """Log one fetch; returns its content_ref."""

    @abc.abstractmethod
    async def read(self, content_ref: str) -> tuple[dict[str, str], bytes]:
        """The WARC headers and HTTP block (status line, headers, body) of one record."""

    async def close(self) -> None:
        pass

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()
