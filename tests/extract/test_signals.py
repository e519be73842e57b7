"""What a publisher tells previewers (spiderduck.extract.signals), read from hand-written pages."""
from __future__ import annotations

import pytest

from spiderduck.extract import extract_page, signals
from spiderduck.extract.signals import header_directives, withheld
from support.extraction import EXTRACTION, PARSER

URL = "http://pub.test/a"


def page(head: str):
    return extract_page(f"<!doctype html><html><head>{head}</head><body><p>x</p></body></html>".encode(), URL,
                        **EXTRACTION)


def test_robots_metas_are_read_lower_case_once_each_those_honoured_first():
    p = page('<meta name="ROBOTS" content="NoIndex,  NOARCHIVE"><meta name="robots" content="noarchive, '
             'max-image-preview : None"><meta name="spiderduck" content="nosnippet">'
             '<meta name="googlebot" content="nofollow">')
    assert p.robots_directives == ("noarchive", "max-image-preview:none", "nosnippet", "noindex")


def test_the_meta_for_our_token_follows_the_configured_user_agent():
    body = b'<meta name="robots" content="noindex"><meta name="quackbot" content="noarchive">'
    quackbot = extract_page(body, URL, parser=PARSER, robots_token="quackbot")
    assert quackbot.robots_directives == ("noarchive", "noindex")
    assert extract_page(body, URL, **EXTRACTION).robots_directives == ("noindex",)


@pytest.mark.parametrize("headers, expected", [
    (["noindex, nofollow"], ("noindex", "nofollow")),
    (["spiderduck: noarchive"], ("noarchive",)),
    (["googlebot: noarchive"], ()),                                  # another crawler's
    (["googlebot: nofollow, noarchive", "nosnippet"], ("nosnippet",)),  # a scope holds to the line's end
    (["otherbot: noindex, spiderduck: nosnippet, noarchive"], ("nosnippet", "noarchive")),
    (["max-snippet: 0, max-image-preview:none"], ("max-snippet:0", "max-image-preview:none")),
    (["unavailable_after: 25 Jun 2030 15:00:00 PST"], ("unavailable_after:25 jun 2030 15:00:00 pst",)),
    (["unavailable_after: Friday, 25-Jun-2030 15:00:00 GMT, noindex"],       # RFC 850: a comma inside
     ("unavailable_after:friday, 25-jun-2030 15:00:00 gmt", "noindex")),
    (["SpiderDuck: NoArchive"], ("noarchive",)),
    ([""], ()),
    ([", , ,"], ()),
])
def test_x_robots_tag_general_and_scoped_to_us(headers, expected):
    assert header_directives(headers, "spiderduck") == expected


def test_many_directives_never_push_out_one_we_honour():
    junk = ", ".join(f"x{i}" for i in range(200))
    p = page(f'<meta name="robots" content="{junk}"><meta name="spiderduck" content="noarchive">')
    assert p.robots_directives[0] == "noarchive" and len(p.robots_directives) == signals.MAX_DIRECTIVES
    assert signals.merged(p.robots_directives, header_directives(["nosnippet"], "spiderduck"))[:2] == (
        "noarchive", "nosnippet")


def test_hostile_directive_lists_are_bounded():
    huge = ", ".join(f"d{i}" for i in range(100_000))
    assert len(header_directives([huge], "spiderduck")) <= signals.MAX_DIRECTIVES
    assert header_directives(["x" * 1_000_000], "spiderduck") == ()     # too long to be a directive
    p = page(f'<meta name="robots" content="{huge}">')
    assert len(p.robots_directives) == signals.MAX_DIRECTIVES


@pytest.mark.parametrize("directives, expected", [
    (("nosnippet",), {"description": "", "structured_data": None}),
    (("max-snippet:0",), {"description": "", "structured_data": None}),
    (("max-snippet:20",), {}),
    (("max-image-preview:none",), {"image": None, "images": (), "structured_data": None}),
    (("max-image-preview:large", "noarchive"), {}),
])
def test_withheld_fields(directives, expected):
    assert withheld(directives) == expected


@pytest.mark.parametrize("head, expected", [
    ('<meta name="rating" content="adult">', True),
    ('<meta name="RATING" content="RTA-5042-1996-1400-1577-RTA">', True),
    ('<meta name="rating" content="mature">', True),
    ('<meta property="og:restrictions:age" content="18+">', True),
    ('<meta property="og:restrictions:age" content="21">', True),
    ('<meta property="og:restrictions:age" content="13+">', False),
    ('<meta name="rating" content="general">', False),
    ('<script type="application/ld+json">{"@type": "Movie", "name": "M", "isFamilyFriendly": false}</script>',
     True),
    ('<script type="application/ld+json">{"@type": "Movie", "name": "M", "isFamilyFriendly": true}</script>',
     False),
    ('<meta name="description" content="an article about adult education">', False),
])
def test_sensitive_pages_declare_it(head, expected):
    assert page(head).sensitive is expected


@pytest.mark.parametrize("content, expected", [
    ("@alice@social.example", "@alice@social.example"),
    ("alice@Social.Example", "@alice@social.example"),
    ("  @bob_1@m.example.org ", "@bob_1@m.example.org"),
    ("@alice", ""),
    ("https://social.example/@alice", ""),
    ("@a@b@c.example", ""),
    ("<script>@x@y.example", ""),
    ("@" + "a" * 10_000 + "@x.example", ""),
])
def test_fediverse_creator(content, expected):
    assert page(f'<meta name="fediverse:creator" content="{content}">').fediverse_creator == expected


def test_the_first_well_formed_fediverse_creator_wins():
    p = page('<meta name="fediverse:creator" content="nobody"><meta name="fediverse:creator" '
             'content="@carol@fedi.example"><meta name="fediverse:creator" content="@dave@fedi.example">')
    assert p.fediverse_creator == "@carol@fedi.example"
