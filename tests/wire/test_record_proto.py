"""The record's JSON mapping, built straight from the dataclass, is protobuf's own, field for field;
records survive their stored bytes; share counts ride on those bytes."""
from __future__ import annotations

import dataclasses
import json
import math

import pytest

from spiderduck.core.record import (Audio, Document, FieldSource, Honesty, Image, Label, Offer, Redirect, UrlRecord, Video,
                                    with_page)
from spiderduck.core.status import Status
from spiderduck.wire import record_proto
from conftest import shared_path
from spiderduck.extract import extract_page
from spiderduck.v1 import metadata_pb2
from support.extraction import EXTRACTION


def protobuf_json(rec: UrlRecord) -> dict:
    return record_proto.message_to_dict(record_proto.to_proto(rec))


EVERYTHING = UrlRecord(
    url="http://s.test/a", canonical_url="http://n.test/c", status=Status.OK, http_status=200,
    redirects=(Redirect("http://s.test/a", 301), Redirect("http://m.test/b", 0),
               Redirect("http://m.test/r", 200, "meta-refresh")),
    content_type="text/html", charset="utf-8", title="Tïtle", description="D", site_name="S",
    author="A", published_time="2020-03-04T05:06:07.250+02:00", lang="en",
    image=Image("http://n.test/i.png", 640, 0, "image/png"), favicon="http://n.test/f.ico",
    type="article", video=Video("http://n.test/v.mp4", 1280, 720, "video/mp4", 2**40 + 7),
    structured_data={"json-ld": [{"@type": "X", "n": 3, "f": 2.5, "t": True, "z": None,
                                  "deep": {"list": [1, "two", [3]]}}], "opengraph": {}},
    share_count=12, first_seen=1_700_000_000.123456, fetched_at=1_700_000_001.0,
    content_ref="f.warc.gz@0+10", final_url="http://n.test/c", error="e", content_length=2_000_000_000,
    expires_at=1_700_003_601.5, etag='W/"v1-\u00e9"', last_modified=1_600_000_000.0,
    robots_directives=("noindex", "max-image-preview:large"), clean_url="http://n.test/c?id=3",
    removed_params=("utm_source", "fbclid"), sensitive=True,
    embed_html='<iframe src="https://www.youtube.com/embed/x"></iframe>', fediverse_creator="@a@b.test",
    truncated=True, modified_time="2021-05-06T07:08:09Z", fetch_mode="rendered",
    provenance=(FieldSource("title", "og:title"), FieldSource("image", "<img>"),
                FieldSource("author", "json-ld:author"), FieldSource("favicon", "/favicon.ico"),
                FieldSource("offer", "json-ld:offers")),
    medium="product", images=(Image("http://n.test/i.png", 640, 0, "image/png"), Image("http://n.test/2.jpg")),
    logo=Image("http://n.test/logo.svg", 0, 0, "image/svg+xml"), theme_color="#00aaff",
    theme_color_dark="#101010", card_style="summary_large_image",
    labels=(Label("Price", "€19.99"), Label("Reading time", "")), offer=Offer("19.99", "EUR", "in_stock"),
    word_count=1234, reading_time_s=322, audio=Audio("http://n.test/a.mp3", "audio/mpeg", 3_448),
    document=Document(19), file_size=2**35 + 3,
    honesty=Honesty("differs", ("final_domain", "title"), "http://elsewhere.test/", 1_795_444_492.5))

