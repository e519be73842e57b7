"""Issue 43's `honesty` on the wire: its JSON is protobuf's, it survives the round trips, a record
made before it reads back unchecked (None), it is bounded, and an update names it as changed."""
from __future__ import annotations

from google.protobuf import json_format

from spiderduck.core.record import Honesty, UrlRecord
from spiderduck.core.status import Status
from spiderduck.v1 import metadata_pb2 as pb
from spiderduck.wire import record_proto
from spiderduck.wire.record_diff import changed_fields
from spiderduck.wire.record_limits import MAX_URL_CHARS, bounded

BASE = UrlRecord(url="http://a.test/", status=Status.OK, final_url="http://a.test/", title="T")
DIFFERS = Honesty("differs", ("final_domain", "claimed_domain"), "http://phish.test/login", 1_795_444_492.25)


def test_honesty_json_is_protobufs_and_round_trips():
    rec = UrlRecord(**{**BASE.__dict__, "honesty": DIFFERS})
    out = record_proto.to_dict(rec)
    assert out["honesty"] == {"verdict": "differs", "differences": ["final_domain", "claimed_domain"],
                              "browser_final_url": "http://phish.test/login",
                              "checked_at": "2026-11-23T14:34:52.250Z"}
    assert out == json_format.MessageToDict(record_proto.to_proto(rec), preserving_proto_field_name=True)
    assert record_proto.from_json(record_proto.to_json(rec)) == rec
    assert record_proto.from_bytes(record_proto.to_bytes(rec)) == rec


def test_unchecked_has_no_time_and_no_differences():
    rec = UrlRecord(**{**BASE.__dict__, "honesty": Honesty("unchecked")})
    assert record_proto.to_dict(rec)["honesty"] == {"verdict": "unchecked"}
    assert record_proto.from_bytes(record_proto.to_bytes(rec)).honesty == Honesty("unchecked")


def test_a_record_made_before_the_field_reads_back_without_it():
    old = pb.UrlMetadata(url="http://a.test/", status=pb.OK, title="T")
    rec = record_proto.from_bytes(old.SerializeToString())
    assert rec.honesty is None and "honesty" not in record_proto.to_dict(rec)


def test_an_update_of_the_verdict_is_a_changed_field():
    checked = UrlRecord(**{**BASE.__dict__, "honesty": DIFFERS})
    assert changed_fields(BASE, checked) == ("honesty",)


def test_an_overlong_browser_url_is_dropped_and_a_lone_surrogate_replaced():
    long = UrlRecord(**{**BASE.__dict__, "honesty": Honesty("differs", ("final_domain",),
                                                             "http://x.test/" + "a" * MAX_URL_CHARS, 1.0)})
    assert bounded(long).honesty == Honesty("differs", ("final_domain",), "", 1.0)
    odd = UrlRecord(**{**BASE.__dict__, "honesty": Honesty("differs", (), "http://x.test/\ud800", 1.0)})
    assert bounded(odd).honesty.browser_final_url == "http://x.test/\ufffd"
    record_proto.to_bytes(bounded(odd))
