"""Stored record bytes from an older UrlMetadata layout, rewritten to the current one.

`modified_time` (a google.protobuf.Timestamp) was UrlMetadata's field 36 until issue 31 gave
that number to `fetch_mode` (a string) and moved `modified_time` to field 38. A record stored
before holds the Timestamp's bytes under field 36: read as the current schema, they are no valid
UTF-8 string in general (protobuf refuses the message) or a garbled fetch_mode. `moved_modified_time`
rewrites each top-level field 36 that holds a Timestamp into field 38, the payload unchanged and
every other byte as it was; bytes already in the current layout come back as they are (the same
object), so it is idempotent and cheap to call on every record read. The stores apply it: SQLite
once, at open (src/spiderduck/stores/sqlite_metadata.py, schema version 3); Cassandra on read
(src/spiderduck/stores/cassandra_metadata.py says why).

A field 36 is taken for a Timestamp when its payload is one a Timestamp serializes to: only its
fields 1 (seconds) and 2 (nanos), as varints, and not exactly one of the fetch modes (neither
parses so, but the check costs nothing). An empty payload is the Timestamp of the epoch: a
fetch_mode is never written empty (proto3 leaves an empty string out).
"""
from __future__ import annotations

from spiderduck.core.errors import SpiderDuckError
from spiderduck.core.record import FETCH_MODES
from spiderduck.wire.struct_wire import varint

FIELD_WAS = 36          # modified_time before issue 31; fetch_mode since
FIELD_NOW = 38          # modified_time since
# Field 36, wire type 2 (length-delimited), as a tag's varint: 36 << 3 | 2 = 290 = 0xA2 0x02.
TAG_WAS = varint(FIELD_WAS << 3 | 2)
TAG_NOW = varint(FIELD_NOW << 3 | 2)
_MODES = frozenset(mode.encode() for mode in FETCH_MODES)


class Malformed(SpiderDuckError, ValueError):
    """The bytes are not a protobuf message."""


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """The varint at `at` and the offset after it."""
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise Malformed("a varint runs past the end")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def _fields(data: bytes):
    """(field number, wire type, start of the field, start of its payload, end) of each top-level
    field of a message, in order."""
    at = 0
    while at < len(data):
        start = at
        tag, at = _varint(data, at)
        number, wire_type = tag >> 3, tag & 7
        if wire_type == 0:
            _, end = _varint(data, at)
        elif wire_type == 1:
            end = at + 8
        elif wire_type == 2:
            length, at = _varint(data, at)
            end = at + length
        elif wire_type == 5:
            end = at + 4
        else:                 # groups: UrlMetadata has none
            raise Malformed(f"wire type {wire_type} at byte {start}")
        if number == 0 or end > len(data):
            raise Malformed(f"field {number} at byte {start} runs past the end")
        yield number, wire_type, start, at, end
        at = end


def is_timestamp(payload: bytes) -> bool:
    """Whether `payload` is what a google.protobuf.Timestamp serializes to, and no fetch mode."""
    if payload in _MODES:
        return False
    try:
        return all(number in (1, 2) and wire_type == 0 for number, wire_type, *_ in _fields(payload))
    except Malformed:
        return False


def moved_modified_time(data: bytes) -> bytes:
    """`data` (a UrlMetadata's bytes) with each field 36 that holds a Timestamp as field 38; the
    same object when there is none, or when `data` is no message (left for protobuf to refuse)."""
    if TAG_WAS not in data:   # the cheap pre-check: most records have no field 36 of either kind
        return data
    parts: list[bytes] = []
    done = 0
    try:
        for number, wire_type, start, payload_at, end in _fields(data):
            if number == FIELD_WAS and wire_type == 2 and is_timestamp(data[payload_at:end]):
                parts += [data[done:start], TAG_NOW, varint(end - payload_at), data[payload_at:end]]
                done = end
    except Malformed:
        return data
    if not parts:
        return data
    parts.append(data[done:])
    return b"".join(parts)
