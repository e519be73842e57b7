"""The page's author (`author`): who wrote it, as a byline ("A", "A and B", "A, B and C").

Sources, in order: JSON-LD author, creator, then a product's brand; the author metas
(`_AUTHOR_META`); microdata's author properties; scholarly `citation_author` tags; the text of
author links (`<a rel=author>`, `<a class="author">`, links inside a `class*=author` block: two
words or more); the bylines (`class*=byline`, `class*=author`), then one written as plain text
right after the headline that says it is one (`By X`, `Von X`, `Posted on <date> by X`); a social
post's `Name (@handle)` title; the Twitter card's creator.

Each value is read by author_names.py (`names`; a byline's text in the page by `byline_names`):

- HTML entities are decoded, twice-escaped ones too (`Redacci&amp;oacute;n` -> Redacción);
- a JSON object or list written as a string (`{"@type":"Person","name":"X"}`) is the names in it;
- a byline's wording is not the name, in the languages it is written in: `By X`, `Written by X`,
  `Por X`, `Par X`, `von X`, `Vom X`, `Door X`, `Av X`, `di X`, `a cura di X`, `Autor: X`, `Posted
  on March 3, 2020 by X`, and in a byline's text in the page `Di X Y` (a word that begins names too
  only where a name cannot: `Di Maio`, `Von Miller`, `Von der Leyen`, a meta's `Di Maio Luigi`
  stay); a link's (`See all posts by X`, `More from X`, `View X's profile` -> X; `View profile`,
  `Read more` -> none);
- nor is what follows the name: a date and its wording (`X on March 3, 2020`, `X Published 3 March
  2020`, `X, Updated 2 hours ago`, `von X | 12.03.2021`, `Di X - 12 marzo 2021`, `X · 5 min read`;
  `Jan van den Berg op 12 maart 2021` -> Jan van den Berg), a role (`X | Reporter`, `X, Staff
  Writer`, `X - Correspondent`, `Marie Dupont, envoyée spéciale à Kiev`, `Por X, corresponsal`: a
  part that begins with a role's word, holds two, or one in lower case; `Jane Doe, Jennifer Senior`
  names two), a degree (`Jane Doe, PhD` -> Jane Doe; a generation is the name's: `Martin Luther
  King, Jr.`), and after a person's name, an agency or the site (`Max Mustermann, dpa`, `Birgit
  Posselt, tagesschau.de`; `Editors, USA TODAY` stays); names after a role or an agency still count
  (`Jane Doe, Senior Writer, and John Roe`; in a meta `Jane Doe, AP, John Roe` stays as it is). In a
  meta, what follows a separator that is none of these stays (`Deutsche Welle (www.dw.com)`); in a
  byline's text in the page it is dropped (`By Jane Doe, New York`), and so is a place after a
  little word that says "in" in the byline's language (`Por Ana García en Buenos Aires`, `Di Mario
  Rossi a Los Angeles`, `Av Anna Svensson i New York`);
- every author of a list is kept, in order (`By Jane Doe and John Roe`, `Von Anna Schmidt und
  Peter Müller`, `Par X et Y`, `Por X y Y`, `Di X e Y`, `Door X en Y`, `Иван Петров и Анна
  Смирнова`, `A, B and C`): split at the little words of a list where each side is two words or
  more, the first capitalised (or of a script without capitals), the last no company's (`José
  Ortega y Gasset`, `Johnson & Johnson`, `Jane Doe & Sons Ltd` are one name). `en`, `a`, `i`, `e`
  join names only in the languages where they say "and" (`en` in Dutch, `i` in Polish, Czech or
  Catalan, `a` in Czech, Slovak or Polish, `e` in Italian or Portuguese, or where the language is
  not known), which are the byline's first word's (`Door`, `Por`, `Di`) else the page's `<html
  lang>` (else `og:locale`); `e` before a Portuguese surname does not (`Maria Silva e Santos`);
- a social handle after a name is not part of it (`Jane Doe @janedoe`, `Jane Doe (@janedoe)`);
- a placeholder is no name (`No Author`, `Unknown`, `admin`, `null`, `undefined`, `By` alone,
  `Posted on` alone), nor a comment form's label (`Name *`, `Your name (required)`, `E-mail:`,
  `Nom *`); a newsroom's byline is one (`Staff`, `Redacción`);
- a date, a time or a number is no name (a comment's timestamp: `2020-01-13 10:05`, `3 hours ago`).

Author links each name one author; where a page links two or more, a link's author listed with
others in a byline's text (`By <a>Jane Doe</a> and <a>Sadhbh O'Sullivan</a>`) is that list. A
byline block around others (`<div class="authors"><span class="author">A</span> and <span
class="author">B</span></div>`) is read when it lists two names or more, else skipped for them (a
name and its role).

A name that is the site's (its stated name, or its domain's: `CNN` on cnn.com; a JSON-LD Person
named by the site's domain, `tagesschau.de`) is the publisher's, not an author's: it is the author
only when no source names anyone else. A JSON-LD Person is a person even when the site bears their
name (a personal site); a JSON-LD Organization given as the author (`Deutsche Welle (www.dw.com)`),
or a news agency wherever it is given (`dpa`, `AFP`, `Reuters`, `The Associated Press`), yields to
a person a later source names (a meta, a byline; an agency only to a byline's text in the page that
says it is one, `Von X`, as a box's heading reads as a name: `Weitere Nachrichten`), though not to
a social title or the Twitter card's handle: an agency alone is the author. Every value of an author meta counts, in order: two
`<meta name="author">` are two authors.
"""
from __future__ import annotations

