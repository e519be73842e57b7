"""Issue 42, publication dates a page shows only in its text (src/spiderduck/extract/date_text.py,
dates.py): in a line under the headline, under a "Datum" label, split over spans, in a title
attribute, in the <title>, in a state object; month names and labels in many languages; weighed
against each other and the page's structure (the article's before a sidebar's, never a copyright,
an update, a date after the page's own modification or in the future, nor one of many a list shows).
Every page is written here; every case but the guards gave no date, or another, before issue 42's
date search (checked by running this file against the previous commit)."""
import pytest

from spiderduck.extract import extract_page
from spiderduck.extract.date_text import (DATE_SEARCH_CHARS, DATED_LOOKED, LABELLED, NEAR, OTHER, SHOWN_READ,
                                          scan, shown_date)
from spiderduck.extract.parsers import parse
from support.extraction import ROBOTS_TOKEN

NOON = "T12:00:00Z"     # a day without a time is noon UTC (values.TEXT_DATE_HOUR)
FILLER = "<p>" + "Der Text des Artikels geht weiter, ohne ein Datum zu nennen. " * 12 + "</p>"


@pytest.fixture(params=("selectolax", "html5lib"))
def parser(request):
    return request.param


def published(body: str, url: str = "https://news.test/politik/story", head: str = "",
              title: str = "Story", parser: str = "selectolax") -> str:
    html = (f"<!doctype html><html><head><meta charset=utf-8><title>{title}</title>{head}</head>"
            f"<body>{body}</body></html>")
    return extract_page(html.encode(), url, "text/html", parser=parser, robots_token=ROBOTS_TOKEN).published_time


@pytest.mark.parametrize("body, expected", [
    # a meta-info line under the headline, with a time (no zone: UTC)
    ('<h1>Neue Regeln</h1><div class="meta-info">03.02.2022 15:34 Uhr</div>' + FILLER, "2022-02-03T15:34:00Z"),
    # a date and a section, the way a portal writes it
    ('<h1>Botschaft eröffnet</h1><p>2021-10-16 | Botschaft</p>' + FILLER, "2021-10-16" + NOON),
    # a date split over spans
    ('<h1>Konzert</h1><div class="info"><span>Mai</span><span>06</span><span>2018</span></div>' + FILLER,
     "2018-05-06" + NOON),
    # the date of a definition list, under a "Datum" label, far below the headline
    ('<h1>Pressemitteilung</h1>' + FILLER * 2 + '<dl><dt>Datum</dt><dd>12.01.2017</dd></dl>', "2017-01-12" + NOON),
    # an ISO date in a title attribute, the text a relative time
    ('<h1>Story</h1>' + FILLER + '<span title="2020-09-20T14:20:02Z">vor 3 Tagen</span>', "2020-09-20T14:20:02Z"),
    # a state object in the body
    ('<h1>Story</h1>' + FILLER + '<script>window.__STATE__={"id":7,"dateModified":"2021-05-01T00:00:00Z",'
     '"datePublished":"2021-04-01T10:00:00Z"}</script>', "2021-04-01T10:00:00Z"),
])
def test_a_date_shown_only_in_the_text_is_found(body, expected, parser):
    assert published(body, parser=parser) == expected


@pytest.mark.parametrize("shown, expected", [
    ("Publié le 6 mai 2018 à 14h30", "2018-05-06"),
    ("Publicado el 6 de mayo de 2018", "2018-05-06"),
    ("Pubblicato il 6 maggio 2018", "2018-05-06"),
    ("Gepubliceerd op 6 mei 2018", "2018-05-06"),
    ("Veröffentlicht am 6. Mai 2018", "2018-05-06"),
    ("Opublikowano: 6 maja 2018", "2018-05-06"),
    ("Опубликовано 6 мая 2018", "2018-05-06"),
    ("Publicerad 6 maj 2018", "2018-05-06"),
    ("Publicado em 6 de maio de 2018", "2018-05-06"),
    ("Yayınlanma: 6 Mayıs 2018", "2018-05-06"),
    ("Megjelent: 2018. május 6.", "2018-05-06"),
    ("Publikováno 6. května 2018", "2018-05-06"),
    ("Julkaistu 6.5.2018", "2018-05-06"),
    ("Posted on Sunday, May 6th, 2018", "2018-05-06"),
])
def test_a_labelled_publication_in_many_languages_far_below_the_headline(shown, expected, parser):
    body = f"<h1>Story</h1>{FILLER * 2}<div class='footer-info'>{shown}</div>"
    assert published(body, parser=parser) == expected + NOON


def test_a_date_in_the_title_when_the_page_shows_none_else(parser):
    assert published("<h1>Bericht</h1>" + FILLER, title="Bericht vom 12.03.2021 – Verein", parser=parser) \
        == "2021-03-12" + NOON


