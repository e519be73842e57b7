"""Records stored with `modified_time` as UrlMetadata's field 36 (before issue 31 gave that number
to `fetch_mode`) rewritten to field 38, every other byte as it was. The old bytes are built by
hand from the wire format: field 36 = the serialized Timestamp."""
from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from spiderduck.core.record import FieldSource, Image, UrlRecord
from spiderduck.core.status import Status
from spiderduck.v1 import metadata_pb2
from spiderduck.wire import record_proto
from spiderduck.wire.record_migrations import is_timestamp, moved_modified_time
from spiderduck.wire.struct_wire import varint


def field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def timestamp(text: str) -> bytes:
    ts = Timestamp()
    ts.FromJsonString(text)
    return ts.SerializeToString()


BEFORE = UrlRecord(url="http://a.test/", status=Status.OK, title="T \xa2\x02 not a tag",
                   image=Image("http://a.test/i.png", 10, 20), fetched_at=1_700_000_000.5,
                   provenance=(FieldSource("title", "og:title"),))
AFTER = UrlRecord(url="", status=Status.STATUS_UNSPECIFIED, truncated=True)   # field 37, after 36


def old_layout(modified: str, before: UrlRecord = BEFORE, after: UrlRecord = AFTER) -> bytes:
    """A record as the previous release stored it: its fields up to 35, modified_time as field 36,
    then field 37."""
    return (record_proto.to_bytes(before) + field(36, timestamp(modified)) + record_proto.to_bytes(after))


def test_an_old_records_modified_time_moves_to_field_38_and_nothing_else_changes():
    data = old_layout("2021-05-06T07:08:09.5Z")
    moved = moved_modified_time(data)
    assert moved == (record_proto.to_bytes(BEFORE) + field(38, timestamp("2021-05-06T07:08:09.5Z"))
                     + record_proto.to_bytes(AFTER))
    rec = record_proto.from_bytes(moved)
    assert rec.modified_time == "2021-05-06T07:08:09.500Z" and rec.fetch_mode == ""
    assert rec.title == BEFORE.title and rec.image == BEFORE.image and rec.truncated
    assert rec.provenance == BEFORE.provenance and rec.fetched_at == BEFORE.fetched_at


def test_the_old_bytes_do_not_read_as_the_new_schema():
    """Why the stores must rewrite them: a Timestamp's bytes are no fetch_mode string."""
    data = old_layout("2021-05-06T07:08:09.123Z")
    try:
        wrong = record_proto.from_bytes(data)
    except Exception:   # noqa: BLE001 -- protobuf refuses the bytes as UTF-8: the usual case
        return
    assert wrong.modified_time == "" and wrong.fetch_mode != ""    # else a garbled fetch_mode


def test_the_current_layout_comes_back_as_the_same_object():
    for mode in ("static", "rendered", ""):
        rec = UrlRecord(url="http://a.test/", status=Status.OK, title="T", fetch_mode=mode,
                        modified_time="2021-05-06T07:08:09Z")
        data = record_proto.to_bytes(rec)
        assert moved_modified_time(data) is data
        assert moved_modified_time(moved_modified_time(old_layout("2020-01-01T00:00:00Z"))) == \
            moved_modified_time(old_layout("2020-01-01T00:00:00Z"))


def test_a_title_holding_the_tags_bytes_is_walked_and_left_alone():
    data = record_proto.to_bytes(BEFORE)
    assert b"\xa2\x02" in data
    assert moved_modified_time(data) is data


def test_the_epoch_and_a_share_count_appended_after_it():
    data = old_layout("1970-01-01T00:00:00Z") + record_proto.with_share_count(b"", 7)
    assert field(36, b"") in data
    msg = metadata_pb2.UrlMetadata.FromString(moved_modified_time(data))
    assert msg.HasField("modified_time") and msg.modified_time.seconds == 0
    assert msg.fetch_mode == "" and msg.share_count == 7


def test_what_counts_as_a_timestamp():
    assert is_timestamp(timestamp("2021-05-06T07:08:09.5Z")) and is_timestamp(b"")
    assert not is_timestamp(b"static") and not is_timestamp(b"rendered")
    assert not is_timestamp(b"\x08")                 # a varint cut short
    assert not is_timestamp(b"\x18\x01")             # field 3: no Timestamp has it
    assert not is_timestamp("rendé".encode())


def test_bytes_that_are_no_message_are_left_for_protobuf_to_refuse():
    data = b"\xa2\x02\x7f" + b"x"
    assert moved_modified_time(data) is data
