"""Extraction rules: each field's precedence, URL resolution, JSON-LD, both parsers."""
import pytest

from spiderduck.core.record import Image, PageMetadata, Video
from spiderduck.extract import extract_page
from spiderduck.extract.parsers import parse
from spiderduck.extract.values import rfc3339
from support.extraction import EXTRACTION, ROBOTS_TOKEN

URL = "https://example.test/news/story.html"
PARSERS = ("selectolax", "html5lib")


def page(head: str = "", body: str = "", parser: str = "selectolax", url: str = URL,
         html_attrs: str = "") -> PageMetadata:
    html = f"<!doctype html><html {html_attrs}><head><meta charset=utf-8>{head}</head><body>{body}</body></html>"
    return extract_page(html.encode("utf-8"), url, "text/html", parser=parser, robots_token=ROBOTS_TOKEN)


def ld(obj: str) -> str:
    return f'<script type="application/ld+json">{obj}</script>'


@pytest.fixture(params=PARSERS)
def parser(request):
    return request.param


# --- title -----------------------------------------------------------------------------------

def test_title_precedence(parser):
    head = ('<title>HTML title</title><meta name="twitter:title" content="Twitter title">'
            '<meta property="og:title" content="OG title">')
    assert page(head, parser=parser).title == "OG title"
    assert page(head.replace("og:title", "x"), parser=parser).title == "Twitter title"
    assert page("<title>HTML title</title>" + ld('{"headline": "LD"}'), parser=parser).title == "HTML title"
    assert page(ld('{"headline": "LD headline"}'), "<h1>H1</h1>", parser=parser).title == "LD headline"
    assert page('<meta name="DC.title" content="DC">', "<h1>H1</h1>", parser=parser).title == "DC"
    assert page("", "<h1> Only\n  the <b>h1</b> </h1>", parser=parser).title == "Only the h1"


def test_entity_encoded_title_is_decoded_and_folded(parser):
    head = "<title>\n  Caf&eacute; &amp; Bar &#8212;   &lt;News&gt;\n</title>"
    assert page(head, parser=parser).title == "Café & Bar — <News>"


def test_quotes_are_typeset(parser):
    head = """<meta property="og:title" content="It's a &quot;test&quot;">"""
    assert page(head, parser=parser).title == "It’s a “test”"


def test_missing_head():
    html = b"<title>No head</title><meta property=og:description content=Desc><p>text</p>"
    meta = extract_page(html, URL, **EXTRACTION)
    assert (meta.title, meta.description) == ("No head", "Desc")


def test_empty_and_garbage_pages_never_fail(parser):
    for body in (b"", b"\x00\xff\xfe", b"<", b"<html><head><meta property=og:image content=''>"):
        meta = extract_page(body, URL, None, parser=parser, robots_token=ROBOTS_TOKEN)
        assert meta.title == "" and meta.image is None


# --- description, site name, author, lang, type ------------------------------------------------

def test_description_precedence(parser):
    head = ('<meta name="description" content="plain"><meta name="twitter:description" content="tw">'
            '<meta property="og:description" content="og">')
    assert page(head, parser=parser).description == "og"
    assert page(head.replace("og:description", "x"), parser=parser).description == "tw"
    assert page('<meta name="description" content="plain">', parser=parser).description == "plain"
    assert page(ld('{"description": "ld"}'), "<p>para</p>", parser=parser).description == "ld"
    assert page("", "<p> </p><p>First  paragraph</p>", parser=parser).description == "First paragraph"


def test_site_name_precedence(parser):
    assert page('<meta property="og:site_name" content="OG Site">' + ld('{"publisher": {"name": "LD Pub"}}'),
                parser=parser).site_name == "LD Pub"
    assert page('<meta property="og:site_name" content="OG Site">', parser=parser).site_name == "OG Site"
    assert page('<meta name="application-name" content="App">', parser=parser).site_name == "App"
    assert page("<title>A story | The Daily</title>", parser=parser).site_name == "The Daily"
    assert page("<title>No separator</title>", parser=parser).site_name == ""


