"""Issue 42, authors: what follows a byline's name is not the name (a date and its wording, a role,
a degree, an agency or the site after a person's name: `Jane Doe | Reporter`, `Max Mustermann,
dpa`, `Marie Dupont, envoyée spéciale à Kiev`, `Posted on March 3, 2020 by Jane Doe`); every author
a byline lists is kept, in order, in the languages it is written in (`Von Anna Schmidt und Peter
Müller`), linked or not (`By <a>Jane Doe</a> and <a>Sadhbh O'Sullivan</a>`); and a person the
byline names is preferred to the site's name or a news agency given as the author (`tagesschau.de`,
`dpa`), which stays the author when no person is named. The near-misses are names that hold a
comma or a little word of a list (`Martin Luther King, Jr.`, `José Ortega y Gasset`, `Johnson &
Johnson`, `Editors, USA TODAY`), and those the guards mark, which passed before too. Every page is
written here; every other case failed before (checked against the previous commit's authors.py
and offers.py). The review's cases (from `in_lang` on) failed with this change's first version
(checked against it), but for the guards and near-misses marked so, which passed with it; "as
before" marks what the previous commit did too."""
import pytest

from spiderduck.extract import extract_page
from spiderduck.extract import offers as O
from spiderduck.extract.rejected import explain_page
from support.extraction import EXTRACTION, ROBOTS_TOKEN
from test_authors_in_pages import URL, author, ld, parser  # noqa: F401 -- parser: the fixture, both parsers

TAGESSCHAU = "https://www.tagesschau.de/inland/story-101.html"


def meta(value: str) -> str:
    return f'<meta name="author" content="{value}">'


# --- what follows the name --------------------------------------------------------------------

@pytest.mark.parametrize("stated, expected", [
    ("Jane Doe | Reporter", "Jane Doe"),                          # a role
    ("Jane Doe, Staff Writer", "Jane Doe"),
    ("Jane Doe - Correspondent", "Jane Doe"),
    ("Jane Doe — Senior Editor", "Jane Doe"),
    ("Marie Dupont, envoyée spéciale à Kiev", "Marie Dupont"),    # French
    ("Por Juan Pérez, corresponsal", "Juan Pérez"),               # Spanish
    ("Anna Roth, Redakteurin", "Anna Roth"),                      # German
    ("Lucia Bianchi, inviata a Kiev", "Lucia Bianchi"),           # Italian
    ("Max Mustermann, dpa", "Max Mustermann"),                    # an agency
    ("Jane Doe (Reuters)", "Jane Doe"),
    ("Jane Doe on March 3, 2020", "Jane Doe"),                    # a date and its wording
    ("Jane Doe · 5 min read", "Jane Doe"),
    ("Jane Doe Published 3 March 2020", "Jane Doe"),
    ("Jane Doe, Updated 2 hours ago", "Jane Doe"),
    ("von Birgit Posselt | 12.03.2021", "Birgit Posselt"),
    ("di Mario Rossi - 12 marzo 2021", "Mario Rossi"),            # `Di`: in the page only (below)
    ("Door Jan de Vries | 12 maart 2021", "Jan de Vries"),
    ("Posted on March 3, 2020 by Jane Doe", "Jane Doe"),          # the date before the name
    ("Posted in Politics by Jane Doe", "Jane Doe"),
    ("Publié le 3 mars 2020 par Marie Dupont", "Marie Dupont"),
    ("Veröffentlicht am 12.03.2021 von Birgit Posselt", "Birgit Posselt"),
    ("Jane Doe, PhD", "Jane Doe"),                                # a degree is dropped
])
def test_what_follows_a_bylines_name_is_not_the_name(stated, expected, parser):
    assert author(meta(stated), parser=parser) == expected
    assert author(body=f'<p class="byline">{stated}</p>', parser=parser) == expected


@pytest.mark.parametrize("stated, expected", [
    ("Posted on March 3, 2020 by Jane Doe", "Jane Doe"),
    ("Publié le 3 mars 2020 par Marie Dupont", "Marie Dupont"),
    ("Di Mario Rossi - 12 marzo 2021", "Mario Rossi"),
    ("Veröffentlicht am 12.03.2021 von Birgit Posselt", "Birgit Posselt"),
    # guards: a tail the headline's byline lost already
    ("By Jane Doe, PhD | Reporter", "Jane Doe"),
    ("By Jane Doe | Reporter", "Jane Doe"),
    ("Von Birgit Posselt | 12.03.2021", "Birgit Posselt"),
    ("Par Marie Dupont, envoyée spéciale à Kiev", "Marie Dupont"),
])
def test_a_plain_text_byline_under_the_headline_loses_its_tail(stated, expected, parser):
    assert author(body=f"<p>{stated}</p>", parser=parser) == expected


