"""The page's author (`author`): who wrote it, as a byline ("A", "A and B", "A, B and C").

Sources, in order: JSON-LD author, creator, then a product's brand; the author metas
(`_AUTHOR_META`); microdata's author properties; scholarly `citation_author` tags; the text of
author links (`<a rel=author>`, `<a class="author">`, links inside a `class*=author` block: two
words or more); the bylines (`class*=byline`, `class*=author`), then one written as plain text
right after the headline that says it is one (`By X`, `Von X`); a social post's `Name (@handle)`
title; the Twitter card's creator.

Each value is cleaned by `names` before it counts:

- HTML entities are decoded, twice-escaped ones too (`Redacci&amp;oacute;n` -> Redacción);
- a JSON object or list written as a string (`{"@type":"Person","name":"X"}`) is the names in it;
- a byline's wording is not the name, in the languages it is written in: `By X`, `Written by X`,
  `Por X`, `Par X`, `von X`, `Vom X`, `Door X`, `Av X`, `di X`, `a cura di X`, `Autor: X` (a word
  that begins names too only where a name cannot: `Di Maio`, `Von Miller` stay); a link's
  (`See all posts by X`, `More from X`, `View X's profile` -> X; `View profile`, `Read more` -> none);
- a social handle after a name is not part of it (`Jane Doe @janedoe`, `Jane Doe (@janedoe)`);
- a placeholder is no name (`No Author`, `Unknown`, `admin`, `null`, `undefined`, `By` alone),
  nor a comment form's label (`Name *`, `Your name (required)`, `E-mail:`, `Nom *`);
  a newsroom's byline is one (`Staff`, `Redacción`);
- a date, a time or a number is no name (a comment's timestamp: `2020-01-13 10:05`, `3 hours ago`).

A name that is the site's (its stated name, or its domain's: `CNN` on cnn.com) is the
publisher's, not an author's: it is the author only when no source names anyone else. A JSON-LD
Person is a person even when the site bears their name (a personal site); a JSON-LD Organization
given as the author (`Deutsche Welle (www.dw.com)`) yields to a person a later source names (a
meta, a byline), though not to a social title or the Twitter card's handle. Every value of an
author meta counts, in order: two `<meta name="author">` are two authors.
"""
from __future__ import annotations

import html
import json
import re
from typing import Iterator
from urllib.parse import urlsplit

from spiderduck.core import urls
from spiderduck.extract import values
from spiderduck.extract.jsonld import node_types
from spiderduck.extract.publisher import meta_from, site_name
from spiderduck.extract.sources import Sources, meta as _meta
from spiderduck.extract.typography import typeset

AUTHOR_MAX = 128          # characters; longer "authors" are sentences, not names
_MAX_META_AUTHORS = 8     # values of one author meta read

_AUTHOR_META = ("author", "article:author", "sailthru.author", "parsely-author", "byl",
                "dc.creator", "dcterms.creator")


def author(s: Sources) -> str:
    return author_from(s)[0]


def author_from(s: Sources) -> tuple[str, str]:
    """`author` and where it was read (a provenance source: `json-ld:author`, a meta's name,
    `microdata:author`, `<a rel=author>`, `byline` for the body's byline, `<title>`), or ('', '').
    An organisation the JSON-LD names as the author (`Deutsche Welle (www.dw.com)`) yields to a
    person a later source names (the byline's: a name that `looks_like_person`, or a JSON-LD
    Person), but not to a social title's or the Twitter card's handle (`_WEAKER`): those come
    after it, as they did."""
    site = _site_keys(s)
    fallback = organisation = ("", "")
    for raw, is_person, link, source in _candidates(s):
        if organisation[0] and source in _WEAKER:
            return organisation
        found = [n for value in raw for n in names(value) if not link or " " in n]
        found = [n for i, n in enumerate(found) if n not in found[:i]]
        if is_person is None:            # a JSON-LD Organization: a person named later wins
            if found and not organisation[0]:
                organisation = (_byline(found), source)
            continue
        people = found if is_person else [n for n in found if _key(n) not in site]
        if people and organisation[0] and not is_person and not all(map(looks_like_person, people)):
            continue                     # after an organisation, only a person's name counts
        if people:
            return _byline(people), source
        if not fallback[0] and found:
            fallback = (_byline(found), source)
    return organisation if organisation[0] else fallback