CASES = {
    "everything": EVERYTHING,
    "nothing": UrlRecord(url="", status=Status.STATUS_UNSPECIFIED),
    "failed": UrlRecord(url="ftp://x", status=Status.INVALID_URL, error="unsupported scheme ftp",
                        fetched_at=5.5),
    "empty media": UrlRecord(url="http://a.test/", status=Status.OK, image=Image(""), video=Video(""),
                             logo=Image(""), audio=Audio(""), document=Document(), offer=Offer()),
    "date only": UrlRecord(url="http://a.test/", status=Status.OK, published_time="2017-06-29"),
    "unreadable date": UrlRecord(url="http://a.test/", status=Status.OK, published_time="last Tuesday"),
    "nanoseconds": UrlRecord(url="http://a.test/", status=Status.OK, fetched_at=1.000000001,
                             published_time="2020-01-01T00:00:00.123456789Z"),
    "provenance of an emptied field": UrlRecord(url="http://a.test/", status=Status.OK, title="T",
                                                provenance=(FieldSource("title", "<title>"),
                                                            FieldSource("description", "description"))),
    "stored structured data": UrlRecord(url="http://a.test/", status=Status.OK,
                                        structured_data=record_proto.StructuredData.from_dict(
                                            {"a": [1, {"b": False}]})),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_json_mapping_is_protobufs(name):
    assert record_proto.to_dict(CASES[name]) == protobuf_json(CASES[name])


def test_the_json_mapping_of_every_corpus_page_is_protobufs():
    cases_path = shared_path("corpus", "metascraper", "cases.json")
    for case in json.loads(cases_path.read_text("utf-8")):
        page = extract_page((cases_path.parent / case["html"]).read_bytes(), case["url"],
                            case.get("content_type"), **EXTRACTION)
        bare = UrlRecord(url=case["url"], status=Status.OK, final_url=case["url"], canonical_url=case["url"])
        full = dataclasses.replace(bare, **with_page(page))
        assert record_proto.page_to_dict(case["url"], page) == protobuf_json(full), case["name"]


def test_nan_and_infinity_in_structured_data_are_null_in_every_form():
    # JSON-LD may say NaN (Python's json reads it); neither JSON nor a record's Struct can hold it.
    value = {"n": math.nan, "list": [math.inf, 1]}
    expected = {"n": None, "list": [None, 1.0]}
    rec = UrlRecord(url="http://a.test/", status=Status.OK, structured_data=value)
    assert protobuf_json(rec)["structured_data"] == expected
    assert record_proto.to_dict(rec)["structured_data"] == expected
    stored = dataclasses.replace(rec, structured_data=record_proto.StructuredData.from_dict(value))
    assert record_proto.to_dict(stored)["structured_data"] == expected


def test_stored_bytes_give_the_record_back_without_its_share_count():
    data = record_proto.to_bytes(EVERYTHING)
    back = record_proto.from_bytes(data)
    assert back.share_count == 0
    assert protobuf_json(back) == {k: v for k, v in protobuf_json(EVERYTHING).items() if k != "share_count"}
    assert record_proto.from_bytes(data, 7).share_count == 7


@pytest.mark.parametrize("count", [0, 1, 127, 128, 16_383, 16_384, 2**31 - 1, 2**40])
def test_a_share_count_appended_to_stored_bytes_is_read_by_protobuf(count):
    msg = metadata_pb2.UrlMetadata()
    msg.ParseFromString(record_proto.with_share_count(record_proto.to_bytes(EVERYTHING), count))
    assert msg.share_count == min(count, 2**31 - 1)
    assert msg.title == "Tïtle"


@pytest.mark.parametrize("at", [1795444492.25, 1795444492.2499998, 1700000000.123456, 0.000001,
                                1e9 + 0.999999999, 4102444800.5, *[1.7e9 + i / 7 for i in range(50)]])
def test_times_come_back_as_the_same_float(at):
    """first_seen and fetched_at through the protobuf Timestamp: a Cassandra-stored record's
    wire answer was 1795444492.2499998 for 1795444492.25 (seconds * 1e9 is past 53 bits)."""
    rec = UrlRecord(url="http://a.test/", status=Status.OK, first_seen=at, fetched_at=at)
    back = record_proto.from_proto(record_proto.to_proto(rec))
    assert (back.first_seen, back.fetched_at) == (at, at)


def test_structured_data_is_mapped_in_one_pass_as_through_json_text():
    """structured_json's fast path gives what json.dumps(default=str) then the Struct mapping
    gives, for the values extraction produces and the odd ones it might."""
    import datetime
    import decimal
    import math as _math

    from spiderduck.wire.record_proto import _jsonable, _struct_json, structured_json

    class Text(str):
        pass

    class Number(int):
        pass

    values = [
        {"@type": "NewsArticle", "n": 1, "f": 1.5, "big": 10**30, "neg": -0.0, "t": True, "none": None,
         "nan": float("nan"), "inf": float("-inf"), "list": [1, "a", [2.5, {"x": None}]], "tuple": (1, 2)},
        {1: "int key", 2.5: "float key", True: "bool key", None: "none key", "1": "dup of int key"},
        {"when": datetime.date(2026, 11, 25), "price": decimal.Decimal("9.99"), "set": {1}},
        {Text("k"): Text("v"), "n": Number(7), "nested": {"deep": [[[["x"]]]]}},
        {"float keys": {0.1: 1, _math.inf: 2, _math.nan: 3}},
    ]
    for value in values:
        expected = _struct_json(_jsonable(value))
        got = structured_json(value)
        assert json.dumps(got, sort_keys=False) == json.dumps(expected, sort_keys=False), value
    cyclic: dict = {}
    cyclic["self"] = cyclic
    with pytest.raises(ValueError):                       # as json.dumps says: a cycle
        structured_json(cyclic)


def test_every_field_of_the_record_is_set_in_everything():
    """A field added to UrlRecord (truncated, modified_time, ...) is in EVERYTHING, so the JSON
    mapping and the round trip are tested for it."""
    import dataclasses
    unset = [f.name for f in dataclasses.fields(UrlRecord) if getattr(EVERYTHING, f.name) in ("", 0, 0.0, (), None, False)]
    assert unset == []


@pytest.mark.parametrize("mode", ["static", "rendered", ""])
def test_fetch_mode_round_trips_through_proto_bytes_and_json(mode):
    rec = UrlRecord(url="http://a.test/", status=Status.OK, title="T", fetch_mode=mode,
                    modified_time="2021-05-06T07:08:09Z")
    msg = record_proto.to_proto(rec)
    assert msg.fetch_mode == mode and metadata_pb2.UrlMetadata.FETCH_MODE_FIELD_NUMBER == 36
    assert metadata_pb2.UrlMetadata.MODIFIED_TIME_FIELD_NUMBER == 38
    assert record_proto.from_bytes(record_proto.to_bytes(rec)) == rec
    printed = record_proto.to_dict(rec)
    assert printed.get("fetch_mode", "") == mode and printed == protobuf_json(rec)
    assert record_proto.from_json(record_proto.to_json(rec)) == rec