@pytest.mark.parametrize("stated, expected", [
    # guards (as before): a comma that is the name's, a value with no person's name before it
    ("Martin Luther King, Jr.", "Martin Luther King, Jr."),       # a generation is the name's
    ("Martin Luther King Jr.", "Martin Luther King Jr."),
    ("Editors, USA TODAY", "Editors, USA TODAY"),                  # no person's name before the comma
    ("Doe, Jane", "Doe, Jane"),                                    # a surname first
    ("Jane Doe, John Roe", "Jane Doe, John Roe"),                  # a meta's list, as it is written
    ("Deutsche Welle (www.dw.com)", "Deutsche Welle (www.dw.com)"),
    ("WIRED Staff", "WIRED Staff"),                                # a newsroom: no separator before its word
    ("Jewish Business News Correspondent", "Jewish Business News Correspondent"),
    ("Marine Le Pen", "Marine Le Pen"),                            # a little word, no date after it
    ("Ana Díaz el 13 de enero", "Ana Díaz"),
    # these failed before: the wording alone is no name
    ("Posted on", ""),
    ("Posted on March 3, 2020", ""),
    ("Updated 2 hours ago", ""),
    ("Published", ""),
])
def test_a_comma_or_a_date_word_in_a_value_near_misses(stated, expected, parser):
    assert author(meta(stated), parser=parser) == expected


@pytest.mark.parametrize("byline, expected", [
    # these failed before
    ('<p class="byline">Posted on</p>', ""),
    ('<span class="author">Posted on</span> <span class="date">March 3, 2020</span>', ""),
    ('<p class="byline">Martin Luther King, Jr.</p>', "Martin Luther King, Jr."),
    ('<p class="byline">By Luigi Di Maio e Mario Rossi</p>', "Luigi Di Maio and Mario Rossi"),
    # guards: a place after the name; names that begin with a byline's word
    ('<p class="byline">By Jane Doe, New York</p>', "Jane Doe"),
    ('<p class="byline">Door Jan Jansen in Amsterdam</p>', "Jan Jansen"),
    ('<p class="byline">Di Maio | 12 marzo 2021</p>', "Di Maio"),
    ('<p class="byline">Von der Leyen, dpa</p>', "Von der Leyen"),
])
def test_a_byline_in_the_page_near_misses(byline, expected, parser):
    assert author(body=byline, parser=parser) == expected


# --- every author of a byline, in order -------------------------------------------------------

@pytest.mark.parametrize("stated, expected", [
    ("Von Anna Schmidt und Peter Müller", "Anna Schmidt and Peter Müller"),     # German
    ("Par Marie Dupont et Jean Martin", "Marie Dupont and Jean Martin"),       # French
    ("Por Ana García y Luis Pérez", "Ana García and Luis Pérez"),              # Spanish
    ("di Mario Rossi e Lucia Bianchi", "Mario Rossi and Lucia Bianchi"),       # Italian
    ("Door Jan de Vries en Piet Jansen", "Jan de Vries and Piet Jansen"),      # Dutch
    ("Av Anna Svensson och Erik Berg", "Anna Svensson and Erik Berg"),         # Swedish
    ("By Jane Doe & John Roe", "Jane Doe and John Roe"),
    ("By Jane Doe, John Roe and Max Muster", "Jane Doe, John Roe and Max Muster"),
    ("By Jane Doe, John Roe, and Max Muster", "Jane Doe, John Roe and Max Muster"),
    ("By Jane Doe and John Roe, Reuters", "Jane Doe and John Roe"),
    ("Von Anna Schmidt und Peter Müller | 12.03.2021", "Anna Schmidt and Peter Müller"),
])
def test_every_author_a_byline_lists_is_kept_in_order(stated, expected, parser):
    assert author(meta(stated), parser=parser) == expected
    assert author(body=f'<p class="byline">{stated}</p>', parser=parser) == expected
    assert author(body=f"<p>{stated}</p>", parser=parser) == expected            # under the headline


