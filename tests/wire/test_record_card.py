"""Issue 41's card fields on the wire: their JSON is protobuf's (int64 as strings), a record made
before them reads back with them empty and every hop an `http` redirect, and an event names them
among the changed fields."""
from __future__ import annotations

from google.protobuf import json_format

from spiderduck.core.record import Audio, Document, Label, Offer, Redirect, UrlRecord, Video
from spiderduck.core.status import Status
from spiderduck.v1 import metadata_pb2 as pb
from spiderduck.wire import record_proto
from spiderduck.wire.record_diff import changed_fields

BASE = UrlRecord(url="http://a.test/", status=Status.OK, final_url="http://a.test/", title="T")


def test_int64_fields_are_strings_in_json_as_protobuf_maps_them():
    rec = UrlRecord(url="http://a.test/f.pdf", status=Status.OK, file_size=5_000_000_000,
                    audio=Audio("http://a.test/a.mp3", "audio/mpeg", 3_448),
                    video=Video("http://a.test/v.mp4", duration_ms=8_000), document=Document(19))
    out = record_proto.to_dict(rec)
    assert out["file_size"] == "5000000000" and out["audio"]["duration_ms"] == "3448"
    assert out["video"] == {"url": "http://a.test/v.mp4", "duration_ms": "8000"}
    assert out["document"] == {"pages": 19}
    assert out == json_format.MessageToDict(record_proto.to_proto(rec), preserving_proto_field_name=True)
    assert record_proto.from_json(record_proto.to_json(rec)) == rec


def test_a_record_made_before_the_fields_reads_back_with_them_empty():
    old = pb.UrlMetadata(url="http://a.test/", status=pb.OK, title="T")
    old.redirects.add(url="http://a.test/old", http_status=301)      # no kind: written before it
    rec = record_proto.from_bytes(old.SerializeToString())
    assert rec.redirects == (Redirect("http://a.test/old", 301, "http"),)
    assert (rec.medium, rec.images, rec.logo, rec.labels, rec.offer, rec.audio, rec.document, rec.file_size) == (
        "", (), None, (), None, None, None, 0)
    # ... and a plain 3xx hop is written as before: no kind on the wire
    assert "kind" not in record_proto.to_dict(rec)["redirects"][0]
    assert record_proto.to_bytes(rec) == record_proto.to_bytes(record_proto.from_bytes(record_proto.to_bytes(rec)))


def test_a_crawl_that_changes_a_card_field_names_it():
    new = UrlRecord(**{**BASE.__dict__, "labels": (Label("Price", "€5"),), "offer": Offer("5", "EUR", "in_stock"),
                       "redirects": (Redirect("http://a.test/r", 200, "meta-refresh"),)})
    assert changed_fields(BASE, new) == ("redirects", "labels", "offer")
    assert changed_fields(new, new) == ()
