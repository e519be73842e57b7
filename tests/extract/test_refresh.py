"""spiderduck.extract.refresh: the HTML Standard's shared declarative refresh steps (the cases of
web-platform-tests' attr-meta-http-equiv-refresh/parsing.html and the steps' own branches), and
the decision whether a page's refresh is a hop: soon enough, somewhere else, http(s), and a page
with no card of its own. Malformed, huge and endless values never raise."""
from __future__ import annotations

import time

import pytest

from spiderduck.core.record import META_REFRESH, REFRESH_HEADER
from spiderduck.extract.refresh import MAX_TEXT_CHARS, MAX_VALUE_CHARS, SCAN_BYTES, next_hop, parse

PAGE = "http://site.test/dir/page"


@pytest.mark.parametrize("value, expected", [
    ("0", (0, None)),
    ("5", (5, None)),
    ("  3  ", (3, None)),
    ("1; url=foo", (1, "foo")),
    ("1, url=foo", (1, "foo")),
    ("1 url=foo", (1, "foo")),
    ("1;url=foo", (1, "foo")),
    ("1,url=foo", (1, "foo")),
    ("1 ; url=foo", (1, "foo")),
    ("1 , url=foo", (1, "foo")),
    ("1;\turl=foo", (1, "foo")),
    ("1; URL=foo", (1, "foo")),
    ("1; UrL = foo", (1, "foo")),
    ("1; url= foo", (1, "foo")),
    ("1.5; url=foo", (1, "foo")),          # a fraction is read and ignored
    ("1...9.; url=foo", (1, "foo")),
    (".9; url=foo", (0, "foo")),           # no digits, a "." : delay 0
    ("1; url='foo'bar", (1, "foo")),       # up to the closing quote
    ('1; url="foo"bar', (1, "foo")),
    ("1; url='foo", (1, "foo")),           # no closing quote: the rest
    ("1; url=\"foo'bar\"", (1, "foo'bar")),
    ("1; 'foo'", (1, "foo")),              # quotes without url=
    ("1; foo", (1, "foo")),                # a URL without url=
    ("1 foo", (1, "foo")),
    ("1; url", (1, "url")),                # url without "=": the rest is the URL
    ("1; urlfoo", (1, "urlfoo")),
    ("1; urn:x", (1, "urn:x")),
    ("1; u", (1, "u")),
    ("1; url=", (1, "")),                  # an empty URL: the page itself
    ("1; url=''", (1, "")),
    ("1;", (1, None)),
    ("1; ;url=foo", (1, ";url=foo")),      # one separator only; the second is the URL's
    ("0;url=http://x.test/a;b,c", (0, "http://x.test/a;b,c")),
    ("999999999999999999999; url=/x", (10 ** 9, "/x")),
])
def test_the_shared_declarative_refresh_steps(value, expected):
    assert parse(value) == expected


@pytest.mark.parametrize("value", ["", " ", ";;;", "; url=foo", ",url=foo", "url=foo", "-1; url=foo",
                                   "+1; url=foo", "1foo", "1\u00a0; url=foo", "one; url=foo",
                                   "\u0661; url=foo",      # an Arabic-Indic one is no ASCII digit
                                   "1" * (MAX_VALUE_CHARS + 1)])
def test_values_that_are_no_refresh(value):
    assert parse(value) is None


def html(head: str = "", body: str = "") -> bytes:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>".encode()


def meta(content: str) -> str:
    return f'<meta http-equiv="refresh" content="{content}">'


def hop(body: bytes, *, header: str | None = None, content_type: str | None = "text/html",
        max_delay: float = 5.0, url: str = PAGE):
    return next_hop(url, body, content_type=content_type, header=header, max_delay=max_delay)


REDIRECTING = "<title>Redirecting…</title>"


def test_a_redirecting_page_is_a_hop_resolved_against_the_page():
    assert hop(html(REDIRECTING + meta("0; url=../other?a=1"), "Redirecting…")) == (
        META_REFRESH, "http://site.test/other?a=1")


def test_the_meta_is_found_whatever_its_case_and_wherever_it_is():
    body = html(REDIRECTING, '<META HTTP-EQUIV="REFRESH" CONTENT="2;URL=HTTP://Elsewhere.test/">')
    assert hop(body) == (META_REFRESH, "http://elsewhere.test/")


def test_a_meta_resolves_against_the_base_href_and_a_header_against_the_page():
    base = '<base href="http://cdn.test/x/">'
    assert hop(html(base + meta("0;url=y"))) == (META_REFRESH, "http://cdn.test/x/y")
    assert hop(html(base), header="0;url=y") == (REFRESH_HEADER, "http://site.test/dir/y")


def test_a_header_on_an_empty_body_or_a_bare_page_is_a_hop():
    assert hop(b"", header="0; url=/b", content_type=None) == (REFRESH_HEADER, "http://site.test/b")
    assert hop(html(REDIRECTING), header="0; url=/b") == (REFRESH_HEADER, "http://site.test/b")


def test_the_header_is_read_before_the_meta():
    assert hop(html(meta("0;url=/meta")), header="0;url=/header") == (REFRESH_HEADER, "http://site.test/header")
    assert hop(html(meta("0;url=/meta")), header="60;url=/header") is None   # the header decided


def test_a_header_on_a_body_that_is_not_html_is_not_a_hop():
    assert hop(b"\x89PNG\r\n\x1a\n....", header="0;url=/b", content_type="image/png") is None