@pytest.mark.parametrize("name", ["Johnson & Johnson", "José Ortega y Gasset", "Procter & Gamble", "Jane and John Doe",
                                  "Ana de la Cruz"])
def test_a_name_with_a_lists_word_is_one_name(name, parser):
    assert author(meta(name), parser=parser) == name
    assert author(body=f'<p class="byline">By {name}</p>', parser=parser) == name


@pytest.mark.parametrize("byline", [
    # guard: a byline's text, its links aside
    '<div class="byline">By <a href="/a/jane">Jane Doe</a> and <a href="/a/sadhbh">Sadhbh O\'Sullivan</a></div>',
    '<div class="author">By <a href="/a/jane">Jane Doe</a> and <a href="/a/sadhbh">Sadhbh O\'Sullivan</a></div>',
    '<div class="byline">By <a rel="author" href="/a/jane">Jane Doe</a> and '
    '<a rel="author" href="/a/sadhbh">Sadhbh O\'Sullivan</a></div>',
    '<p>By <a rel="author" href="/a/jane">Jane Doe</a> and <a rel="author" href="/a/sadhbh">Sadhbh O\'Sullivan</a></p>',
    '<p>By <span class="author">Jane Doe</span> and <span class="author">Sadhbh O\'Sullivan</span></p>',
    '<div class="authors"><span class="author">Jane Doe</span> and '
    '<span class="author">Sadhbh O\'Sullivan</span></div>',
])
def test_every_linked_author_of_a_byline_is_kept_in_order(byline, parser):
    assert author(body=byline, parser=parser) == "Jane Doe and Sadhbh O’Sullivan"


def test_author_links_elsewhere_are_not_the_bylines_list(parser):
    # two links the page's bylines do not list together: the first is the author, as before
    page = ('<p class="byline">By <a rel="author" href="/a/jane">Jane Doe</a></p><p>Text.</p>'
            '<aside><h2>More</h2><a rel="author" href="/a/john">John Roe</a></aside>')
    assert author(body=page, parser=parser) == "Jane Doe"                         # guard
    role = ('<div class="author"><span class="author-name">Jane Doe</span> '
            '<span class="author-role">Senior Reporter</span></div>')
    assert author(body=role, parser=parser) == "Jane Doe"                         # guard


# --- a person before the site or an agency ----------------------------------------------------

@pytest.mark.parametrize("given", [
    meta("dpa"), meta("AFP"), meta("Reuters"), meta("The Associated Press"), meta("AFP/dpa"),
    ld({"@type": "NewsArticle", "author": {"@type": "Person", "name": "dpa"}}),
    ld({"@type": "NewsArticle", "author": {"@type": "Person", "name": "tagesschau.de"}}),
])
def test_a_person_the_byline_names_wins_over_an_agency_or_the_site(given, parser):
    byline = '<p class="byline">Von Birgit Posselt, tagesschau.de</p>'
    assert author(given, byline, parser=parser, url=TAGESSCHAU) == "Birgit Posselt"
    assert author(given + meta("Birgit Posselt, tagesschau.de"), parser=parser, url=TAGESSCHAU) == "Birgit Posselt"


@pytest.mark.parametrize("agency", ["dpa", "AFP", "Reuters", "Associated Press"])
def test_an_agency_alone_stays_the_author(agency, parser):
    assert author(meta(agency), parser=parser) == agency                          # guards
    assert author(meta(agency) + '<meta name="twitter:creator" content="@janedoe">', parser=parser) == agency
    assert author(meta(agency), '<div class="byline">Updated March 3, 2024</div>', parser=parser) == agency
    person = ld({"@type": "NewsArticle", "author": {"@type": "Person", "name": agency}})
    assert author(person, parser=parser) == agency


def test_the_site_given_alone_stays_the_author(parser):
    assert author(meta("tagesschau.de"), parser=parser, url=TAGESSCHAU) == "tagesschau.de"      # guard
    person = ld({"@type": "NewsArticle", "author": {"@type": "Person", "name": "tagesschau.de"}})
    assert author(person, parser=parser, url=TAGESSCHAU) == "tagesschau.de"                     # guard