def test_author_precedence(parser):
    meta_author = '<meta name="author" content="Meta Author">'
    assert page(meta_author + ld('{"author": {"@type": "Person", "name": "LD Author"}}'),
                parser=parser).author == "LD Author"
    assert page(meta_author + '<meta property="article:author" content="https://facebook.com/x">',
                parser=parser).author == "Meta Author"
    assert page('<meta property="article:author" content="https://facebook.com/x">'
                '<meta name="DC.creator" content="DC Author">', parser=parser).author == "DC Author"
    assert page("", '<span itemprop="author">By Micro Data</span>', parser=parser).author == "Micro Data"
    assert page('<meta name="twitter:creator" content="@handle">', '<a rel="author" href="/a">Jane Doe</a>',
                parser=parser).author == "Jane Doe"
    assert page('<meta name="twitter:creator" content="@handle">', parser=parser).author == "handle"


def test_a_products_brand_is_its_author(parser):
    product = ld('{"@type": "Product", "name": "Model S", "brand": {"@type": "Brand", "name": "Tesla"}}')
    assert page(product, parser=parser).author == "Tesla"
    assert page(ld('{"@type": "Product", "brand": {"name": "Tesla"}, "author": {"name": "Jane Doe"}}'),
                parser=parser).author == "Jane Doe"


def test_several_json_ld_authors_make_a_byline(parser):
    head = ld('{"@type": "NewsArticle", "author": [{"name": "A"}, {"name": "B"}, {"name": "C"}]}')
    assert page(head, parser=parser).author == "A, B and C"


def test_lang_precedence(parser):
    assert page('<meta property="og:locale" content="fr_FR">', html_attrs='lang="en-US"',
                parser=parser).lang == "en-US"
    assert page('<meta property="og:locale" content="fr_FR">', parser=parser).lang == "fr-FR"
    assert page(ld('{"inLanguage": "de"}'), parser=parser).lang == "de"
    assert page('<meta name="dc.language" content="pt-BR">', parser=parser).lang == "pt-BR"
    assert page("", html_attrs='lang="not a tag"', parser=parser).lang == ""


def test_type_and_charset(parser):
    meta = page('<meta property="og:type" content="article">', parser=parser)
    assert (meta.type, meta.charset) == ("article", "utf-8")


# --- dates -----------------------------------------------------------------------------------

def test_published_time_is_the_first_publication_and_modified_time_the_last_change(parser):
    both = ('<meta property="article:published_time" content="2020-01-02T03:04:05+01:00">'
            '<meta property="article:modified_time" content="2021-01-01T00:00:00Z">')
    stated = page(both, parser=parser)
    assert (stated.published_time, stated.modified_time) == ("2020-01-02T02:04:05Z", "2021-01-01T00:00:00Z")
    ld_modified = page(both + ld('{"dateModified": "2022-05-06T07:08:09Z"}'), parser=parser)
    assert (ld_modified.published_time, ld_modified.modified_time) == ("2020-01-02T02:04:05Z", "2022-05-06T07:08:09Z")
    assert page(both + ld('{"datePublished": "2019-05-06"}'), parser=parser).published_time == "2019-05-06T00:00:00Z"
    assert page(ld('{"datePublished": "2019-05-06"}'), parser=parser).published_time == "2019-05-06T00:00:00Z"
    assert page('<meta name="dcterms.created" content="2018-02-03T10:00:00">',
                parser=parser).published_time == "2018-02-03T10:00:00Z"
    assert page("", '<time datetime="2017-07-08T09:10:11-04:00">July 8</time>',
                parser=parser).published_time == "2017-07-08T13:10:11Z"
    # A page that states only when it changed has no publication date: the change is not it.
    only_modified = page('<meta property="article:modified_time" content="2021-01-01T00:00:00Z">', parser=parser)
    assert (only_modified.published_time, only_modified.modified_time) == ("", "2021-01-01T00:00:00Z")


