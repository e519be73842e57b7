"""Every record is bounded before it is stored: text cut, surrogates replaced, sizes clamped,
structured data trimmed to fit, so it can always be stored, served and announced."""
from __future__ import annotations

import dataclasses

from spiderduck.core.record import Image, Redirect, UrlRecord, Video
from spiderduck.wire import record_proto
from spiderduck.wire.record_limits import (MAX_LIST_ITEMS, MAX_STRUCTURED_BYTES, MAX_URL_CHARS, OTHER_TEXT_LIMIT, TEXT_LIMITS,
                                  bounded)
from spiderduck.core.status import Status

BASE = UrlRecord(url="http://a.test/", status=Status.OK, final_url="http://a.test/")


def test_a_record_within_the_limits_is_left_as_it_is():
    rec = dataclasses.replace(BASE, title="Ünïcödé title", description="d", image=Image("http://a.test/i.png", 10, 20),
                              structured_data={"json-ld": [{"@type": "Article"}]})
    assert bounded(rec) is rec


def test_long_text_is_cut_with_an_ellipsis():
    rec = bounded(dataclasses.replace(BASE, title="t" * 1_000_000, description="d" * 100_000,
                                      author="a" * 10_000, error="e" * 50_000))
    assert len(rec.title) == TEXT_LIMITS["title"] and rec.title.endswith("…")
    assert len(rec.description) == TEXT_LIMITS["description"]
    assert len(rec.author) == OTHER_TEXT_LIMIT and len(rec.error) == TEXT_LIMITS["error"]


def test_lone_surrogates_become_replacement_characters_everywhere():
    rec = bounded(dataclasses.replace(
        BASE, title="a\ud800b", author="\udfff", redirects=(Redirect("http://a.test/\ud800", 301),),
        structured_data={"json-ld": [{"headline": "x\ud800"}]}))
    assert rec.title == "a\ufffdb" and rec.author == "\ufffd"
    assert rec.redirects[0].url == "http://a.test/\ufffd"
    back = record_proto.from_bytes(record_proto.to_bytes(rec))      # storable and readable
    assert record_proto.to_dict(back)["structured_data"]["json-ld"][0]["headline"] == "x\ufffd"


def test_sizes_are_clamped_to_int32_and_overlong_urls_dropped():
    rec = bounded(dataclasses.replace(
        BASE, image=Image("http://a.test/i.png", 99_999_999_999, -5), video=Video("http://a.test/" + "v" * MAX_URL_CHARS),
        canonical_url="http://a.test/" + "c" * MAX_URL_CHARS, favicon="http://a.test/f.ico"))
    assert (rec.image.width, rec.image.height) == (2**31 - 1, 0)
    assert rec.video is None and rec.canonical_url == "" and rec.favicon == "http://a.test/f.ico"
    record_proto.to_bytes(rec)                       # protobuf takes it


def test_structured_data_over_its_limit_loses_its_last_blocks_first():
    blocks = [{"@type": "Thing", "n": i, "text": "x" * 1000} for i in range(1000)]     # ~1 MB
    for data in ({"json-ld": blocks, "opengraph": {"og:title": "T"}},
                 record_proto.StructuredData.from_dict({"json-ld": blocks, "opengraph": {"og:title": "T"}})):
        rec = bounded(dataclasses.replace(BASE, structured_data=data))
        kept = dict(rec.structured_data)
        assert 0 < len(kept["json-ld"]) < 1000 and kept["json-ld"][0]["n"] == 0
        assert kept["opengraph"] == {"og:title": "T"}
        assert len(record_proto.to_bytes(rec)) < MAX_STRUCTURED_BYTES + 10_000


def test_structured_data_that_cannot_fit_is_dropped():
    rec = bounded(dataclasses.replace(BASE, structured_data={"opengraph": {"og:x": "y" * 400_000}}))
    assert rec.structured_data is None


def test_lists_are_cut_to_their_limits_and_an_oversized_embed_is_dropped():
    rec = UrlRecord(url="http://a.test/", status=Status.OK,
                    robots_directives=tuple(f"d{i}" for i in range(1000)),
                    removed_params=("x" * 10_000, "utm_source"),
                    embed_html="<iframe src=\"https://www.youtube.com/embed/" + "x" * 10_000 + "\"></iframe>")
    out = bounded(rec)
    assert len(out.robots_directives) == MAX_LIST_ITEMS
    assert len(out.removed_params[0]) == OTHER_TEXT_LIMIT and out.removed_params[1] == "utm_source"
    assert out.embed_html == ""