def test_explain_says_why_the_agency_lost():
    html = ("<!doctype html><html><head><title>Story</title><meta name=\"author\" content=\"dpa\"></head>"
            '<body><article><h1>Story</h1><p class="byline">Von Birgit Posselt</p><p>Text.</p></article></body></html>')
    page, offered = explain_page(html.encode(), TAGESSCHAU, "text/html", **EXTRACTION)
    offers = dict(offered)["author"]
    assert page.author == "Birgit Posselt"
    assert [(c.source, c.value, c.reason) for c in offers][:2] == [
        ("author", "dpa", O.ORGANISATION), ("byline", "Birgit Posselt", "")]


# --- the review's cases: a little word's language, a role's surname, an agency's box --------------

def in_lang(lang: str, head: str = "", body: str = "", parser: str = "selectolax") -> str:
    """The author of a page whose `<html lang>` is `lang` (none when '')."""
    attr = f' lang="{lang}"' if lang else ""
    html = (f"<!doctype html><html{attr}><head><meta charset=utf-8><title>Story</title>{head}</head>"
            f"<body><article><h1>Story</h1>{body}<p>Text.</p></article></body></html>")
    return extract_page(html.encode(), URL, "text/html", parser=parser, robots_token=ROBOTS_TOKEN).author


@pytest.mark.parametrize("lang, stated, expected", [
    # `en`, `a`, `i` say "in" or "at" in these languages: a place follows, not an author
    ("es", "Por Ana García en Buenos Aires", "Ana García"),
    ("fr", "Par Marie Dupont à Kiev", "Marie Dupont"),
    ("it", "Di Mario Rossi a Los Angeles", "Mario Rossi"),
    ("sv", "Av Anna Svensson i New York", "Anna Svensson"),
    ("", "Por Ana García en Buenos Aires", "Ana García"),           # the byline's own word says Spanish
    ("en", "Por Ana García en Buenos Aires", "Ana García"),         # ... over a template's lang
    ("pt", "Por Maria Silva e Santos Costa", "Maria Silva e Santos Costa"),   # a double surname
    ("ru", "Автор: Иван Петров и Анна Смирнова", "Иван Петров and Анна Смирнова"),
    # near-misses: where they say "and", they list authors
    ("nl", "Door Jan de Vries en Piet Jansen", "Jan de Vries and Piet Jansen"),
    ("cs", "Autor: Jan Novák a Petr Svoboda", "Jan Novák and Petr Svoboda"),
    ("pl", "Autor: Jan Kowalski i Anna Nowak", "Jan Kowalski and Anna Nowak"),
    ("it", "Di Mario Rossi e Lucia Bianchi", "Mario Rossi and Lucia Bianchi"),
    ("pt", "Por Ana Paula e Maria Clara", "Ana Paula and Maria Clara"),
    ("es", "Por Ana García y Luis Pérez", "Ana García and Luis Pérez"),
])
def test_a_little_word_lists_names_only_in_a_language_where_it_says_and(lang, stated, expected, parser):
    assert in_lang(lang, body=f'<p class="byline">{stated}</p>', parser=parser) == expected
    assert in_lang(lang, body=f"<p>{stated}</p>", parser=parser) == expected          # under the headline


@pytest.mark.parametrize("lang, byline, expected", [
    ("es", "Ana García en Buenos Aires", "Ana García"),              # no byline's word: the page's language
    ("sv", "Anna Svensson i New York", "Anna Svensson"),
    ("nl", "Jan de Vries en Piet Jansen", "Jan de Vries and Piet Jansen"),
    ("es", "Di Mario Rossi a Los Angeles", "Mario Rossi"),          # the byline's word over the page's
    ("", "Ana García en Buenos Aires", "Ana García en Buenos Aires"),  # no language: as it is, as before
])
def test_a_bylines_language_is_its_first_words_else_the_pages(lang, byline, expected, parser):
    assert in_lang(lang, body=f'<p class="byline">{byline}</p>', parser=parser) == expected


def test_the_pages_language_may_be_its_og_locale(parser):
    head = '<meta property="og:locale" content="es_ES">'
    assert in_lang("", head, '<p class="byline">Ana García en Buenos Aires</p>', parser=parser) == "Ana García"


