"""The hard cases of issue 4, through the whole Post Processor (`extract_page`), for both parsers:
missing <head>, several og:image, protocol-relative and data: URLs, entity-encoded titles,
charset only in <meta>, a <meta charset> that lies, JSON-LD @graph and arrays, bylines, and a
10 MB page (bounded work)."""
import pytest

from common.record import Image
from scheduler.extraction import extract_page
from scheduler.extraction.page import MAX_HTML_BYTES

URL = "https://example.test/news/story.html"


@pytest.fixture(params=("selectolax", "html5lib"))
def parser(request):
    return request.param


def ld(obj: str) -> str:
    return f'<script type="application/ld+json">{obj}</script>'


def test_missing_head_html_and_body_tags(parser):
    html = (b'<meta property="og:title" content="No head"><link rel="canonical" href="/c">'
            b'<meta name="author" content="Ann Author"><p>First paragraph.</p>')
    meta = extract_page(html, URL, parser=parser)
    assert (meta.title, meta.description, meta.canonical_url, meta.author) == (
        "No head", "First paragraph.", "https://example.test/c", "Ann Author")


def test_several_og_images_first_usable_one_wins(parser):
    html = (b'<meta property="og:image" content="data:image/png;base64,AAAA">'
            b'<meta property="og:image" content="//cdn.test/second.jpg">'
            b'<meta property="og:image:width" content="800">'
            b'<meta property="og:image" content="https://cdn.test/third.jpg">')
    assert extract_page(html, URL, parser=parser).image == Image("https://cdn.test/second.jpg", 800)


def test_data_and_protocol_relative_urls_in_body_fallbacks(parser):
    body = (b'<body><img src="data:image/gif;base64,R0lGOD"><img src="//cdn.test/body.png">'
            b'<link rel="icon" href="//cdn.test/fav.ico">')
    meta = extract_page(body, "http://example.test/", parser=parser)
    assert meta.image.url == "http://cdn.test/body.png"
    assert meta.favicon == "http://cdn.test/fav.ico"


def test_entity_encoded_meta_title_and_description(parser):
    html = (b'<meta property="og:title" content="Tom &amp; Jerry&#8217;s &#x201C;Caf&eacute;&#x201D;">'
            b'<meta name="description" content="5 &lt; 6 &amp;&amp; 7 &gt; 6">')
    meta = extract_page(html, URL, parser=parser)
    assert meta.title == "Tom & Jerry\u2019s \u201cCaf\u00e9\u201d"
    assert meta.description == "5 < 6 && 7 > 6"


def test_charset_only_in_meta(parser):
    html = '<meta charset="windows-1251"><title>Привет, мир</title>'.encode("cp1251")
    meta = extract_page(html, URL, None, parser=parser)
    assert (meta.title, meta.charset) == ("Привет, мир", "windows-1251")
    http_equiv = ('<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
                  '<title>日本語</title>').encode("cp932")
    meta = extract_page(http_equiv, URL, None, parser=parser)
    assert (meta.title, meta.charset) == ("日本語", "shift_jis")


def test_meta_charset_that_lies(parser):
    # Says windows-1252, is UTF-8: the bytes win.
    html = '<meta charset="iso-8859-1"><title>Crème brûlée</title>'.encode("utf-8")
    meta = extract_page(html, URL, None, parser=parser)
    assert (meta.title, meta.charset) == ("Crème brûlée", "utf-8")
    # Says windows-1251, is UTF-8, and the HTTP header says UTF-8: the header wins.
    html = '<meta charset="windows-1251"><title>Привет</title>'.encode("utf-8")
    meta = extract_page(html, URL, "text/html; charset=utf-8", parser=parser)
    assert (meta.title, meta.charset) == ("Привет", "utf-8")
    # Says UTF-8, is windows-1252: decoded as declared, bad bytes become U+FFFD, never a failure.
    html = '<meta charset="utf-8"><title>Café</title>'.encode("cp1252")
    meta = extract_page(html, URL, None, parser=parser)
    assert (meta.title, meta.charset) == ("Caf\ufffd", "utf-8")


def test_json_ld_graph_arrays_and_id_references(parser):
    html = (ld('[{"@context": "https://schema.org", "@graph": ['
               '{"@type": ["NewsArticle", "Article"], "headline": "Arrays",'
               ' "author": [{"@id": "#ann"}, {"@type": "Person", "name": "Bob"}, {"@id": "#ann"}],'
               ' "publisher": {"@id": "#org"}, "image": ["/1.jpg", "/2.jpg"]},'
               '{"@type": "Person", "@id": "#ann", "name": "Ann"},'
               '{"@type": "Organization", "@id": "#org", "name": "Org"}]}]')).encode()
    meta = extract_page(html, URL, parser=parser)
    assert (meta.title, meta.author, meta.site_name, meta.image.url) == (
        "Arrays", "Ann and Bob", "Org", "https://example.test/1.jpg")


def test_author_urls_are_not_names(parser):
    html = (b'<meta property="article:author" content="https://www.facebook.com/someone">'
            b'<meta name="author" content="//example.test/people/x">' + ld(
                '{"author": "https://example.test/people/x"}').encode()
            + b'<div class="author-box"><a href="/people/x">Carol Writer</a></div>')
    assert extract_page(html, URL, parser=parser).author == "Carol Writer"


def test_byline_block_link_is_a_last_resort(parser):
    box = b'<div class="post-author"><span><a href="/p">Dana Scully</a></span></div>'
    assert extract_page(box, URL, parser=parser).author == "Dana Scully"
    assert extract_page(b'<meta name="author" content="Fox Mulder">' + box, URL,
                        parser=parser).author == "Fox Mulder"
    one_word = b'<div class="author"><a href="/p">Profile</a></div>'
    assert extract_page(one_word, URL, parser=parser).author == ""


def test_ten_megabyte_page_is_read_up_to_the_cap_only():
    head = (b'<!doctype html><html><head><meta charset="utf-8"><title>Huge</title>'
            b'<meta property="og:image" content="/top.jpg"></head><body>')
    filler = b"<p>" + b"x" * 1000 + b"</p>\n"
    padding = filler * (10 * 1024 * 1024 // len(filler) + 1)
    late = b'<meta property="og:description" content="beyond the cap">'
    body = head + padding + late + b"</body></html>"
    assert len(body) > 10 * 1024 * 1024 and MAX_HTML_BYTES <= 4 * 1024 * 1024
    meta = extract_page(body, URL, "text/html")
    assert (meta.title, meta.image.url) == ("Huge", "https://example.test/top.jpg")
    assert meta.description == "x" * 1000   # the first paragraph, not what follows the cap
    # What lies past the cap is never seen: the page gives the record of its first bytes.
    assert meta == extract_page(body[:MAX_HTML_BYTES], URL, "text/html")