def test_date_shown_only_as_text_is_the_last_resort(parser):
    # <p class="date">, <span class="post-timestamp">, <time> without datetime: a written date
    # without a time is noon UTC, so it is the same calendar day in (almost) every zone.
    assert page("", '<p class="date mb-1">Aug 14, 2020</p>', parser=parser).published_time == "2020-08-14T12:00:00Z"
    assert page("", '<div class="time"><h2> July 05, 2017 </h2></div>',
                parser=parser).published_time == "2017-07-05T12:00:00Z"
    assert page("", '<span class="post-timestamp">2016-04-08T20:30:39+00:00</span>',
                parser=parser).published_time == "2016-04-08T20:30:39Z"
    assert page("", '<time class="x"><strong>October 11, 2017</strong> \u2022 Episode 32</time>',
                parser=parser).published_time == "2017-10-11T12:00:00Z"
    # Structured dates win over text; text that is not a date, or only a year, gives nothing. A
    # whole paragraph that happens to hold a date is no dated element: the date an element shows
    # wins over it, though the page's text is searched when no element shows one.
    assert page('<meta name="date" content="2019-01-01T10:00:00Z">', '<p class="date">Aug 14, 2020</p>',
                parser=parser).published_time == "2019-01-01T10:00:00Z"
    assert page("", '<span class="date">2017</span><div class="timeline">soon</div>',
                parser=parser).published_time == ""
    long_text = "We wrote this on Aug 14, 2020 and have been updating it ever since, as news comes in."
    assert page("", f'<div class="update">{long_text}</div><p class="date">Aug 20, 2020</p>',
                parser=parser).published_time == "2020-08-20T12:00:00Z"
    assert page("", f'<div class="update">{long_text}</div>', parser=parser).published_time == "2020-08-14T12:00:00Z"


@pytest.mark.parametrize("value, expected", [
    ("2016-05-24T18:00:03.899Z", "2016-05-24T18:00:03.899Z"),
    ("2016-05-24T18:00:03+0200", "2016-05-24T16:00:03Z"),
    ("2016-05-24 18:00:03", "2016-05-24T18:00:03Z"),          # no offset: UTC
    ("2016-05-24", "2016-05-24T00:00:00Z"),
    ("Tue, 24 May 2016 18:00:03 GMT", "2016-05-24T18:00:03Z"),
    ("Thu, May 13 2021 14:01:31 EDT", "2021-05-13T18:01:31Z"),
    ("May 24, 2016", "2016-05-24T12:00:00Z"),                 # written for people, no time: noon UTC
    (1464112803, "2016-05-24T18:00:03Z"),
    ("not a date", ""),
    ("", ""),
])
def test_rfc3339(value, expected):
    assert rfc3339(value) == expected


# --- URLs ------------------------------------------------------------------------------------

def test_canonical_url_precedence_and_resolution(parser):
    # og:url first, like every field a page shows when shared; then <link rel=canonical>.
    head = '<meta property="og:url" content="https://example.test/og"><link rel="canonical" href="/canon?x=1">'
    assert page(head, parser=parser).canonical_url == "https://example.test/og"
    assert page('<link rel="canonical" href="/canon?x=1">',
                parser=parser).canonical_url == "https://example.test/canon?x=1"
    assert page('<meta property="og:url" content="javascript:x"><link rel="canonical" href="/c">',
                parser=parser).canonical_url == "https://example.test/c"
    assert page("", parser=parser).canonical_url == ""


def test_base_href_is_used_for_relative_urls(parser):
    head = '<base href="https://cdn.example.test/assets/"><meta property="og:image" content="img/a.png">'
    assert page(head, parser=parser).image.url == "https://cdn.example.test/assets/img/a.png"
    relative_base = '<base href="/static/"><link rel="icon" href="fav.ico">'
    assert page(relative_base, parser=parser).favicon == "https://example.test/static/fav.ico"


def test_several_og_images_first_wins_with_its_properties(parser):
    head = ('<meta property="og:image" content="https://img.test/1.jpg">'
            '<meta property="og:image:width" content="1200"><meta property="og:image:height" content="630">'
            '<meta property="og:image:type" content="image/jpeg">'
            '<meta property="og:image" content="https://img.test/2.jpg">'
            '<meta property="og:image:width" content="10">')
    assert page(head, parser=parser).image == Image("https://img.test/1.jpg", 1200, 630, "image/jpeg")


def test_og_image_secure_url_is_preferred_within_its_structure(parser):
    head = ('<meta property="og:image" content="http://img.test/1.jpg">'
            '<meta property="og:image:secure_url" content="https://img.test/1.jpg">')
    assert page(head, parser=parser).image.url == "https://img.test/1.jpg"


def test_protocol_relative_and_data_image_urls(parser):
    assert page('<meta property="og:image" content="//cdn.test/a.png">', parser=parser,
                url="http://example.test/").image.url == "http://cdn.test/a.png"
    head = ('<meta property="og:image" content="data:image/png;base64,AAAA">'
            '<meta name="twitter:image" content="/tw.png">')
    assert page(head, parser=parser).image == Image("https://example.test/tw.png")
    assert page('<meta property="og:image" content="data:image/gif;base64,R0lGOD">', parser=parser).image is None