def test_the_first_meta_that_is_a_refresh_counts_and_one_in_noscript_does_not():
    assert hop(html(meta(";;;") + meta("0;url=/second"))) == (META_REFRESH, "http://site.test/second")
    assert hop(html(meta("0;url=/first") + meta("0;url=/second"))) == (META_REFRESH, "http://site.test/first")
    assert hop(html(f"<noscript>{meta('0;url=/nojs')}</noscript>")) is None


@pytest.mark.parametrize("delay, followed", [(0, True), (5, True), (6, False), (10, False)])
def test_a_refresh_later_than_the_max_delay_is_not_a_hop(delay, followed):
    assert (hop(html(meta(f"{delay}; url=/b"))) is not None) is followed
    assert (hop(b"", header=f"{delay}; url=/b") is not None) is followed


@pytest.mark.parametrize("content", ["0", "0;url=", "0; url=page", "0; url=#top", "0; url=http://SITE.test/dir/page",
                                     "0; url=javascript:alert(1)", "0; url=data:text/html,hi",
                                     "0; url=mailto:a@b.test", "0; url=ftp://site.test/f", "0; url=http://[x",
                                     "0; url=http://", "5;url=", ";;;", "999999999999999999999; url=/x"])
def test_no_hop_to_the_page_itself_nor_to_what_is_no_http_url(content):
    assert hop(html(REDIRECTING + meta(content))) is None


def test_a_page_with_a_card_of_its_own_is_not_a_hop():
    for card in ('<meta property="og:title" content="A story">', '<meta name="twitter:title" content="A story">',
                 '<meta property="og:image" content="/i.png">'):
        assert hop(html(card + meta("0;url=/b"))) is None, card
        assert hop(html(card), header="0;url=/b") is None, card
    # a blank og: tag states nothing
    assert hop(html('<meta property="og:title" content=" ">' + meta("0;url=/b"))) is not None


def test_a_line_of_text_is_no_card_and_an_article_is():
    line = "Redirecting to http://site.test/b, click here if nothing happens." 
    assert hop(html(meta("0;url=/b"), f"<p>{line}</p><script>{'x' * 5000}</script>")) is not None
    assert hop(html(meta("0;url=/b"), "<p>" + "w" * MAX_TEXT_CHARS + "</p>")) is not None
    assert hop(html(meta("0;url=/b"), "<p>" + "w" * (MAX_TEXT_CHARS + 1) + "</p>")) is None
    article = "<article>" + "<p>The harbour wall will be rebuilt by spring, the council said.</p>" * 30
    assert hop(html(meta("0;url=/b"), article + "</article>")) is None


def test_a_page_longer_than_the_scan_is_a_page_of_its_own():
    body = html(REDIRECTING + meta("0;url=/b"), "<!--" + "x" * SCAN_BYTES + "-->")
    assert hop(body) is None
    assert hop(body, header="0;url=/b") is None


def test_no_http_equiv_no_parse():
    assert hop(html("<title>Plain</title>", "text")) is None
    assert hop(html(meta("0;url=/b")), content_type="application/json") is None


def test_disabled_at_zero_by_the_caller_still_answers_with_zero_delay():
    # The Redirect Follower does not ask at process.meta_refresh_max_delay 0; the function itself
    # reads max_delay as a bound.
    assert hop(html(meta("0;url=/b")), max_delay=0) == (META_REFRESH, "http://site.test/b")


@pytest.mark.parametrize("body, header", [
    (html(meta("0;url=" + "a" * 1_000_000)), None),                       # a 1 MB content (over the scan)
    (html(meta("0;url=/" + "a" * 30_000)), None),                         # a long one within the scan
    (html(meta("0;url=/b"), "<div>" * 20_000), None),                     # deep nesting
    (html(meta("0;url=/b"), "<p>" * 2_500), None),                        # many tags
    (b"<meta http-equiv=refresh content='0;url=/b'>" + b"\xff\xfe\x00" * 100, None),   # not UTF-8
    (b"", "0;url=" + "b" * 1_000_000),                                     # a 1 MB header
    (b"", "0" * 1_000_000),                                                # an endless delay
    (b"", "0; url='" + "'" * 10_000),
    (html(meta("0; url=\x00\x01\r\n/b")), None),
    (b"<meta http-equiv=refresh content=" + b"<" * 60_000, None),
])
def test_hostile_values_never_raise_and_stay_quick(body, header):
    started = time.perf_counter()
    hop(body, header=header, content_type=None)
    assert time.perf_counter() - started < 1.0


def test_deep_nesting_or_many_tags_is_a_page_of_its_own():
    assert hop(html(REDIRECTING + meta("0;url=/b"), "<p>" * 2_500)) is None


def test_the_cheap_test_passes_only_a_refresh_to_the_parse():
    from spiderduck.extract.refresh import MAX_MARKERS, _says_refresh
    content_type = '<meta http-equiv="Content-Type" content="text/html; charset=utf-8">'
    assert not _says_refresh(html(content_type + '<meta http-equiv="X-UA-Compatible" content="IE=edge">'))
    assert _says_refresh(html(content_type + "<META HTTP-EQUIV = 'REFRESH' CONTENT=0>"))
    assert _says_refresh(html("<meta http-equiv=Refresh content=0>"))
    # Past MAX_MARKERS other http-equivs, the parse decides: the refresh after them is found.
    crowd = content_type * (MAX_MARKERS + 4)
    assert _says_refresh(html(crowd + meta("0;url=/b")))
    assert hop(html(crowd + meta("0;url=/b"))) == (META_REFRESH, "http://site.test/b")
    assert hop(html(crowd)) is None
