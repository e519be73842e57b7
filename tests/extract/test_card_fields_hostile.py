"""The card's fields of issue 41 against hostile pages: every value bounded, the work bounded, and
nothing raises; and ExplainUrl lists the new fields' sources (their values are no text)."""
from __future__ import annotations

import dataclasses
import json
import time

import pytest

from spiderduck.core.record import PROVENANCE_FIELDS, UrlRecord, with_page
from spiderduck.core.status import Status
from spiderduck.extract import cards, colors, main_text, pictures, playback, prices, values
from spiderduck.extract.rejected import explain_page, explained
from support.extraction import EXTRACTION
from test_card_fields import ARTICLE, URL, ld, page


@pytest.fixture(params=("selectolax", "html5lib"))
def parser(request):
    return request.param


def timed(head: str = "", body: str = "", parser: str = "selectolax"):
    started = time.perf_counter()
    meta = page(head, body, parser=parser)
    return meta, time.perf_counter() - started


def test_ten_thousand_og_images_are_read_to_a_bound(parser):
    head = "".join(f'<meta property="og:image" content="/i{n}.jpg">' for n in range(10_000))
    baseline = timed("".join(f'<meta name="x{n}" content="/i{n}.jpg">' for n in range(10_000)), parser=parser)[1]
    meta, took = timed(head, parser=parser)
    assert len(meta.images) == pictures.MAX_IMAGES
    assert meta.images[0].url == "https://shop.example.test/i0.jpg"
    assert took < baseline * 3 + 0.5, (took, baseline)
    same = page('<meta property="og:image" content="/same.jpg">' * 10_000, parser=parser)
    assert len(same.images) == 1


def test_a_megabyte_label_is_cut(parser):
    huge = "x" * 1_000_000
    meta = page(f'<meta name="twitter:label1" content="{huge}"><meta name="twitter:data1" content="{huge}">'
                + "".join(f'<meta name="twitter:label{n}" content="L{n}"><meta name="twitter:data{n}" content="D{n}">'
                          for n in range(2, 40)), parser=parser)
    assert len(meta.labels) == cards.MAX_LABELS
    assert len(meta.labels[0].name) == cards.LABEL_NAME_CHARS and len(meta.labels[0].value) == cards.LABEL_VALUE_CHARS


@pytest.mark.parametrize("value", [
    "rgb(1e999, 0, 0)", "rgb(999999999999999999999, 0, 0)", "rgb(" + "1," * 10_000 + ")", "#" + "f" * 10_000,
    "rgb(-5, 300, 0.5.5)", "rgb(1, 2)", "rgb(" * 1_000, "\x00", "rgb(nan, nan, nan)", "red" * 1000,
])
def test_hostile_theme_colours_are_none(value):
    assert colors.css_color(value) == ""


def test_many_theme_color_metas(parser):
    head = '<meta name="theme-color" content="bogus">' * 5_000 + '<meta name="theme-color" content="#fff">'
    assert page(head, parser=parser).theme_color == ""          # read to MAX_THEME_METAS


@pytest.mark.parametrize("price", ["NaN", "1e400", "Infinity", "-1", "1" * 5_000, "12.34.56", "0x10", "1e3",
                                   float("nan"), float("inf"), 1e400, -3, 10**30, True, None, {"a": 1}, [], "٣",
                                   1e-300, 5e-324])
def test_hostile_prices_are_none(price):
    assert prices.price_text(price) == ""


def test_hostile_offers(parser):
    for offers in ({"price": "NaN", "priceCurrency": "EUR"}, {"price": 1e308 * 10, "priceCurrency": "E" * 10_000},
                   [{"price": "x"}] * 10_000, {"priceSpecification": [[[[{"price": 3}]]]]}, "InStock" * 1000):
        meta = page(ld({"@type": "Product", "offers": offers}), parser=parser)
        assert meta.offer is None, offers


def test_deep_json_ld_is_none_of_the_fields(parser):
    deep = '{"@type": "Product", "offers": ' + '{"@type": "Offer", "offers": ' * 5_000 + "{}" + "}" * 5_001
    meta = page(f'<script type="application/ld+json">{deep}</script>'
                + ld({"@type": "Organization", "logo": {"url": {"url": {"url": "/x"}}}}), parser=parser)
    assert meta.offer is None and meta.logo is None and meta.medium == ""


@pytest.mark.parametrize("value", ["PT99999999999H", "P9999999W", "PT" + "9" * 5_000 + "S", "P", "PT", "-PT5M",
                                   "PT5M" * 1_000, "1e400", "inf", float("nan"), 10**400 if False else 1e300, -1,
                                   1e306, 1.7e308, "1e306"])