# Sources after which an organisation the JSON-LD names is the author still (see author_from).
_WEAKER = frozenset({"og:title", "twitter:title", "<title>", "twitter:creator"})
_ORGANISATIONS = frozenset({"Organization", "NewsMediaOrganization", "Corporation", "NGO", "GovernmentOrganization",
                            "EducationalOrganization", "OnlineBusiness", "LocalBusiness", "NewsAgency"})


def _candidates(s: Sources) -> Iterator[tuple[list[str], bool | None, bool, str]]:
    """(raw names, whether they are JSON-LD Persons (None: all Organizations), whether they are a
    link's text, source) by source. Every value of an author meta counts, in order (two authors
    are often two `<meta name="author">`)."""
    # A product's JSON-LD names no author; its brand is who made it.
    for key in ("author", "creator", "brand"):
        yield from _ld_names(s, key)
    for key in _AUTHOR_META:
        yield s.doc.meta_all(key)[:_MAX_META_AUTHORS], False, False, key
    for value in s.doc.item_authors:
        yield [value], False, False, "microdata:author"
    # Scholarly pages name every author in its own Highwire Press `citation_author` tag.
    yield s.doc.meta_all("citation_author"), False, False, "citation_author"
    for value in s.doc.author_links:
        yield [value], False, True, "<a rel=author>"
    for value in s.doc.byline_links():
        yield [value], False, True, "byline"
    for value in _byline_names(s.doc.byline_texts()):
        yield [value], False, False, "byline"
    # A byline written as plain text under the headline (`<h1>…</h1><p>By Jane Doe</p>`): only
    # one that says so (`By`, `Von`, `Por`, …: _BY), as a subtitle there is no name.
    for value in _byline_names(tuple(text for text in s.doc.headline_texts() if _BY.match(text))):
        if looks_like_person(value):       # `Por qué …`, `By the numbers: …` are sub-headlines
            yield [value], False, False, "byline"
    # A social network's post or profile is titled by its author's name and handle:
    # `Name (@handle) on Network`, `Name (@user@instance)`.
    shared, source = meta_from(s, "og:title", "twitter:title")
    for value, source in ((shared, source), (s.doc.title, "<title>")):
        m = _SOCIAL_TITLE.match(value)
        if m:
            yield [m.group(1)], False, False, source
    yield [_handle(_meta(s, "twitter:creator"))], False, False, "twitter:creator"


def _ld_names(s: Sources, key: str) -> Iterator[tuple[list[str], bool | None, bool, str]]:
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
    yield raw, None if organisations else persons, False, "json-ld:" + key


_SOCIAL_TITLE = re.compile(r"(\S.{0,127}?)\s+\(@[\w.-]+(?:@[\w.-]+)?\)(?:$|\s+on\s|\s*[|•·:–—-])")
_PROFILE_URL = re.compile(r"^@?\s*(?:https?:)?//(?:www\.|mobile\.)?(?:twitter|x)\.com/@?(\w{1,15})/?(?:[?#].*)?$",
                          re.I)


def _handle(value: str) -> str:
    """A Twitter card's creator as a handle without its @; one written as its profile's URL
    (`@https://twitter.com/name`, a common CMS slip) is the name at that URL's end."""
    m = _PROFILE_URL.match(value)
    return m.group(1) if m else value


# What ends the name in a byline's text: a separator, a date, a place (`By Jane Doe | January 13`,
# `By Jane Doe, Reuters`, `Por Ana Díaz el 13 de enero`, `Von Anna Roth am 13.01.2020`); the
# little words in lower case only (`Marine Le Pen`).
_BYLINE_END = re.compile(r"\s*[|·•—–,;:(]\s*|\s+-\s+|\s+(?:on|updated|published|el|le|am|il|em|in)\s+(?=[\w])|\d")
_BYLINE_WORDS = 6          # words at most: "Jane Doe and John Roe" is five