@pytest.mark.parametrize("lang, value, expected", [
    # a meta keeps what follows the name unless it is known not to be one (as before)
    ("es", "Ana García en Buenos Aires", "Ana García en Buenos Aires"),
    ("it", "Mario Rossi a Los Angeles", "Mario Rossi a Los Angeles"),
    ("sv", "Anna Svensson i New York", "Anna Svensson i New York"),
    ("pt", "Maria Silva e Santos Costa", "Maria Silva e Santos Costa"),
    ("en", "Jan Novák a Petr Svoboda", "Jan Novák a Petr Svoboda"),
    ("ru", "Иван Петров и Анна Смирнова", "Иван Петров and Анна Смирнова"),    # Russian, Ukrainian lists
    ("uk", "Тарас Шевченко та Леся Українка", "Тарас Шевченко and Леся Українка"),
    ("cs", "Jan Novák a Petr Svoboda", "Jan Novák and Petr Svoboda"),          # near-misses
    ("pt", "Ana Paula Souza e João Pedro Lima", "Ana Paula Souza and João Pedro Lima"),
    # a company's name is one, whatever joins it
    ("en", "Jane Doe & Sons Ltd", "Jane Doe & Sons Ltd"),
    ("de", "Peter Müller & Anna Schmidt GmbH", "Peter Müller & Anna Schmidt GmbH"),
    ("es", "Tom Ford y Compañía Limitada", "Tom Ford y Compañía Limitada"),
    ("en", "Jane Doe & John Roe", "Jane Doe and John Roe"),                     # guard
])
def test_a_metas_little_words_in_its_language(lang, value, expected, parser):
    assert in_lang(lang, meta(value), parser=parser) == expected


@pytest.mark.parametrize("stated, expected", [
    # a surname that is a role's word: a name, not a role
    ("Jane Doe, Jennifer Senior", "Jane Doe, Jennifer Senior"),      # a meta's list, as written (as before)
    ("Jane Doe, Tom Anchor", "Jane Doe, Tom Anchor"),
    ("Jane Doe, Katy Guest and John Roe", "Jane Doe, Katy Guest and John Roe"),
    ("Jane Doe, Senior Writer, and John Roe", "Jane Doe and John Roe"),   # names after a role
    # guards: a role begins with its word, holds two, or one in lower case
    ("Jane Doe, Senior Writer", "Jane Doe"),
    ("Jane Doe, Chief Correspondent", "Jane Doe"),
    ("Jane Doe, Times Staff Writer", "Jane Doe"),
    ("Jane Doe, BBC News reporter", "Jane Doe"),
])
def test_a_surname_that_is_a_roles_word_is_a_name(stated, expected, parser):
    assert author(meta(stated), parser=parser) == expected


def test_a_list_with_a_surname_that_is_a_roles_word(parser):
    given = ld({"@type": "NewsArticle", "author": "Jane Doe, Katy Guest"})
    assert author(given, parser=parser) == "Jane Doe, Katy Guest"
    byline = '<p class="byline">By Jane Doe, Katy Guest and John Roe</p>'
    assert author(body=byline, parser=parser) == "Jane Doe, Katy Guest and John Roe"
    assert author(body='<p class="byline">By Jane Doe, Jennifer Senior</p>', parser=parser) == "Jane Doe"   # guard


@pytest.mark.parametrize("box", [
    '<div class="author-box"><span class="author-more">Weitere Nachrichten</span></div>',
    '<div class="author-box"><a class="author-more" href="/n">Weitere Nachrichten</a></div>',
    '<div class="author-box"><span class="author-more">Más Noticias</span></div>',
    '<div class="author-box"><span class="author-more">Altre Notizie</span></div>',
    '<span class="author">Birgit Posselt</span>',       # a byline's text that does not say it is one
])
def test_an_agency_yields_to_no_boxs_heading(box, parser):
    assert author(meta("dpa"), box, parser=parser) == "dpa"


@pytest.mark.parametrize("given, byline", [
    # guards: an agency yields to a byline that says so, an author link, a person's meta
    (meta("dpa"), '<p class="byline">Von Birgit Posselt</p>'),
    (meta("dpa"), '<a rel="author" href="/a/birgit">Birgit Posselt</a>'),
    (meta("dpa") + '<meta name="article:author" content="Birgit Posselt">', ""),
    # a JSON-LD Organization yields to a byline's person, as before
    (ld({"@type": "NewsArticle", "author": {"@type": "Organization", "name": "Deutsche Welle"}}),
     '<span class="author">Birgit Posselt</span>'),
])
def test_an_agency_yields_to_a_stated_person(given, byline, parser):
    assert author(given, byline, parser=parser) == "Birgit Posselt"