def test_the_articles_dated_element_before_a_sidebars(parser):
    body = ('<aside class="sidebar"><span class="date">01.01.2021</span></aside>'
            '<article><h1>Story</h1><span class="date">05.03.2020</span>' + FILLER + '</article>')
    assert published(body, parser=parser) == "2020-03-05" + NOON


def test_a_publication_after_an_update_in_one_line(parser):
    body = '<h1>Story</h1><p class="dateline">Aktualisiert am 14.03.2021, veröffentlicht am 12.03.2021</p>'
    assert published(body + FILLER, parser=parser) == "2021-03-12" + NOON


@pytest.mark.parametrize("body", [
    FILLER + "<footer>Copyright 01.01.2019 Verlag GmbH</footer>",      # a copyright
    FILLER + "<p>© 31.12.2018 Beispiel AG</p>",
    FILLER + "<p>Zuletzt aktualisiert: 14.03.2021</p>",                 # an update
    FILLER + "<p>Updated on March 14, 2021</p>",
    FILLER + "<p>Das Festival findet am 12.05.2099 statt.</p>",         # the future
    # a list: many days, each as often
    FILLER + "".join(f"<li>Meldung {d}.04.2021</li>" for d in range(10, 20)),
])
def test_dates_that_are_no_publication_give_none(body, parser):
    assert published("<h1>Story</h1>" + body, parser=parser) == ""


def test_a_date_after_the_pages_own_modification_is_not_its_publication(parser):
    head = '<meta property="article:modified_time" content="2020-01-10T00:00:00Z">'
    comment = '<div class="x"><p>Kommentar vom 15.02.2020: danke!</p></div>'
    assert published("<h1>Story</h1>" + FILLER + comment, head=head, parser=parser) == ""
    assert published("<h1>Story</h1><p>05.01.2020</p>" + FILLER + comment, head=head,
                     parser=parser) == "2020-01-05" + NOON


def test_a_day_the_text_shows_most_often_stands_out(parser):
    body = ("<h1>Story</h1>" + FILLER + "<p>Am 03.04.2021 begann es.</p><p>Stand: 12.03.2021</p>"
            "<p>Bericht 12.03.2021</p>")
    assert published(body, parser=parser) == "2021-03-12" + NOON


def test_a_sites_front_page_shows_its_news_dates_none_its_own(parser):
    body = "<h1>Nachrichten</h1><p>Veröffentlicht am 12.03.2021</p>" + FILLER
    assert published(body, url="https://news.test/", parser=parser) == ""
    assert published(body, url="https://news.test/artikel", parser=parser) == "2021-03-12" + NOON


def test_the_urls_day_takes_the_texts_time_on_that_day_only(parser):
    url = "https://news.test/2021/03/12/story"
    assert published("<h1>Story</h1><p>Veröffentlicht am 12.03.2021 08:15</p>" + FILLER, url=url,
                     parser=parser) == "2021-03-12T08:15:00Z"
    assert published("<h1>Story</h1><p>Veröffentlicht am 14.03.2021 08:15</p>" + FILLER, url=url,
                     parser=parser) == "2021-03-12" + NOON


def test_the_scan_tells_each_date_by_what_stands_before_it():
    text = "Story Headline 05.01.2020 " + "x " * 300 + "Published: 06.01.2020 " + "y" * 20 + " 07.01.2020"
    assert scan(text, "Story Headline") == ((NEAR, "2020-01-05" + NOON), (LABELLED, "2020-01-06" + NOON),
                                            (OTHER, "2020-01-07" + NOON))


def test_a_hostile_text_is_read_only_so_far():
    dates = " ".join(f"{d % 28 + 1:02d}.01.2020" for d in range(200_000))
    found = scan(dates)
    assert 0 < len(found) <= 32
    assert scan("2020 " * 1_000_000) == ()
    beyond = "x" * DATE_SEARCH_CHARS + " Published 06.01.2020"
    assert scan(beyond) == ()


def test_a_year_alone_names_no_day_and_yields_to_one_that_does(parser):
    head = '<meta name="date" content="2019">'
    assert published("<h1>Story</h1><p>Veröffentlicht am 12.03.2021</p>", head=head,
                     parser=parser) == "2021-03-12" + NOON
    assert published("<h1>Story</h1>" + FILLER, head=head, parser=parser) == "2019-01-01T00:00:00Z"


def test_a_time_after_the_pages_own_modification_is_a_comments(parser):
    head = '<meta property="article:modified_time" content="2020-01-10T00:00:00Z">'
    body = ('<h1>Story</h1><p class="dateline">Veröffentlicht am 05.01.2020</p>' + FILLER +
            '<div><time datetime="2020-03-01T10:00:00Z">1. März</time> Leserkommentar</div>')
    assert published(body, head=head, parser=parser) == "2020-01-05" + NOON


