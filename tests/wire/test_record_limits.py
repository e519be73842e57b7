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


def test_the_card_fields_are_bounded_too():
    from spiderduck.core.record import Audio, Document, Label, Offer
    from spiderduck.wire.record_limits import MAX_CARD_ITEMS
    long_url = "http://a.test/" + "x" * MAX_URL_CHARS
    rec = bounded(dataclasses.replace(
        BASE, images=tuple(Image(f"http://a.test/{n}.png", 2**40) for n in range(10_000)) + (Image(long_url),),
        logo=Image(long_url), labels=tuple(Label("n" * 10_000, "v\ud800" * 10_000) for _ in range(1_000)),
        offer=Offer("9" * 100_000, "E" * 1_000, "a" * 1_000), audio=Audio("http://a.test/a.mp3", "t" * 1_000, -3),
        video=Video("http://a.test/v.mp4", duration_ms=-1), word_count=2**40, reading_time_s=-7,
        document=Document(2**40), file_size=-1, theme_color="#" * 10_000, medium="m" * 10_000,
        redirects=(Redirect("http://a.test/r", 200, "k" * 10_000),)))
    assert len(rec.images) == MAX_CARD_ITEMS and rec.images[0].width == 2**31 - 1
    assert rec.logo is None and len(rec.labels) == MAX_CARD_ITEMS
    assert len(rec.labels[0].name) == OTHER_TEXT_LIMIT and rec.labels[0].value.startswith("v\ufffd")
    assert len(rec.offer.price) == OTHER_TEXT_LIMIT and rec.audio.duration_ms == 0 and rec.video.duration_ms == 0
    assert (rec.word_count, rec.reading_time_s, rec.document.pages, rec.file_size) == (2**31 - 1, 0, 2**31 - 1, 0)
    assert len(rec.theme_color) == len(rec.medium) == len(rec.redirects[0].kind) == OTHER_TEXT_LIMIT
    assert len(record_proto.to_bytes(rec)) < 64 * 1024        # storable, and its event small
    assert bounded(rec) is rec
