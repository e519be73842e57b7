"""What ExplainUrl says of each value a page offered (issue 30): every value each field's sources
offered, the rule's own refusals, and why the rest lost against the record (spiderduck.extract.
offers and .rejected). The offers walk the rules' sources in the rules' order: on every corpus
page and every page here, the first offer the rule would take is the value extract_page chose."""
from __future__ import annotations

import dataclasses
import json
import pathlib

import pytest

from spiderduck.core.record import Image, UrlRecord, with_page, with_source
from spiderduck.core.status import Status
from spiderduck.extract import offers as O
from spiderduck.extract.page import page_of, sources
from spiderduck.extract.rejected import NOT_KEPT_WHEN_PROBED, explain_page, explained
from support.extraction import EXTRACTION, PARSER, ROBOTS_TOKEN

URL = "https://example.test/news/2021/03/04/story.html"


def html(head: str = "", body: str = "", lang: str = "") -> bytes:
    return (f"<!doctype html><html{f' lang={lang}' if lang else ''}><head><meta charset=utf-8>{head}</head>"
            f"<body>{body}</body></html>").encode()


def record_of(body: bytes, url: str = URL, **changes) -> tuple[UrlRecord, tuple]:
    """The record extract_page makes of the page (as stored), changed as asked, and the offers."""
    page, offered = explain_page(body, url, "text/html", **EXTRACTION)
    record = dataclasses.replace(UrlRecord(url=url, status=Status.OK, canonical_url=url, final_url=url),
                                 **with_page(page))
    return dataclasses.replace(record, **changes), offered


def why(body: bytes, field: str, url: str = URL, **changes) -> tuple[str, dict[tuple[str, str], str]]:
    """The field's source and {(source, value): reason} of each value that lost."""
    record, offered = record_of(body, url, **changes)
    entry = next((f for f in explained(record, offered) if f.field == field), None)
    assert entry is not None, f"{field} is not explained"
    return entry.source, {(c.source, c.value): c.reason for c in entry.rejected}


def assert_rules_agree(body: bytes, url: str, content_type: str | None = None) -> None:
    """The first offer without a reason is each filled field's value and source, and a field the
    rule left empty has no such offer (the favicon: /favicon.ico, tried later, always is one)."""
    s, encoding, markup = sources(body, url, content_type, parser=PARSER)
    page = page_of(s, encoding, markup, ROBOTS_TOKEN)
    chosen = {p.field: p.source for p in page.provenance}
    values = {"title": page.title, "description": page.description, "site_name": page.site_name,
              "image": page.image.url if page.image else "", "author": page.author, "lang": page.lang,
              "published_time": page.published_time, "canonical_url": page.canonical_url or url,
              "favicon": page.favicon}
    for field, offered in O.offers(s):
        taken = [c for c in offered if not c.reason]
        if field not in chosen:
            assert field == "favicon" or not taken, (url, field, taken)
            continue
        winner = next((c for c in offered if c.source == chosen[field] and c.value == O.cut(values[field])), None)
        assert winner is not None, (url, field, chosen[field], values[field], offered[:4])
        before = [c for c in offered[:offered.index(winner)] if not c.reason]
        assert not before, (url, field, chosen[field], before)


def test_the_offers_agree_with_the_rules_on_every_corpus_page(shared_path):
    folder = pathlib.Path(shared_path("corpus", "metascraper"))
    cases = json.loads((folder / "cases.json").read_text(encoding="utf-8"))
    for case in cases:
        assert_rules_agree((folder / case["html"]).read_bytes(), case["url"], case.get("content_type"))
    assert len(cases) >= 50


PAGES = [
    html('<meta property="og:title" content="OG"><meta name="twitter:title" content="TW"><title>T</title>'),
    html('<title>Story | Site</title><meta property="og:site_name" content="Site">'),
    html('<meta property="og:url" content="https://example.test/">'
         '<link rel="canonical" href="https://example.test/news/2021/03/04/story.html">'),
    html('<meta property="og:image" content="/spacer.gif" ><meta property="og:image:width" content="1">'
         '<meta name="twitter:image" content="https://t.example.test/pixel.gif">', '<img src="/a.jpg">'),
    html('<meta name="author" content="Site"><meta property="og:site_name" content="Site">',
         '<p class="byline">By Jane Doe</p>'),
    html('<meta property="og:site_name" content="example.test">'),
    html('<meta name="date" content="soon"><meta property="article:published_time" content="2020-01-02">'),
    html("", "<h1>Heading</h1><p>Paragraph.</p>", lang="zz-!!"),
    html('<link rel="icon" href="/a.ico" sizes="16x16"><link rel="icon" href="/b.png" sizes="64x64">'),
]


@pytest.mark.parametrize("body", PAGES)
def test_the_offers_agree_with_the_rules_on_hand_written_pages(body):
    assert_rules_agree(body, URL)


@pytest.mark.parametrize("body", [
    # a year alone names no day: the last resort, after a <time> in the future (issue 42)
    html('<meta name="date" content="2019">'),
    html('<meta name="date" content="2019">', '<time datetime="2099-01-01">x</time><time datetime="2020">y</time>'),
    html('<meta name="date" content="2019">', '<h1>Story</h1><p>Veröffentlicht am 12.03.2021</p>'),
    html('<meta name="date" content="2019"><meta name="pubdate" content="2018-05-06">'),
])
def test_the_offers_agree_with_the_rules_on_pages_without_a_day_in_their_url(body):
    url = "https://example.test/news/story.html"
    assert_rules_agree(body, url)
    # and the date the rule takes is offered without a reason, a year alone too
    s, encoding, markup = sources(body, url, None, parser=PARSER)
    published = page_of(s, encoding, markup, ROBOTS_TOKEN).published_time
    offered = dict(O.offers(s))["published_time"]
    assert next(c.value for c in offered if not c.reason) == published