def test_an_organisation_yields_to_no_boxs_heading(parser):
    given = ld({"@type": "NewsArticle", "author": {"@type": "Organization", "name": "Deutsche Welle"}})
    box = '<div class="author-box"><span class="author-more">Weitere Nachrichten</span></div>'
    assert author(given, box, parser=parser) == "Deutsche Welle"


def test_explain_says_why_the_boxs_heading_lost():
    html = ('<!doctype html><html lang="de"><head><title>Story</title><meta name="author" content="dpa"></head>'
            '<body><article><h1>Story</h1><div class="author-box"><span class="author-more">Weitere Nachrichten'
            '</span></div><p>Text.</p></article></body></html>')
    page, offered = explain_page(html.encode(), TAGESSCHAU, "text/html", **EXTRACTION)
    offers = [(c.source, c.value, c.reason) for c in dict(offered)["author"]]
    assert page.author == "dpa"
    assert ("author", "dpa", "") in offers and ("byline", "Weitere Nachrichten", O.NOT_A_PERSON) in offers


@pytest.mark.parametrize("value, expected", [
    ("Jan van den Berg op 12 maart 2021", "Jan van den Berg"),      # `den` is a particle here
    ("Omar el Akkad on 3 March 2021", "Omar el Akkad"),
    ("Jean le Carré, le 3 mars 2021", "Jean le Carré"),              # guards: the little word of a date
    ("Ana Díaz el 13 de enero", "Ana Díaz"),
    ("Jane Doe on Tuesday 3 March", "Jane Doe"),
    ("von Anna Roth am 13.01.2020", "Anna Roth"),
    # a capitalised `Di` in a meta is a name's (as before)
    ("Di Maio Luigi", "Di Maio Luigi"),
    ("Di Jian Ming", "Di Jian Ming"),
    # names after an agency are kept
    ("Jane Doe, AP, John Roe", "Jane Doe, AP, John Roe"),            # as written (as before)
    ("Jane Doe, AP, John Roe and Max Muster", "Jane Doe, John Roe and Max Muster"),
    ("Max Mustermann, dpa, Berlin", "Max Mustermann"),              # guards
    ("Max Mustermann, dpa", "Max Mustermann"),
])
def test_a_metas_name_near_misses(value, expected, parser):
    assert author(meta(value), parser=parser) == expected


def test_a_capitalised_di_is_a_bylines_word_only_in_the_page(parser):
    person = ld({"@type": "NewsArticle", "author": {"@type": "Person", "name": "Di Jian Ming"}})
    assert author(person, parser=parser) == "Di Jian Ming"
    assert author(body='<p class="byline">Di Mario Rossi</p>', parser=parser) == "Mario Rossi"         # guards
    assert author(body='<p class="byline">Di Mario Rossi e Lucia Bianchi</p>', parser=parser) == \
        "Mario Rossi and Lucia Bianchi"


@pytest.mark.parametrize("name", ["محمد علي", "דנה כהן", "山田 太郎", "Иван Петров"])     # guard: the last
def test_a_name_in_a_script_without_capitals_is_a_persons(name, parser):
    assert author(body=f"<p>By {name}</p>", parser=parser) == name                     # under the headline
    assert author(meta("Reuters"), f'<p class="byline">By {name}</p>', parser=parser) == name


@pytest.mark.parametrize("stated, expected", [
    ("By Omar el Akkad", "Omar el Akkad"),              # a name's particle, not a date's little word
    ("By Jean le Carré", "Jean le Carré"),
    ("Por Ana Díaz el 13 de enero", "Ana Díaz"),         # guards
    ("Par Marie Dupont le 3 mars", "Marie Dupont"),
])
def test_a_particle_in_a_bylines_text_is_the_names(stated, expected, parser):
    assert author(body=f'<p class="byline">{stated}</p>', parser=parser) == expected
    assert author(body=f"<p>{stated}</p>", parser=parser) == expected


def test_a_quotations_attribution_is_no_byline(parser):
    # `—Name of Company`: a testimonial's attribution in a class that says byline (a corpus page's)
    body = ('<div class="loading-quote"><p class="loading-quote__quote">It worked.</p>'
            '<p class="loading-quote__byline">—Dawson Whitfield of Logojoy ($70K/mo)</p></div>')
    assert author(body=body, parser=parser) == ""
    assert author(body=body.replace("—", "By ").replace(" of Logojoy", ""), parser=parser) == "Dawson Whitfield"
