"""Issue 29, authors on real news pages (src/spiderduck/extract/authors.py): entities left escaped,
a link's wording taken as the name, placeholders, an appended social handle, the site given as
the author, a JSON-LD author written as a JSON string, a timestamp taken as the author; and
publisher names (publisher.py) that are only a domain where the page states a name. Every page
is written here; every case but the guards failed before issue 29 (checked by running this file
against the previous commit)."""
import json

import pytest

from spiderduck.extract import extract_page
from support.extraction import ROBOTS_TOKEN

URL = "https://www.dailyplanet.test/metro/story"


@pytest.fixture(params=("selectolax", "html5lib"))
def parser(request):
    return request.param


def ld(obj) -> str:
    return f'<script type="application/ld+json">{json.dumps(obj)}</script>'


def page(head: str = "", body: str = "", parser: str = "selectolax", url: str = URL):
    html = (f"<!doctype html><html><head><meta charset=utf-8><title>Story</title>{head}</head>"
            f"<body><article><h1>Story</h1>{body}<p>Text.</p></article></body></html>")
    return extract_page(html.encode(), url, "text/html", parser=parser, robots_token=ROBOTS_TOKEN)


def author(head: str = "", body: str = "", parser: str = "selectolax", url: str = URL) -> str:
    return page(head, body, parser, url).author


@pytest.mark.parametrize("head", [
    ld({"@type": "NewsArticle", "author": {"@type": "Person", "name": "Redacci&oacute;n"}}),
    ld({"@type": "NewsArticle", "author": {"@type": "Person", "name": "Redacci&amp;oacute;n"}}),
    '<meta name="author" content="Redacci&amp;oacute;n">',            # escaped twice in the markup
    '<meta name="author" content="Redacci&amp;amp;oacute;n">',        # thrice
])
def test_entities_left_escaped_are_decoded(head, parser):
    assert author(head, parser=parser) == "Redacción"


@pytest.mark.parametrize("link, expected", [
    ('<a rel="author" href="/by/jane">See all posts by Jane Doe</a>', "Jane Doe"),
    ('<a class="author" href="/by/jane">View all posts by Jane Doe »</a>', "Jane Doe"),
    ('<a rel="author" href="/by/jane">More from Jane Doe</a>', "Jane Doe"),
    ('<a rel="author" href="/by/jane">View Jane Doe’s profile</a>', "Jane Doe"),
    ('<div class="author-box"><a href="/by/jane">View profile</a> <a href="/by/jane">Jane Doe</a></div>', "Jane Doe"),
    ('<div class="author-box"><a href="/by/jane">Read more</a></div>', ""),
])
def test_a_links_wording_is_not_the_name(link, expected, parser):
    assert author(body=link, parser=parser) == expected


@pytest.mark.parametrize("placeholder", ["No Author", "admin", "Unknown", "null", "undefined", "By"])
def test_a_placeholder_is_no_name(placeholder, parser):
    head = f'<meta name="author" content="{placeholder}">'
    assert author(head, parser=parser) == ""
    assert author(head, '<a rel="author" href="/by/jane">Jane Doe</a>', parser=parser) == "Jane Doe"


@pytest.mark.parametrize("byline", ["Staff", "Redacción", "Associated Press"])
def test_a_newsrooms_byline_is_a_name(byline, parser):
    assert author(f'<meta name="author" content="{byline}">', parser=parser) == byline      # guards


@pytest.mark.parametrize("value", ["Jane Doe @janedoe", "Jane Doe (@janedoe)", "By Jane Doe @jane.doe"])
def test_an_appended_handle_is_not_part_of_the_name(value, parser):
    assert author(f'<meta name="author" content="{value}">', parser=parser) == "Jane Doe"


def test_the_site_given_as_author_yields_to_a_person(parser):
    org = {"@type": "Organization", "name": "Daily Planet"}
    head = ld({"@type": "NewsArticle", "author": org, "publisher": org})
    assert author(head, '<a rel="author" href="/by/clark">Clark Kent</a>', parser=parser) == "Clark Kent"
    # the site's name by its domain, in a meta
    assert author('<meta name="author" content="DailyPlanet">', '<span itemprop="author">Lois Lane</span>',
                  parser=parser) == "Lois Lane"
    assert author('<meta name="author" content="dailyplanet.test">',
                  '<a rel="author" href="/by/clark">Clark Kent</a>', parser=parser) == "Clark Kent"