def test_a_value_below_the_winner_lost_on_precedence_and_the_same_value_says_so():
    source, lost = why(html('<meta property="og:title" content="OG"><meta name="twitter:title" content="TW">'
                            '<title>OG</title>'), "title")
    assert source == "og:title"
    assert lost == {("twitter:title", "TW"): "lower precedence than og:title",
                    ("<title>", "OG"): "the same value, from a source below og:title"}


def test_images_refused_by_the_rule_say_why():
    body = html('<meta property="og:image" content="/icon.png"><meta property="og:image:width" content="16">'
                '<meta property="og:image:height" content="16">'
                '<meta name="twitter:image" content="https://t.example.test/img/pixel.gif">'
                '<meta name="image" content="/clip.mp4">', '<img src="/photo.jpg" width="800" height="600">')
    source, lost = why(body, "image")
    assert source == "<img>"
    assert lost[("og:image", "https://example.test/icon.png")].startswith("stated 16×16 px: under 50 px")
    assert lost[("twitter:image", "https://t.example.test/img/pixel.gif")] == O.PIXEL
    assert lost[("image", "https://example.test/clip.mp4")] == O.NOT_IMAGE


def test_an_image_that_failed_its_probe_says_so_and_the_later_ones_lost_on_precedence():
    body = html('<meta property="og:image" content="/gone.jpg"><meta name="twitter:image" content="/tw.jpg">',
                '<img src="/later.jpg" width="800" height="600">')
    probed = with_source(record_of(body)[0].provenance, "image", "twitter:image")   # as the related stage marks it
    source, lost = why(body, "image", image=Image("https://example.test/tw.jpg", 1200, 630), provenance=probed)
    assert source == "twitter:image"
    assert lost == {("og:image", "https://example.test/gone.jpg"): NOT_KEPT_WHEN_PROBED,
                    ("<img>", "https://example.test/later.jpg"): "lower precedence than twitter:image"}
    source, lost = why(body, "image", image=None)           # none loaded: the card has no image
    assert source == "" and set(lost.values()) == {NOT_KEPT_WHEN_PROBED}


@pytest.mark.parametrize("field, head, directive, empty", [
    ("description", '<meta name="description" content="Said.">', "nosnippet", {"description": ""}),
    ("description", '<meta name="description" content="Said.">', "max-snippet:0", {"description": ""}),
    ("image", '<meta property="og:image" content="/a.jpg">', "max-image-preview:none", {"image": None}),
])
def test_a_value_withheld_by_a_robots_directive_says_which(field, head, directive, empty):
    source, lost = why(html(head), field, robots_directives=(directive,), **empty)
    assert source == "" and set(lost.values()) == {f"withheld by a robots directive ({directive})"}


def test_a_template_canonical_and_another_sites_page_are_refused_and_the_pages_own_url_derived():
    body = html('<meta property="og:url" content="https://example.test/">'
                '<link rel="canonical" href="https://syndicator.test/other/path">')
    source, lost = why(body, "canonical_url")
    assert source == "derived"
    assert "home page" in lost[("og:url", "https://example.test/")]
    assert "another site's page" in lost[("<link rel=canonical>", "https://syndicator.test/other/path")]


def test_refusals_of_names_dates_and_language_tags():
    _, lost = why(html('<meta name="author" content="The Site"><meta property="og:site_name" content="The Site">',
                       '<p class="byline">By Jane Doe</p>'), "author")
    assert lost == {("author", "The Site"): O.SITE_NOT_PERSON}
    _, lost = why(html('<meta name="date" content="soon"><meta property="article:published_time" content="2020-01-02">'),
                  "published_time")
    assert lost[("date", "soon")] == O.NOT_DATE
    assert lost[("derived", "2021-03-04T12:00:00Z")] == "lower precedence than article:published_time"
    _, lost = why(html('<meta property="og:locale" content="en_GB">', lang="zz-!!"), "lang")
    assert lost == {("<html lang>", "zz-!!"): O.NOT_LANGUAGE}
    _, lost = why(html('<meta property="og:site_name" content="example.test"><meta name="application-name" '
                       'content="Example">'), "site_name")
    assert lost == {("og:site_name", "example.test"): O.DOMAIN_ONLY}


def test_a_value_from_oembed_leaves_the_pages_refused_ones_listed():
    body = html('<meta name="author" content="admin">')
    filled = with_source(record_of(body)[0].provenance, "author", "oembed:author_name")
    source, lost = why(body, "author", author="Jane Doe", provenance=filled)
    assert source == "oembed:author_name" and lost == {("author", "admin"): O.NOT_A_NAME}


def test_the_sites_favicon_ico_tried_and_not_kept_says_so():
    from spiderduck.extract.rejected import ICO_NOT_KEPT
    source, lost = why(html("<title>T</title>"), "favicon")
    assert source == "" and lost == {("/favicon.ico", "https://example.test/favicon.ico"): ICO_NOT_KEPT}


def test_offers_are_bounded_per_field_and_in_length():
    icons = "".join(f'<link rel="icon" href="/i{n}.png">' for n in range(100))
    body = html(icons + f'<meta name="description" content="{"word " * 2000}">'
                + '<meta property="og:description" content="Short.">')
    offered = dict(explain_page(body, URL, "text/html", **EXTRACTION)[1])
    assert len(offered["favicon"]) == O.MAX_OFFERS
    assert max(len(c.value) for c in offered["description"]) <= O.VALUE_CHARS