import re
from typing import Iterator
from urllib.parse import urlsplit

from spiderduck.core import urls
from spiderduck.extract import values
from spiderduck.extract.author_names import (Page, byline_names, is_agency, key as _key, looks_like_person, names,
                                             stated)
from spiderduck.extract.jsonld import node_types
from spiderduck.extract.publisher import meta_from, site_name
from spiderduck.extract.sources import Sources, meta as _meta

_MAX_META_AUTHORS = 8     # values of one author meta read

_AUTHOR_META = ("author", "article:author", "sailthru.author", "parsely-author", "byl",
                "dc.creator", "dcterms.creator")

# What a source's names are to the rule (`judged`): an author it takes (''), an organisation that
# yields to a person named later, a name that is no person's after one, the site's, or none.
PERSON, ORGANISATION, NOT_A_PERSON, SITE, NO_NAME = "", "organisation", "not a person", "site", "no name"


def author(s: Sources) -> str:
    return author_from(s)[0]


def author_from(s: Sources) -> tuple[str, str]:
    """`author` and where it was read (a provenance source: `json-ld:author`, a meta's name,
    `microdata:author`, `<a rel=author>`, `byline` for the body's byline, `<title>`), or ('', '').
    An organisation the JSON-LD names as the author (`Deutsche Welle (www.dw.com)`), or an agency,
    yields to a person a later source names (the byline's: a name that `looks_like_person`, or a
    JSON-LD Person; see `judged`), but not to a social title's or the Twitter card's handle
    (`_WEAKER`): those come after it, as they did."""
    fallback = organisation = ("", "")
    for source, found, _, verdict in judged(s):
        if organisation[0] and source in _WEAKER:
            return organisation
        if verdict == PERSON:
            return _byline(found), source
        if verdict == ORGANISATION and not organisation[0]:
            organisation = (_byline(found), source)
        elif verdict == SITE and not fallback[0]:
            fallback = (_byline(found), source)
    return organisation if organisation[0] else fallback


def judged(s: Sources) -> Iterator[tuple[str, list[str], list[str], str]]:
    """(source, names, raw values, verdict) for each source in order: the verdicts `author_from`
    weighs (and offers.py explains). An agency yields to no byline's text in the page that does
    not say it is one (`Von X`, `By X`: `stated`), as a box's heading reads as a name (`Weitere
    Nachrichten`); a JSON-LD Organization does, as it did."""
    page = Page(_site_keys(s), _lang(s))
    organisation = agency = False
    for raw, found, is_person, source, plain in _candidates(s, page):
        if found and (is_person is None or all(map(is_agency, found))):
            agency = agency or not organisation and all(map(is_agency, found))
            organisation = True
            yield source, found, raw, ORGANISATION
            continue
        people = [n for n in found if not _is_site(n, page.site, bool(is_person))]
        if len(people) > 1 and any(map(is_agency, people)) and any(map(looks_like_person, people)):
            people = [n for n in people if not is_agency(n)]    # the agency of a person named with it
        if people and organisation and not is_person and (plain and agency and not stated(raw[0])
                                                          or not all(map(looks_like_person, people))):
            yield source, people, raw, NOT_A_PERSON
        elif people:
            yield source, people, raw, PERSON
        else:
            yield source, found, raw, SITE if found else NO_NAME