def test_image_fallbacks(parser):
    assert page(ld('{"image": [{"url": "/ld.jpg"}]}'), parser=parser).image.url == "https://example.test/ld.jpg"
    assert page("", '<img src="data:image/gif;base64,x"><img src="/body.jpg">',
                parser=parser).image.url == "https://example.test/body.jpg"
    assert page("", '<video poster="/poster.jpg" src="/v.mp4"></video>',
                parser=parser).image.url == "https://example.test/poster.jpg"


def test_favicon_prefers_icon_over_touch_icon(parser):
    head = '<link rel="apple-touch-icon" href="/touch.png"><link rel="shortcut icon" href="/favicon.ico">'
    assert page(head, parser=parser).favicon == "https://example.test/favicon.ico"
    assert page("", parser=parser).favicon == ""


def test_video(parser):
    head = ('<meta property="og:video" content="https://v.test/1.mp4">'
            '<meta property="og:video:type" content="video/mp4"><meta property="og:video:width" content="640">')
    assert page(head, parser=parser).video == Video("https://v.test/1.mp4", 640, 0, "video/mp4")
    assert page("", parser=parser).video is None


# --- JSON-LD ---------------------------------------------------------------------------------

def test_json_ld_graph_arrays_references_and_broken_blocks(parser):
    head = (ld("{ this is not json ]")
            + ld('[{"@type": "WebSite", "name": "Site"}, {"@type": "Thing"}]')
            + ld('{"@context": "https://schema.org", "@graph": ['
                 '{"@type": "Organization", "@id": "#org", "name": "The Org"},'
                 '{"@type": "Person", "@id": "#p", "name": "Pat Writer"},'
                 '{"@type": "Article", "headline": "Graph headline", "datePublished": "2020-02-02T02:02:02Z",'
                 ' "author": {"@id": "#p"}, "publisher": {"@id": "#org"}}]}'))
    meta = page(head, parser=parser)
    assert meta.title == "Graph headline"
    assert meta.author == "Pat Writer"
    assert meta.site_name == "The Org"
    assert meta.published_time == "2020-02-02T02:02:02Z"
    blocks = meta.structured_data["json-ld"]
    assert len(blocks) == 2 and blocks[0][0]["name"] == "Site"


def test_json_ld_with_control_characters_and_comment_wrapper(parser):
    head = ld('<!--\n{"headline": "Line\none"}\n-->')
    assert page(head, parser=parser).title == "Line one"


def test_json_ld_with_javascript_comments_and_trailing_commas_is_read(parser):
    """What extruct's loader falls back to (jstyleson): blocks hand-written like JavaScript."""
    head = ld('// <![CDATA[\n{"@type": "Article", // the story\n "headline": "Commented",'
              ' "keywords": ["a", "b",],}\n// ]]>')
    meta = page(head, parser=parser)
    assert meta.title == "Commented"
    assert meta.structured_data["json-ld"] == [
        {"@type": "Article", "headline": "Commented", "keywords": ["a", "b"]}]


def test_a_huge_broken_json_ld_block_is_skipped_without_the_lenient_walk():
    from spiderduck.extract import jsonld
    huge = '{"headline": "x", "pad": "' + "y" * jsonld.LENIENT_MAX_CHARS + '",}'
    assert jsonld.load([huge]) == []                      # strict JSON fails; too big to walk
    assert jsonld.load(['{"headline": "x", "pad": "yy",}']) == [{"headline": "x", "pad": "yy"}]


def test_structured_data_keeps_opengraph(parser):
    head = '<meta property="og:title" content="T"><meta property="og:type" content="website">'
    assert page(head, parser=parser).structured_data == {"opengraph": {"og:title": "T", "og:type": "website"}}
    assert page("", parser=parser).structured_data is None


def test_structured_data_keeps_microdata(parser):
    body = ('<div itemscope itemtype="https://schema.org/Product"><span itemprop="name">Kettle</span>'
            '<img itemprop="image" src="/k.jpg"><div itemprop="offers" itemscope '
            'itemtype="https://schema.org/Offer"><meta itemprop="price" content="19.99"></div></div>')
    data = page("", body, parser=parser).structured_data
    assert data["microdata"] == [{"type": "https://schema.org/Product", "properties": {
        "name": "Kettle", "image": "https://example.test/k.jpg",
        "offers": {"type": "https://schema.org/Offer", "properties": {"price": "19.99"}}}}]
    # The word in a script, or an attribute-less page, costs no second parse and adds nothing.
    assert page("<script>var itemscope = 1;</script>", parser=parser).structured_data is None
    # Broken nesting and an itemref to nowhere still give what can be read.
    broken = '<div itemscope itemref="nowhere"><b itemprop="name">N</div></b>'
    assert page("", broken, parser=parser).structured_data["microdata"][0]["properties"] == {"name": "N"}