def _byline_names(texts: tuple[str, ...]) -> Iterator[str]:
    """The names a byline's text states: the text up to what ends the name (`_BYLINE_END`), of
    at most `_BYLINE_WORDS` words, two or more unless it says `By`. A text that holds another byline's
    (a block around the name and its role) is skipped for that one."""
    for text in texts:
        if any(other != text and other in text for other in texts):
            continue
        explicit = _BY.match(text)
        name = _BYLINE_END.split(_BY.sub("", text), 1)[0].strip()
        words = len(name.split())
        if name and (words > 1 or explicit) and words <= _BYLINE_WORDS:
            yield name


# The little words of names (`Ursula von der Leyen`, `Ana de la Cruz`), and words that are a
# byline's or a page's, never a person's (`Updated March`, `About Us`, `Share this`).
_PARTICLES = frozenset("von van der den de da di du del della la le bin ibn al el ter ten zu af av y".split())
_NOT_NAME_WORDS = frozenset("""updated published posted share about us contact read more follow subscribe
sign login home news newsletter comments comment reply""".split())


def looks_like_person(name: str) -> bool:
    """Whether a name reads as a person's: two to `_BYLINE_WORDS` words, each capitalised or a
    name's particle, none a byline's or a page's other words, no digits (`Jane Doe`, `Ana de la
    Cruz`; not `qué el gobierno`, `the numbers`, `Updated March`)."""
    words = name.split()
    if not 2 <= len(words) <= _BYLINE_WORDS:
        return False
    for word in words:
        folded = word.casefold()
        if folded in _NOT_NAME_WORDS or any(c.isdigit() for c in word):
            return False
        if not (word[:1].isupper() or folded in _PARTICLES):
            return False
    return True


def _byline(found: list[str]) -> str:
    """Names as a byline: "A", "A and B", "A, B and C"."""
    if len(found) > 1:
        return ", ".join(found[:-1]) + " and " + found[-1]
    return found[0] if found else ""


# --- one value's names ------------------------------------------------------------------------

_URL_LIKE = re.compile(r"^(?:https?:)?//|^www\.", re.I)
# A byline's wording before the name, in the languages it is written in (issue 42): `By`, `Written
# by`, `Por`, `Par`, `Von` and `vom`, `Door`, `Av`/`Af`, `di`, `a cura di`, `scritto da`, and the
# labels `Author:`, `Autor:`, `Auteur :`. The words that begin names too are taken only where a
# name cannot begin so: `di` and `von` in lower case before two words or more (`Di Maio`, `von
# Miller`, `di Stefano` are names), a capitalised `Von` or `Av` before a capitalised word and
# another (`Von der Leyen` is a name), `da` only after `scritto`/`pubblicato`.
_BY = re.compile(
    r"^(?:(?:written|posted|published|story|reporting|escrito|publicado|écrit|publié|rédigé)\s+)?(?:by|por|par)\s+"
    r"|^(?:(?:geschrieben|verfasst|ein\s+beitrag)\s+von|vom|(?-i:von)(?=\s+\S+\s+\S)"
    r"|(?-i:Von(?=\s+[A-ZÀ-ÖØ-Þ]\S*\s+\S)))\s+"
    r"|^(?:geschreven\s+)?door\s+"
    r"|^(?:(?:skrevet|skriven|skrivet)\s+(?:av|af)|(?:av|af)(?-i:(?=\s+[A-ZÀ-ÖØ-Þ]\S*\s+\S)))\s+"
    r"|^(?:(?:scritto|pubblicato)\s+da|a\s+cura\s+di|(?-i:di)(?=\s+\S+\s+\S))\s+"
    r"|^(?:author|autor|autorin|auteur|autrice|autore|autora|verfasser|verfasserin)\s*:\s*"
    r"|^@\s*", re.I)
# A link's wording around a name: "See all posts by X", "More from X", "View X's profile".
_LINK_WORDING = re.compile(
    r"^(?:(?:see|view|read|browse|show|explore)\s+)?(?:(?:all|more)\s+)?"
    r"(?:(?:posts|articles|stories|entries|content|news|work|writing)\s+)?(?:by|from)\s+(?P<a>.+)$"
    r"|^(?:(?:see|view)\s+)?(?P<b>.+?)[’']s\s+(?:profile|posts|articles)$", re.I)
