"""Rows of the Cassandra metadata store as records: which record cell to read, first_seen from
the `earliest` and legacy cells, and a row as a GetUrlMetadata answer (record_pb as stored, with
first_seen and the share count appended, unparsed). The module doc of
spiderduck.stores.cassandra_metadata says why the rows look so."""
from __future__ import annotations

import datetime

from spiderduck.core.record import UrlRecord
from spiderduck.v1 import metadata_pb2
from spiderduck.wire import record_migrations, record_proto
from spiderduck.core.frozen import evolve

_EPOCH = datetime.datetime(1970, 1, 1)


def millis(seconds: float) -> int:
    return round(seconds * 1000)


def epoch_millis(value: datetime.datetime) -> int:
    if value.tzinfo is not None:
        value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return round((value - _EPOCH).total_seconds() * 1000)


def seconds(value: datetime.datetime | None) -> float:
    return 0.0 if value is None else epoch_millis(value) / 1000


def stored_cell(row: dict) -> bytes | str | None:
    """The record cell to read: record_pb, or the version-1 JSON when only it is there or it
    was written later (by a version-1 process, during a rolling upgrade); None: no record yet."""
    data, text = row.get("record_pb"), row.get("record")
    if text and (data is None or (row.get("json_at") or 0) > (row.get("pb_at") or 0)):
        return text
    return data


def first_seen_at(row: dict) -> datetime.datetime | None:
    """The earlier of `earliest` (version 3's puts) and `first_seen` (version 1 and 2's)."""
    earliest, legacy = row.get("earliest"), row.get("first_seen")
    if earliest is None or (legacy is not None and legacy < earliest):
        return legacy
    return earliest


def to_record(row: dict, shares: int) -> UrlRecord:
    stored = stored_cell(row)
    if isinstance(stored, bytes):                     # parsed once, with what to_wire appends
        return record_proto.from_bytes(to_wire(row, shares))
    rec = record_proto.from_json(stored)
    first_seen = seconds(first_seen_at(row)) or rec.first_seen
    return evolve(rec, first_seen=first_seen, share_count=shares)


def to_wire(row: dict, shares: int) -> bytes:
    """The record as a GetUrlMetadata answer: record_pb as stored plus first_seen and the share
    count, unparsed (in the current layout: record_migrations); a version-1 row's JSON parsed
    and encoded."""
    stored = stored_cell(row)
    if not isinstance(stored, bytes):
        return record_proto.to_proto(to_record(row, shares)).SerializeToString()
    stored = record_migrations.moved_modified_time(stored)
    tail = b""
    first_seen = first_seen_at(row)
    if first_seen is not None:
        msg = metadata_pb2.UrlMetadata()
        msg.first_seen.FromMilliseconds(epoch_millis(first_seen))
        tail = msg.SerializeToString()
    return stored + record_proto.with_share_count(tail, shares)