def _is_site(name: str, site: frozenset[str], person: bool) -> bool:
    """Whether a name is the site's: a JSON-LD Person's only when it is the site's domain."""
    return _key(name) in site and (not person or bool(_DOMAIN.match(name)))


_DOMAIN = re.compile(r"^(?:www\.)?[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}$", re.I)
# Sources after which an organisation the JSON-LD names is the author still (see author_from).
_WEAKER = frozenset({"og:title", "twitter:title", "<title>", "twitter:creator"})
_ORGANISATIONS = frozenset({"Organization", "NewsMediaOrganization", "Corporation", "NGO", "GovernmentOrganization",
                            "EducationalOrganization", "OnlineBusiness", "LocalBusiness", "NewsAgency"})


def _candidates(s: Sources, page: Page) -> Iterator[tuple[list[str], list[str], bool | None, str, bool]]:
    """(raw values, their names, whether they are JSON-LD Persons (None: all Organizations),
    source, whether it is a byline's text in the page, not a link) by source. Every value of an
    author meta counts, in order (two authors are often two `<meta name="author">`)."""
    # A product's JSON-LD names no author; its brand is who made it.
    for key in ("author", "creator", "brand"):
        for raw, is_person, source in _ld_names(s, key):
            yield raw, _names(raw, page), is_person, source, False
    for key in _AUTHOR_META:
        raw = s.doc.meta_all(key)[:_MAX_META_AUTHORS]
        yield raw, _names(raw, page), False, key, False
    for value in s.doc.item_authors:
        yield [value], names(value, page), False, "microdata:author", False
    # Scholarly pages name every author in its own Highwire Press `citation_author` tag.
    raw = s.doc.meta_all("citation_author")
    yield raw, _names(raw, page), False, "citation_author", False
    lists: list[list[list[str]]] = []          # the bylines' lists, read once if a source needs them
    yield from _listed(s, page, _links(s.doc.author_links, page), "<a rel=author>", lists)
    yield from _listed(s, page, _links(s.doc.byline_links(), page), "byline", lists)
    yield from _listed(s, page, list(_bylines(s.doc.byline_texts(), page)), "byline", lists, plain=True)
    for text, found in _stated_bylines(s, page):
        yield [text], found, False, "byline", False
    # A social network's post or profile is titled by its author's name and handle:
    # `Name (@handle) on Network`, `Name (@user@instance)`.
    shared, source = meta_from(s, "og:title", "twitter:title")
    for value, source in ((shared, source), (s.doc.title, "<title>")):
        m = _SOCIAL_TITLE.match(value)
        if m:
            yield [m.group(1)], names(m.group(1), page), False, source, False
    creator = _handle(_meta(s, "twitter:creator"))
    yield [creator], names(creator, page), False, "twitter:creator", False


def _names(raw: list[str], page: Page) -> list[str]:
    found = [n for value in raw for n in names(value, page)]
    return [n for i, n in enumerate(found) if n not in found[:i]]


def _ld_names(s: Sources, key: str) -> Iterator[tuple[list[str], bool | None, str]]:
    """The JSON-LD persons (or organisations) under `key`: their names, and whether all are Persons
    (None when all are organisations, for an author: see author_from)."""
    value = s.graph.get(key) if s.graph else None
    if value is None:
        return
    raw, persons, organisations = [], True, key == "author"
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, dict):
            item = s.graph.resolve(item)
            kinds = node_types(item)
            persons = persons and "Person" in kinds
            organisations = organisations and bool(kinds & _ORGANISATIONS) and "Person" not in kinds
            item = item.get("name")
        else:
            persons = organisations = False
        raw.append(values.text(item))
    yield raw, None if organisations else persons, "json-ld:" + key