def test_the_site_given_as_author_is_kept_when_it_is_all_there_is(parser):
    org = {"@type": "Organization", "name": "Daily Planet"}
    assert author(ld({"@type": "NewsArticle", "author": org, "publisher": org}), parser=parser) == "Daily Planet"
    # a person whose site bears their name is still its author
    person = {"@type": "Person", "name": "Jane Doe"}
    assert author(ld({"@type": "BlogPosting", "author": person}) + '<meta property="og:site_name" content="Jane Doe">',
                  '<a rel="author" href="/x">Someone Else</a>', parser=parser) == "Jane Doe"    # guards


@pytest.mark.parametrize("value, expected", [
    ('{"@type":"Person","name":"Jane Doe"}', "Jane Doe"),
    ('[{"@type":"Person","name":"Jane Doe"},{"@type":"Person","name":"John Roe"}]', "Jane Doe and John Roe"),
    ('["Jane Doe", "John Roe"]', "Jane Doe and John Roe"),
])
def test_an_author_written_as_a_json_string_is_the_names_in_it(value, expected, parser):
    assert author(ld({"@type": "NewsArticle", "author": value}), parser=parser) == expected
    assert author(ld({"@type": "NewsArticle", "author": [value]}), parser=parser) == expected
    assert author(f"<meta name=\"author\" content='{value}'>", parser=parser) == expected


@pytest.mark.parametrize("stamp", ["2020-01-13 10:05", "13.01.2020 um 10:05", "January 13, 2020 at 10:05 am",
                                   "3 hours ago", "1578909900"])
def test_a_timestamp_is_no_author(stamp, parser):
    body = f'<span itemprop="author">{stamp}</span>'
    assert author(body=body, parser=parser) == ""
    assert author(body=body + '<a rel="author" href="/by/jane">Jane Doe</a>', parser=parser) == "Jane Doe"


def test_a_domain_is_the_site_name_only_when_no_name_is_stated(parser):
    head = '<meta property="og:site_name" content="dailyplanet.test">'
    assert page(head + '<meta name="application-name" content="Daily Planet">', parser=parser).site_name == "Daily Planet"
    assert page(head, parser=parser).site_name == "dailyplanet.test"       # guard: all there is


@pytest.mark.parametrize("byline, expected", [
    ('<p class="byline">By Jane Doe | <time datetime="2020-01-13">January 13, 2020</time></p>', "Jane Doe"),
    ('<div class="byline">By Jane Doe, Reuters</div>', "Jane Doe"),
    ('<div class="author"><span class="author-name">Jane Doe</span><span class="author-role">Senior Reporter</span></div>',
     "Jane Doe"),
    ('<div class="post-author"><i class="icon-author"></i> Jane Doe</div>', "Jane Doe"),
    ('<p class="byline">Por Ana Díaz el 13 de enero de 2020</p>', "Ana Díaz"),
    ('<p class="article-byline">By Staff</p>', "Staff"),
    ('<span class="byline">Marine Le Pen</span>', "Marine Le Pen"),
    # issue 42: the wording in its language (test_authors_languages.py)
    ('<p class="byline">von Birgit Posselt am 13.01.2020</p>', "Birgit Posselt"),
    ('<div class="author">Vom Krimiblogger</div>', "Krimiblogger"),
    ('<span class="byline">Door Jan Jansen | 13 januari 2020</span>', "Jan Jansen"),
    ('<p class="article-byline">di Mario Rossi, 13 gennaio 2020</p>', "Mario Rossi"),
    # issue 42: written as plain text under the headline, saying it is a byline (the page puts
    # the body right after its <h1>); a subtitle, a bare name or one too far down is none
    ("<p>By Jane Doe</p>", "Jane Doe"),
    ('<div class="meta"><span>Von Anna Roth</span> <time>13.01.2020</time></div>', "Anna Roth"),
    ("\nBy Jane Doe<br>", "Jane Doe"),
    ("<p>Door Jan Jansen | 13 januari 2020</p>", "Jan Jansen"),
    ("<p>A subtitle about the story</p>", ""),
    ("<p>Jane Doe</p>", ""),
    ("<p>One.</p><p>Two.</p><p>Three.</p><p>Four.</p><p>By Jane Doe</p>", ""),
])
def test_a_byline_stated_as_text_names_the_author(byline, expected, parser):
    assert author(body=byline, parser=parser) == expected


def test_an_authors_biography_is_no_byline(parser):
    bio = ('<div class="author-bio">Jane Doe is a reporter covering the city council and transit for the '
           'Daily Planet.</div>')
    assert author(body=bio, parser=parser) == ""       # guard
