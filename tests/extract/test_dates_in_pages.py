"""Issue 29, dates on real news pages (src/spiderduck/extract/dates.py): a day stated only in the
URL's path, a date shown as text in European digits, CJK or ISO with words around it, a shown
update that is no publication, a <time> of the article among a sidebar's, and offsets as CMSs
misprint them. Every page is written here; every case but the guards failed before issue 29
(checked by running this file against the previous commit)."""
import pytest

from spiderduck.extract import extract_page
from support.extraction import ROBOTS_TOKEN

NOON = "T12:00:00Z"     # a day without a time is noon UTC (values.TEXT_DATE_HOUR)


@pytest.fixture(params=("selectolax", "html5lib"))
def parser(request):
    return request.param


def published(body: str = "", url: str = "https://news.test/story", head: str = "", parser: str = "selectolax") -> str:
    html = (f"<!doctype html><html><head><meta charset=utf-8><title>Story</title>{head}</head>"
            f"<body><article><h1>Story</h1>{body}<p>Text.</p></article></body></html>")
    return extract_page(html.encode(), url, "text/html", parser=parser, robots_token=ROBOTS_TOKEN).published_time


@pytest.mark.parametrize("path", [
    "/2020/01/13/city-council-votes/", "/world/2020/1/13/story.html", "/news/2020-01-13-city-council-votes",
    "/city-council-votes-2020-01-13/", "/20200113/city-council-votes.html", "/a/20200113-city-council",
])
def test_a_day_stated_only_in_the_url_path_is_the_publication_day(path, parser):
    assert published(url="https://news.test" + path, parser=parser) == "2020-01-13" + NOON


@pytest.mark.parametrize("path", [
    "/2020/13/45/story",          # no such day
    "/1994/01/13/story",          # before the web's news sites
    "/2999/01/13/story",          # after next year
    "/item/120200113/story",      # digits around it: an id
    "/2020/01/story",             # a month, not a day
    "/story?date=2020-01-13",     # the query is not the path
])
def test_numbers_in_the_url_that_are_no_plausible_day_give_nothing(path, parser):
    assert published(url="https://news.test" + path, parser=parser) == ""     # guards


def test_a_stated_date_wins_over_the_urls(parser):
    head = '<meta property="article:published_time" content="2019-12-31T23:00:00Z">'
    assert published(url="https://news.test/2020/01/13/story", head=head, parser=parser) == "2019-12-31T23:00:00Z"


def test_the_time_on_the_urls_day_is_the_articles_not_the_sidebars(parser):
    body = ('<aside><time datetime="2021-06-01T08:00:00Z">Most read</time></aside>'
            '<p class="byline">By Ann <time datetime="2020-01-13T09:30:00+01:00">13 January</time></p>')
    assert published(body, url="https://news.test/2020/01/13/story", parser=parser) == "2020-01-13T08:30:00Z"


@pytest.mark.parametrize("shown, expected", [
    ('<p class="date">13.01.2020</p>', "2020-01-13" + NOON),
    ('<span class="post-date">Veröffentlicht am 13.01.2020 um 14:05</span>', "2020-01-13T14:05:00Z"),
    ('<span class="date">Publicado el 13/01/2020</span>', "2020-01-13" + NOON),       # only D/M possible
    ('<span class="date">Posted 01/13/2020</span>', "2020-01-13" + NOON),            # only M/D possible
    ('<div class="meta-date">Published 2020-01-13 10:05 +01:00</div>', "2020-01-13T09:05:00Z"),
    ('<span class="date">2020.01.13</span>', "2020-01-13" + NOON),
    ('<span class="date">2020年1月13日</span>', "2020-01-13" + NOON),
    ('<span class="date">2020년 1월 13일</span>', "2020-01-13" + NOON),
])
def test_a_date_shown_in_digits_is_read(shown, expected, parser):
    assert published(shown, parser=parser) == expected


def test_a_slashed_date_that_reads_both_ways_is_not_guessed(parser):
    assert published('<span class="date">05/06/2020</span>', parser=parser) == ""     # guard


@pytest.mark.parametrize("shown", [
    '<span class="date">13 de enero de 2020</span>', '<span class="date">13 janvier 2020</span>',
    '<span class="date">13. Januar 2020</span>', '<span class="date">13 de janeiro de 2020</span>',
    '<span class="date">13 gennaio 2020</span>', '<span class="date">January 13, 2020</span>',
])
def test_month_names_of_six_languages(shown, parser):
    assert published(shown, parser=parser) == "2020-01-13" + NOON       # guards: read before too


@pytest.mark.parametrize("update", [
    "Updated January 20, 2020", "Last updated: 20.01.2020", "Aktualisiert am 20.01.2020",
    "Actualizado el 20 de enero de 2020", "Mis à jour le 20 janvier 2020",
])
def test_a_shown_update_is_no_publication(update, parser):
    body = f'<span class="date">{update}</span><span class="date">January 13, 2020</span>'
    assert published(body, parser=parser) == "2020-01-13" + NOON
    # an update alone: the URL's day, else nothing
    assert published(f'<span class="date">{update}</span>', url="https://news.test/2020/01/13/x",
                     parser=parser) == "2020-01-13" + NOON


@pytest.mark.parametrize("content, expected", [
    ("2016-05-14T16:34+5.30", "2016-05-14T11:04:00Z"),     # India's offset, as one CMS prints it
    ("2016-05-04@15:56:14 UTC", "2016-05-04T15:56:14Z"),
    ("13.01.2020 14:05", "2020-01-13T14:05:00Z"),
])
def test_stated_dates_as_cmss_misprint_them(content, expected, parser):
    head = f'<meta itemprop="datePublished" content="{content}">'
    assert published(head=head, parser=parser) == expected


def test_the_articles_time_before_a_sidebars_or_a_comments(parser):
    sidebar = '<aside class="most-read"><time datetime="2021-06-01T08:00:00Z">1 June</time></aside>'
    nav = '<nav><time datetime="2021-06-02T08:00:00Z">Today</time></nav>'
    related = '<div class="related-posts"><time datetime="2021-06-03T08:00:00Z">3 June</time></div>'
    comment = '<li class="comment"><time datetime="2021-06-04T08:00:00Z">4 June</time></li>'
    article = '<p class="byline">By Ann Lee, <time datetime="2020-01-13T09:30:00+01:00">13 January</time></p>'
    for before in (sidebar, nav, related):
        html = (f"<!doctype html><html><head><title>Story</title></head><body>{before}"
                f"<article><h1>Story</h1>{article}<p>Text.</p><ol>{comment}</ol></article></body></html>")
        assert extract_page(html.encode(), "https://news.test/story", parser=parser,
                            robots_token=ROBOTS_TOKEN).published_time == (
            "2020-01-13T08:30:00Z")
    # a comment's time inside the article comes after a time outside both
    html = (f"<!doctype html><html><body><article><ol>{comment}</ol></article>"
            '<div class="meta"><time datetime="2020-01-13T08:30:00Z">13 January</time></div></body></html>')
    assert extract_page(html.encode(), "https://news.test/story", parser=parser,
                        robots_token=ROBOTS_TOKEN).published_time == "2020-01-13T08:30:00Z"