@pytest.mark.parametrize("inner", [
    "Short text",                                                          # kept: the value
    "word " * 60,                                                          # too long: dropped
    "<script>" + "x" * 1000 + "</script>Short<style>p{}</style> text<!-- " + "c" * 500 + " -->",
    "<p>" + "\xa0 \u3000\n" * 300 + "a</p>" + "b" * 240 + "<div>" + "c" * 16 + "</div>",   # 257 in all
    "<p>" + "a" * 128 + "</p><p>" + "b" * 128 + "</p>",                   # 256 and a newline
    "<p>" + "a" * 128 + "</p>" + "b" * 128,
    '<div itemprop="part" itemscope>' + "nested " * 60 + "</div>",       # a nested item's text stays
])
def test_a_microdata_item_without_properties_is_its_text_up_to_the_limit(inner):
    """The value of a top-level item without properties is its text when at most
    MAX_VALUE_CHARS long; a longer one is dropped, and not even read when it is sure to be."""
    from extruct.w3cmicrodata import MicrodataExtractor
    import lxml.html
    from spiderduck.extract import microdata
    html = f'<html><body><p>intro</p><section itemscope itemtype="https://schema.org/Thing">{inner}</section></body></html>'
    expected = MicrodataExtractor().extract_items(lxml.html.document_fromstring(html.encode(), parser=microdata._PARSER), URL)
    for item in expected:
        if isinstance(item.get("value"), str) and len(item["value"]) > microdata.MAX_VALUE_CHARS:
            del item["value"]
    assert microdata.extract(html, URL) == expected
    assert microdata.extract(html, URL, parse(html.encode(), "selectolax").item_html()) == expected


def test_parsers_give_the_same_document():
    html = ('<html lang=en><head><title>T</title><meta name=a content=1><link rel=icon href=/i>'
            '<svg><title>not me</title></svg></head><body><h1>H <!-- c --> 1</h1><p>p</p>'
            '<time datetime=2020-01-01 itemprop=datePublished>x</time></body></html>')
    assert parse(html, "selectolax") == parse(html, "html5lib")


def test_unknown_parser_is_refused():
    with pytest.raises(ValueError):
        extract_page(b"<p>x</p>", URL, parser="regex", robots_token=ROBOTS_TOKEN)


def test_fold_is_the_patterns_white_space_folded_and_trimmed():
    import re
    from spiderduck.extract.document import fold
    spaces = "".join(chr(c) for c in range(0x110000) if re.fullmatch(r"\s", chr(c)))
    for text in (spaces, f"{spaces}a{spaces}b c{spaces}", "a\u200bb\ufeffc", "\x1cx\x85y\u3000z ", "", None):
        assert fold(text) == (re.sub(r"\s+", " ", text).strip() if text else "")


def test_byline_links_are_the_descendant_selectors():
    from selectolax.lexbor import LexborHTMLParser
    from spiderduck.extract.parsers import _BYLINE_SELECTOR, _byline_links
    html = ('<a id=0 href=/x>before</a><div class="Author-box"><a id=1 class=author>self</a>'
            '<section class=byline-AUTHOR><a id=2>nested</a><span><a id=3>deep</a></span></section>'
            '<a id=4>after nested</a></div><p>between <a id=5>no</a></p><a id=6 class=author-link>alone</a>'
            '<ul class=authors><li><a id=7>sibling block</a></li></ul><a class=author id=8><a id=9>in a link</a></a>'
            '<div class="byline"><a id=10>a byline, no author block</a></div><div class><a id=11>bare</a></div>')
    tree = LexborHTMLParser(html)
    ids = [node.attributes.get("id") for node in _byline_links(tree.css(_BYLINE_SELECTOR))]
    assert ids == [node.attributes.get("id") for node in tree.css("[class*=author i] a")]
    assert ids == ["1", "2", "3", "4", "7"]