def test_the_headlines_date_before_a_dated_element_elsewhere(parser):
    # a list of recent posts before the article (no class `document.place` knows), the article's
    # date written under its headline
    body = ('<div class="recent-posts"><span class="post-date">May 26, 2016</span></div>'
            '<h1>Story</h1><p>By Jane Doe / April 19, 2016 at 6:52 PM</p>' + FILLER)
    assert published(body, parser=parser) == "2016-04-19T18:52:00Z"
    # far below the headline, it is no header's
    assert published('<div class="recent-posts"><span class="post-date">May 26, 2016</span></div>'
                     '<h1>Story</h1>' + FILLER + '<p>April 19, 2016</p>', parser=parser) == "2016-05-26" + NOON


# --- the review's cases: near-misses of the labels, the patterns, the zones, the parsers ------

@pytest.mark.parametrize("body, expected", [
    ("<p>Closing date: 30 June 2021</p>" + FILLER + "<p>Posted 1 June 2021</p>", "2021-06-01" + NOON),
    (FILLER + "<p>Event date: 12.05.2021</p>", ""),
    (FILLER + "<p>Data from 12.03.2020 show a rise.</p><p>Data from 12.04.2020 show a fall.</p>", ""),
    (FILLER + "<p>The company was created on 12 March 1998.</p><p>It grew on 12 March 1999.</p>", ""),
    # a photo credit's sign is no copyright of the date after it
    ("<p>Photo: © Reuters</p><p>March 12, 2021</p>" + FILLER, "2021-03-12" + NOON),
    (FILLER + "<p>(c) AFP Published 12.03.2021</p>", "2021-03-12" + NOON),
    # a year and a month's word across elements, or a word that is no month, are no date
    ("<p>Archiv 2020</p><p>Nov 3 Beiträge</p>" + FILLER, ""),
    ("<p>Die besten Filme 2021</p><p>Mai 6 Kommentare</p>" + FILLER, ""),
    ("<p>Apple iPad 2020 Gen 8 review</p>" + FILLER, ""),
    # a range of hours is no time zone
    ("<p>Veröffentlicht am 12.03.2021 14:00-16:00</p>" + FILLER, "2021-03-12T14:00:00Z"),
    # numbers of a style sheet do not use up the years looked at
    ("<style>" + ".a{z-index:2000;max-width:1920px}" * 100 + "</style><p>Veröffentlicht am 12.03.2021</p>",
     "2021-03-12" + NOON),
])
def test_what_is_no_label_no_copyright_and_no_date(body, expected, parser):
    assert published("<h1>Story</h1>" + body, parser=parser) == expected


def test_a_time_late_in_the_evening_west_of_utc_is_on_the_urls_day(parser):
    url = "https://news.test/2021/03/12/story"
    assert published("<h1>Story</h1><p>Published March 12, 2021 at 11:30 pm EST</p>", url=url,
                     parser=parser) == "2021-03-13T04:30:00Z"


def test_a_front_pages_dated_elements_are_its_news(parser):
    assert published('<span class="date">12.03.2021</span><h1>News</h1>', url="https://news.test/",
                     parser=parser) == ""


def test_a_dated_element_matching_two_selectors_counts_once(parser):
    sidebar = "".join('<span class="publish-date">01.01.2021</span>' for _ in range(8))
    body = sidebar + '<article><h1>Story</h1><span class="publish-date">05.03.2020</span></article>'
    assert published(body, parser=parser) == "2020-03-05" + NOON


@pytest.mark.parametrize("html", [
    "<body><template><p>12.03.2021</p><span class=date>12.03.2021</span></template><p>x</p></body>",
    "<head><title>12.03.2021</title></head><frameset><frame src=a></frameset>",
    '<body><span class="publish-date">12.03.2021</span><span class="date" title="2020-01-01">x</span></body>',
])
def test_both_parsers_see_the_same_dates(html):
    docs = [parse(html, name) for name in ("selectolax", "html5lib")]
    assert docs[0].page_dates() == docs[1].page_dates()
    assert docs[0].dated_texts() == docs[1].dated_texts()
    assert docs[0].headline_dates() == docs[1].headline_dates()


def test_what_is_read_for_a_date_is_bounded(parser):
    # a <title> is read only so far
    assert shown_date("x" * SHOWN_READ + " 12.03.2021") == ""
    assert shown_date("x" * (SHOWN_READ - 20) + " 12.03.2021") == "2021-03-12" + NOON
    # elements that show a date are looked at only so far
    many = "".join('<span class="date">soon</span>' for _ in range(DATED_LOOKED - 1))
    shown = '<span class="date">12.03.2021</span>'
    assert parse(f"<body>{many}{shown}</body>", parser).dated_texts() == ("12.03.2021",)
    assert parse(f"<body>{many}<span class=date>x</span>{shown}</body>", parser).dated_texts() == ()