def test_hostile_durations_are_none(value):
    assert playback.duration_ms(value) == 0


def test_a_duration_whose_milliseconds_overflow_costs_the_page_nothing(parser):
    """1e306 s is finite, its milliseconds are not: the page keeps its card, the video its URL."""
    meta = page('<title>Clip</title><meta property="og:video" content="https://v.test/c.mp4">'
                + ld({"@type": "VideoObject", "duration": 1e306}), parser=parser)
    assert meta.title == "Clip" and meta.video.url == "https://v.test/c.mp4" and meta.video.duration_ms == 0


def test_durations_within_bounds():
    assert playback.duration_ms("PT1H2M3S") == 3_723_000
    assert playback.duration_ms("P1DT2H") == 93_600_000
    assert playback.duration_ms("PT90.5S") == 90_500
    assert playback.duration_ms(" 150 ") == 150_000
    assert playback.duration_ms("PT719H") == 719 * 3_600_000         # under 30 days
    assert playback.duration_ms("PT721H") == 0


@pytest.mark.parametrize("head, body", [
    ('<meta property="og:audio" content="javascript:alert(1)">', ""),
    ('<meta property="og:audio" content="  JavaScript:alert(1)">', ""),
    ('<meta name="twitter:player:stream" content="javascript:alert(1)">'
     '<meta name="twitter:player:stream:content_type" content="audio/mpeg">', ""),
    ("", '<audio src="javascript:alert(1)"><source src="data:audio/mp3;base64,AA"></audio>'),
    ("", '<audio><source src="ftp://files.test/a.mp3"></audio>'),
    ("", '<audio><source src="vbscript:x"></audio>'),
])
def test_scripted_or_non_http_audio_is_none(head, body, parser):
    assert page(head, body, parser=parser).audio is None


def test_a_deep_page_counts_its_words_quickly(parser):
    depth = 2_000 if parser == "html5lib" else 20_000
    body = ("<div>" * depth + "some words here" + "<aside><nav><script>x y</script></nav></aside>" * 300
            + "<button>z</button><svg><style>w</style></svg>" * 1_000)   # under parsers._MAX_SKIPPED
    meta, took = timed(ARTICLE, body, parser=parser)
    assert meta.word_count == 3
    assert took < 10, took


def test_an_article_inside_an_aside_counts_its_own_words(parser):
    # the ancestor walk stops at the main element: the aside above it cuts nothing out
    body = "<aside><article>one two <nav>x y</nav> three<button>Play</button>er</article></aside><p>z</p>"
    assert page(ARTICLE, body, parser=parser).word_count == 4     # one two three er


def test_a_skipped_elements_text_is_cut_where_it_stands(parser):
    # the first "Share" starts the main text: it is cut there, not searched for between
    # separators further on (which took the second, and left the first in the count)
    body = "<article><button>Share</button><p>hello</p><button>Share</button><p>end</p></article>"
    assert page(ARTICLE, body, parser=parser).word_count == 2      # hello end


def test_a_skipped_element_inside_another_goes_with_the_nearest_one(parser):
    # the button is 81 levels below the <nav> but 41 below the <aside>: it goes with the aside
    # (within main_text._MAX_DEPTH_UP of it), so its "X" is not cut again out of the text after
    deep = ("<article><p>a</p><nav>N " + "<div>" * 40 + "<aside>A " + "<div>" * 40 + "<button>X</button>"
            + "</div>" * 40 + "<button>Y</button></aside>" + "</div>" * 40 + "</nav><p>X Y z</p></article>")
    assert page(ARTICLE, deep, parser=parser).word_count == 4      # a X Y z


def test_the_main_texts_find_is_str_find_and_bounded():
    part = "x" * 40 + "y" * 40
    cases = [("ab " + part + " cd", part, 0), ("ab " + part + " cd", part, 4), (part[:-1] + "z " + part, part, 0),
             ("x" * 1_000 + part, part, 0), ("no", part, 0), ("ab cd", "cd", 1), ((part[:40] + "q") * 50, part, 0)]
    for text, wanted, start in cases:
        assert main_text.find(text, wanted, start) == text.find(wanted, start), (text[:20], start)
    hostile = "x" * 2_000_000                           # the prefix stands everywhere, the whole nowhere
    started = time.perf_counter()
    assert main_text.find(hostile, "x" * 1_000 + "y", 0) == -1
    assert time.perf_counter() - started < 1


