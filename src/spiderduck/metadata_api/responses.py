"""GetUrlMetadataResponse written from stored bytes (a protobuf message is its fields' bytes).

    GetUrlMetadataResponse { repeated UrlMetadataResult results = 1; }
    UrlMetadataResult      { string url = 1; bool found = 2; UrlMetadata metadata = 3; bool pending = 4; }

The stores keep each record as its UrlMetadata's bytes (share_count appended for the answer), so
an answer is those bytes framed, never a record parsed and written again: that took two thirds
of each call's time (bench/api). tests/metadata_api/test_responses.py holds the framing equal to
protobuf's own.
"""
from __future__ import annotations

from typing import Sequence

from spiderduck.wire.struct_wire import varint

_URL = b"\x0a"                 # UrlMetadataResult.url and UrlMetadata.url (field 1 of each)
_FOUND_METADATA = b"\x10\x01\x1a"   # found = true (field 2), then metadata's tag (field 3)
_RESULT = b"\x0a"              # GetUrlMetadataResponse.results (field 1, length-delimited)


_PENDING = b"\x20\x01"          # UrlMetadataResult.pending = true (field 4, varint)


def response(urls: Sequence[str], records: Sequence[bytes | None],
             pending: Sequence[bool] | None = None) -> bytes:
    """A GetUrlMetadataResponse, one result per URL in order: the URL as asked, and the record's
    bytes when it was found, its url set to the URL as asked. Written as one join of its pieces,
    so no record is copied twice."""
    pieces: list[bytes] = []
    add = pieces.append
    for n, (url, metadata) in enumerate(zip(urls, records)):
        url_bytes = url.encode("utf-8")
        url_field = (_URL, varint(len(url_bytes)), url_bytes) if url_bytes else ()
        url_size = sum(map(len, url_field))
        size = url_size
        waiting = metadata is None and pending is not None and pending[n]
        if waiting:
            size += len(_PENDING)
        if metadata is not None:
            # The record's own url (field 1) follows its bytes: the last value wins, so the
            # record names the URL asked for, not the one it was first stored under.
            meta_len = varint(len(metadata) + url_size)
            size += 3 + len(meta_len) + len(metadata) + url_size
        add(_RESULT)
        add(varint(size))
        pieces.extend(url_field)
        if metadata is not None:
            add(_FOUND_METADATA)
            add(meta_len)
            add(metadata)
            pieces.extend(url_field)
        if waiting:
            add(_PENDING)
    return b"".join(pieces)
