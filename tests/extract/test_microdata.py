"""Microdata from just the items' HTML is the same as from the whole page."""
from __future__ import annotations

import json

import pytest

from conftest import shared_path
from spiderduck.extract import microdata
from spiderduck.extract.microdata import MAX_VALUE_CHARS
from spiderduck.extract.parsers import MAX_SPINE_PARTS, parse

PAGES = {
    "nested items and relative URLs": """<html><head><base href="http://b.test/dir/"></head><body>
        <p>intro</p><div itemscope itemtype="http://schema.org/Article" itemid="a1">
        <span itemprop="headline">Head</span><a itemprop="url" href="x.html">x</a>
        <div itemprop="author" itemscope itemtype="http://schema.org/Person">
        <span itemprop="name">Ann</span><img itemprop="image" src="/ann.png"></div></div>
        <footer><ol itemscope itemtype="http://schema.org/BreadcrumbList"><li itemprop="itemListElement">
        Home</li></ol></footer></body></html>""",
    "an item on body": """<html><body itemscope itemtype="http://schema.org/WebPage">
        <span itemprop="name">Page</span></body></html>""",
    "an item on html": """<html itemscope itemtype="http://schema.org/WebPage"><body>
        <span itemprop="name">Page</span></body></html>""",
    "an item on body with an item inside": """<html><body itemscope itemtype="http://schema.org/WebPage">
        <p>Text <b>around</b></p><div><span itemprop="name">Page</span>
        <div itemscope itemtype="http://schema.org/Product"><span itemprop="name">Thing</span></div>
        <div itemprop="mainEntity" itemscope itemtype="http://schema.org/Article">
        <h1 itemprop="headline">Head <i>line</i></h1></div></div>
        <a itemprop="url" href="page.html">link</a></body></html>""",
    "an item on html with head metas": """<html itemscope itemtype="http://schema.org/WebPage"><head>
        <meta itemprop="name" content="Named"><title>t</title></head><body><p>words</p>
        <time itemprop="datePublished" datetime="2024-01-02">Jan 2</time></body></html>""",
    "itemref": """<html><body><div itemscope itemtype="http://schema.org/Person" itemref="more">
        <span itemprop="name">Ann</span></div><p id="more"><span itemprop="jobTitle">Chief</span></p>
        </body></html>""",
    "meta and time values": """<html><body><div><div itemscope itemtype="http://schema.org/Event">
        <meta itemprop="startDate" content="2024-01-02"><time itemprop="endDate" datetime="2024-01-03">
        Jan 3</time><link itemprop="sameAs" href="http://e.test/"></div></div></body></html>""",
}


def both_ways(html: str, base: str) -> tuple[list, list, str | None]:
    doc = parse(html.encode(), "selectolax")
    return (microdata.extract(html, base, doc.item_html()), microdata.extract(html, base),
            doc.item_html())


@pytest.mark.parametrize("name", sorted(PAGES))
def test_items_alone_give_what_the_whole_page_gives(name):
    fast, whole, fragment = both_ways(PAGES[name], "http://b.test/dir/")
    assert whole and fast == whole
    if name == "itemref":
        assert fragment is None                      # only the whole page will do
    else:
        assert fragment and len(fragment) < len(PAGES[name])


@pytest.mark.parametrize("words", [1, 60, 400])
@pytest.mark.parametrize("tag", ["html", "body"])
def test_an_item_on_the_page_with_no_property_is_read_whole_unless_its_text_is_surely_too_long(tag, words):
    """Its value is its text, dropped when over MAX_VALUE_CHARS: a long page's item stands in a
    fragment (with a filler as long), a short one's is read from the whole page."""
    text = " ".join(f"word{n}" for n in range(words))
    html = (f"<html{' itemscope itemtype=http://schema.org/WebPage' if tag == 'html' else ''}><body"
            f"{' itemscope itemtype=http://schema.org/WebPage' if tag == 'body' else ''}><p>{text}</p>"
            "<div itemscope itemtype='http://schema.org/Thing'><span itemprop='name'>T</span></div></body></html>")
    fast, whole, fragment = both_ways(html, "http://b.test/")
    assert fast == whole and len(whole) == 2
    assert ("value" in whole[0]) == (len(text) <= MAX_VALUE_CHARS)
    assert (fragment is None) == (len(text.replace(" ", "")) <= 2 * MAX_VALUE_CHARS)


@pytest.mark.parametrize("html", [
    # an item on <body> inside one on <html>
    """<html itemscope itemtype="http://schema.org/A"><body itemprop="b" itemscope
       itemtype="http://schema.org/B"><span itemprop="name">n</span></body></html>""",
    # more parts than are worth picking out
    "<html><body itemscope itemtype='http://schema.org/WebPage'>"
    + "<span itemprop='keywords'>k</span>" * (MAX_SPINE_PARTS + 1) + "</body></html>",
])
def test_an_item_on_the_page_itself_is_read_whole_where_its_parts_will_not_do(html):
    fast, whole, fragment = both_ways(html, "http://b.test/")
    assert fragment is None and fast == whole


def test_the_corpus_pages_give_the_same_items_either_way():
    cases_path = shared_path("corpus", "metascraper", "cases.json")
    cases = json.loads(cases_path.read_text("utf-8"))
    shortened = 0
    for case in cases:
        body = (cases_path.parent / case["html"]).read_bytes()
        if b"itemscope" not in body:
            continue
        doc = parse(body, "selectolax")
        fragment = doc.item_html()
        assert microdata.extract(body, case["url"], fragment) == microdata.extract(body, case["url"]), case["name"]
        shortened += fragment is not None
    assert shortened >= 13