def _links(texts: tuple[str, ...], page: Page) -> list[tuple[str, list[str]]]:
    """Each author link's text and name (two words or more)."""
    return [(text, [n for n in names(text, page) if " " in n]) for text in texts]


def _listed(s: Sources, page: Page, read: list[tuple[str, list[str]]], source: str, lists: list[list[list[str]]],
            plain: bool = False) -> Iterator[tuple[list[str], list[str], bool | None, str, bool]]:
    """Each text's names (author links', bylines'); where they name two people or more, one listed
    with others in a byline's text is that list (`_lists`, read then only, once). `plain`: the
    texts are bylines' in the page (not links)."""
    if len({n for _, each in read for n in each}) > 1 and not lists:
        lists.append(_lists(s, page))
    for text, each in read:
        listed = next((group for group in lists[0] if set(each) & set(group)), None) if lists and each else None
        yield [text], listed or each, False, source, plain


def _lists(s: Sources, page: Page) -> list[list[str]]:
    """The bylines' texts that list two names or more, in the page and under the headline."""
    found = [each for _, each in _bylines(s.doc.byline_texts(), page)]
    found += [each for _, each in _stated_bylines(s, page)]
    return [each for each in found if len(each) > 1]


def _bylines(texts: tuple[str, ...], page: Page) -> Iterator[tuple[str, list[str]]]:
    """The names each byline's text states (`byline_names`). A text that holds another byline's is
    read when it lists two names or more (then those inside it are not), else skipped for them (a
    block around a name and its role)."""
    read = [(text, byline_names(text, page)) for text in texts]
    listing = [text for text, found in read if len(found) > 1]
    for text, found in read:
        if not found or any(other != text and text in other for other in listing):
            continue
        if len(found) == 1 and any(other != text and other in text for other in texts):
            continue
        yield text, found


def _stated_bylines(s: Sources, page: Page) -> Iterator[tuple[str, list[str]]]:
    """A byline written as plain text under the headline (`<h1>…</h1><p>By Jane Doe</p>`): only
    one that says so (`By`, `Von`, `Por`, …: `stated`), as a subtitle there is no name, and only
    persons' names (`Por qué …`, `By the numbers: …` are sub-headlines)."""
    for text in s.doc.headline_texts():
        if stated(text):
            found = byline_names(text, page)
            if found and all(map(looks_like_person, found)):
                yield text, found


_SOCIAL_TITLE = re.compile(r"(\S.{0,127}?)\s+\(@[\w.-]+(?:@[\w.-]+)?\)(?:$|\s+on\s|\s*[|•·:–—-])")
_PROFILE_URL = re.compile(r"^@?\s*(?:https?:)?//(?:www\.|mobile\.)?(?:twitter|x)\.com/@?(\w{1,15})/?(?:[?#].*)?$",
                          re.I)


def _handle(value: str) -> str:
    """A Twitter card's creator as a handle without its @; one written as its profile's URL
    (`@https://twitter.com/name`, a common CMS slip) is the name at that URL's end."""
    m = _PROFILE_URL.match(value)
    return m.group(1) if m else value


def _byline(found: list[str]) -> str:
    """Names as a byline: "A", "A and B", "A, B and C"."""
    if len(found) > 1:
        return ", ".join(found[:-1]) + " and " + found[-1]
    return found[0] if found else ""


# --- the site's own names ---------------------------------------------------------------------

def _lang(s: Sources) -> str:
    """The page's language as its `<html lang>` states it, else its `og:locale` (`es`, `pt`), or ''."""
    primary = (s.doc.lang or s.doc.meta("og:locale")).replace("_", "-").partition("-")[0].strip().lower()
    return primary if 2 <= len(primary) <= 3 and primary.isalpha() else ""


def _site_keys(s: Sources) -> frozenset[str]:
    """The site's stated name and its domain's (`nytimes`, `nytimes.com`), as compared."""
    keys = {_key(site_name(s)), _key(_meta(s, "og:site_name"))}
    try:
        domain = urls.registrable_domain(urlsplit(s.url).hostname or "")
    except (urls.InvalidUrl, ValueError):
        domain = ""
    if domain:
        keys |= {_key(domain), _key(domain.split(".")[0])}
    return frozenset(keys - {""})