def test_resolved_urls_are_remembered_to_a_bound():
    long_ref = "/" + "a" * 100_000
    assert values.absolute_url(long_ref, URL) == values._absolute_url(long_ref, URL)
    for n in range(values.MAX_REMEMBERED_URLS * 3):
        assert values.absolute_url(f" /i{n}.jpg", URL).endswith(f"/i{n}.jpg")
    info = values._remembered.cache_info()
    assert info.currsize <= values.MAX_REMEMBERED_URLS
    values.absolute_url(long_ref, URL)
    assert values._remembered.cache_info().currsize == info.currsize     # a long one is not kept
    assert values.absolute_url("javascript:x", URL) == values.absolute_url(None, URL) == ""


def test_a_huge_article_is_counted_to_a_bound():
    text = "word " * 400_000                          # 2 MB of words: the markup's cap cuts it
    meta = page(ARTICLE, f"<article><p>{text}</p></article>")
    assert 0 < meta.word_count <= cards.MAX_WORDS
    assert meta.reading_time_s == round(meta.word_count * 60 / cards.WORDS_PER_MINUTE)


def test_a_hostile_reading_time_falls_back_to_the_words(parser):
    for value in ("99999999999 minutes", "9" * 10_000 + " min", "0 minutes", "soon"):
        meta = page(ARTICLE + f'<meta name="twitter:label1" content="Reading time">'
                              f'<meta name="twitter:data1" content="{value}">', "<p>a b c d</p>", parser=parser)
        assert meta.reading_time_s == round(4 * 60 / 230), value


# --- ExplainUrl: the new fields' sources --------------------------------------------------------

def test_explain_lists_the_new_fields_sources():
    head = (ARTICLE + '<meta property="og:image" content="/a.jpg"><meta name="theme-color" content="#123456">'
            '<meta name="twitter:label1" content="Reading time"><meta name="twitter:data1" content="3 min">'
            '<meta property="og:audio" content="/a.mp3"><meta property="og:video" content="/v.mp4">'
            + ld({"@type": "NewsArticle", "publisher": {"@type": "Organization", "logo": "/logo.png"},
                  "offers": {"price": "1"}})
            + ld({"@type": "Product", "offers": {"price": "5", "priceCurrency": "EUR"}}))
    html = f"<html><head>{head}</head><body><article><p>one two three</p></article></body></html>".encode()
    meta, offered = explain_page(html, URL, "text/html", **EXTRACTION)
    record = dataclasses.replace(UrlRecord(url=URL, status=Status.OK, canonical_url=URL, final_url=URL),
                                 **with_page(meta))
    listed = {f.field: f.source for f in explained(record, offered)}
    assert listed["images"] == "og:image" and listed["logo"] == "json-ld:publisher.logo"
    assert listed["theme_color"] == "<meta name=theme-color>" and listed["card_style"] == "derived"
    assert listed["labels"] == "twitter:label1" and listed["offer"] == "json-ld:offers"
    assert listed["word_count"] == "text" and listed["reading_time_s"] == "twitter:label1"
    assert listed["audio"] == "og:audio" and listed["video"] == "og:video" and listed["medium"] == "og:type"
    assert list(listed) == [f for f in PROVENANCE_FIELDS if f in listed]
    json.dumps([dataclasses.asdict(f) for f in explained(record, offered)])      # plain values all through


def test_huge_urls_are_none(parser):
    huge = "/" + "a" * 100_000 + ".jpg"
    meta = page(f'<meta property="og:image" content="{huge}"><meta property="og:image" content="/ok.jpg">'
                f'<meta property="og:audio" content="{huge}.mp3">'
                + ld({"@type": "Organization", "logo": huge}), f'<audio src="{huge}.ogg"></audio>', parser=parser)
    assert [i.url for i in meta.images] == ["https://shop.example.test/ok.jpg"]
    assert meta.logo is None and meta.audio is None


def test_ten_thousand_audio_elements(parser):
    body = '<audio><source src="/first.mp3"></audio>' + '<audio><source src="/a.mp3"><source src="/b.mp3"></audio>' * 10_000
    meta, took = timed("", body, parser=parser)
    assert meta.audio.url == "https://shop.example.test/first.mp3"
    assert took < 5, took


def test_a_graph_of_a_hundred_thousand_nodes(parser):
    nodes = [{"@type": "T"}] * 100_000 + [{"@type": "Product", "offers": {"price": "5"}},
                                          {"@type": "Organization", "logo": "/l.png"}]
    head = ld({"@graph": nodes})
    assert len(head) < 2_000_000                           # read whole (parsers.MAX_HTML_BYTES)
    meta, took = timed(head, parser=parser)
    assert meta.structured_data["json-ld"]                 # the block is read ...
    assert meta.offer is None and meta.medium == "" and meta.logo is None     # ... beyond the nodes looked at
    found = page(ld({"@graph": nodes[-2:]}), parser=parser)
    assert found.offer.price == "5" and found.logo.url == "https://shop.example.test/l.png"
    assert took < 10, took