# A link's wording with no name in it.
_NO_NAME = frozenset("""view profile|view full profile|profile|author profile|read more|more|follow|
follow me|about the author|bio|contact|email|see all posts|view all posts|all posts|more posts|
more articles|more stories|posts|articles""".replace("\n", "").split("|"))
_PLACEHOLDERS = frozenset("""no author|unknown|unknown author|admin|administrator|null|none|undefined|
n/a|by|author|webmaster|root|default|user|nobody|autor|autorin|auteur|autore|autora|von|vom|door|
por|par|di|av|af""".replace("\n", "").split("|"))
# A comment form's labels, taken for a byline where the form's fields carry an author class
# (`<label class="comment-author">Name *</label>`): no name, in the languages they are written in.
_FORM_LABELS = frozenset("""name|your name|full name|name (required)|nickname|e-mail|email|your email|
email address|website|url|comment|your comment|nom|votre nom|prénom|nombre|tu nombre|nome|il tuo nome|
naam|je naam|namn|navn|vorname|nachname|dein name|ihr name|kommentar|commentaire|comentario|
commento|imię|jméno""".replace("\n", "").split("|"))
_REQUIRED_MARK = re.compile(r"\s*[*(]?\s*(?:\*|required|obligatoire|obligatorio|obbligatorio|pflichtfeld|"
                            r"erforderlich|verplicht)\s*\)?\s*:?$", re.I)
_HANDLE_AFTER = re.compile(r"(?<=\S)\s*(?:\(\s*@[\w.]{1,30}\s*\)|@[\w.]{1,30})$")
_AGO = re.compile(r"\d.*\b(?:ago|hace|il y a)\b|\bhace\s+\d|\bil y a\s+\d|\bvor\s+\d+\s+\w+$", re.I)
_TRAILING_MARKS = re.compile(r"\s*[»›→>|·•:,-]+$")


def names(value: str) -> list[str]:
    """The names in one value (see the module's docstring): none, one, or several."""
    if not value:
        return []
    text = value.strip()
    if text[:1] in ("{", "["):
        return _json_names(text)
    for _ in range(3):        # entities, twice-escaped ones too (`&amp;oacute;`)
        decoded = html.unescape(text)
        if decoded == text:
            break
        text = decoded
    name = clean(values.fold(text))
    return [name] if name else []


def _json_names(text: str) -> list[str]:
    """The names of a JSON object or list written as a string; none if it is not JSON."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    found = []
    for item in data if isinstance(data, list) else [data]:
        item = item.get("name") if isinstance(item, dict) else item
        found.extend(names(item) if isinstance(item, str) else [])
    return found


def clean(name: str) -> str:
    """One name without a byline's or a link's wording, an appended handle, or '' when it is no name."""
    if not name or _URL_LIKE.match(name) or len(name) > AUTHOR_MAX:
        return ""
    name = _TRAILING_MARKS.sub("", name)
    if name.casefold() in _NO_NAME:
        return ""
    m = _LINK_WORDING.match(name)
    if m:
        name = (m["a"] or m["b"]).strip()
    name = _HANDLE_AFTER.sub("", name)
    name = _BY.sub("", name).strip()
    if not name or name.casefold() in _PLACEHOLDERS or _is_time(name) or _is_form_label(name):
        return ""
    return typeset(name)


def _is_form_label(name: str) -> bool:
    """Whether a "name" is a form's label or placeholder (`Name *`, `Your name (required)`, `E-mail:`)."""
    return _REQUIRED_MARK.sub("", name).strip().rstrip(":").strip().casefold() in _FORM_LABELS


def _is_time(name: str) -> bool:
    """Whether a "name" is a date, a time or a number (a comment's timestamp, an id)."""
    digits = sum(c.isdigit() for c in name)
    letters = sum(c.isalpha() for c in name)
    return (digits > letters or bool(_AGO.search(name))
            or bool(values.rfc3339(name, text=True)) or bool(values.rfc3339(name)))


# --- the site's own names ---------------------------------------------------------------------

def _key(name: str) -> str:
    return re.sub(r"[\W_]+", "", name.casefold())


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
