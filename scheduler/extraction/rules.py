"""The extraction rules: for each field, its sources in order of precedence.

Each field is a function of a `Sources` (the parsed page) returning a clean value,
or the empty value when no source has one. The order is the policy; the
cleaning is in `values`. In general:

- what a page shows when shared (title, description, image, canonical URL) comes
  first from its sharing metadata (OpenGraph, then Twitter cards), then plain HTML;
- facts about the work (author, publisher, dates) come first from JSON-LD, which
  is structured, then from meta tags;
- Dublin Core and guesses from the body (first <h1>, <p>, <img>, author links) come last.

The site's name is `publisher.site_name`; the image, favicon, video and players are in `media`.
"""
from __future__ import annotations

import re
from typing import Any, Iterator
from urllib.parse import urlsplit

from common import urls
from scheduler.extraction import values
from scheduler.extraction.typography import typeset
from scheduler.extraction.publisher import TITLE_SEPARATOR, site_name, stated_headline
from scheduler.extraction.sources import Sources, ld as _ld, meta as _meta

AUTHOR_MAX = 128          # characters; longer "authors" are sentences, not names

_BY = re.compile(r"^\s*by\s+|^\s*@\s*", re.I)
_URL_LIKE = re.compile(r"^(?:https?:)?//|^www\.", re.I)


# --- text fields ------------------------------------------------------------------------------

def title(s: Sources) -> str:
    shared = _meta(s, "og:title", "twitter:title")
    if shared or not s.doc.title:
        return typeset(shared or _ld(s, "headline") or _meta(s, "dc.title", "dcterms.title") or s.doc.h1)
    # A <title> that adds the site's name, which the page states elsewhere, to the page's own
    # title (`Page title | Site`, `Site - Page title`) is the page's title without it.
    # So is one that adds anything to the headline its structured data states.
    text, site, headline = s.doc.title, site_name(s, from_title=False), stated_headline(s)
    for sep in TITLE_SEPARATOR.finditer(text) if site or headline else ():
        before, after = text[:sep.start()], text[sep.end():]
        if before and (after == site or before == headline):
            return typeset(before)
        if after and (before == site or after == headline):
            return typeset(after)
    return typeset(text)


def description(s: Sources) -> str:
    text = (_meta(s, "og:description", "twitter:description", "description")
            or _ld(s, "description") or _meta(s, "dc.description", "dcterms.description")
            or s.doc.paragraph)
    return typeset(text)


_AUTHOR_META = ("author", "article:author", "sailthru.author", "parsely-author", "byl",
                "dc.creator", "dcterms.creator")


def author(s: Sources) -> str:
    # A product's JSON-LD names no author; its brand is who made it.
    for value in (_ld_names(s, "author"), _ld_names(s, "creator"), _ld_names(s, "brand"),
                  *(_meta(s, key) for key in _AUTHOR_META), *s.doc.item_authors):
        name = _author_name(value)
        if name:
            return name
    # Scholarly pages name every author in its own Highwire Press `citation_author` tag.
    name = _author_name(_byline([values.fold(v) for v in s.doc.meta_all("citation_author")]))
    if name:
        return name
    for links in (s.doc.author_links, s.doc.byline_links()):
        for value in links:   # a link's text is a name only if it has two words or more
            name = _author_name(value)
            if " " in name:
                return name
    # A social network's post or profile is titled by its author's name and handle:
    # `Name (@handle) on Network`, `Name (@user@instance)`.
    for value in (_meta(s, "og:title", "twitter:title"), s.doc.title):
        m = _SOCIAL_TITLE.match(value)
        if m and _author_name(m.group(1)):
            return _author_name(m.group(1))
    return _handle(_meta(s, "twitter:creator"))


_SOCIAL_TITLE = re.compile(r"(\S.{0,127}?)\s+\(@[\w.-]+(?:@[\w.-]+)?\)(?:$|\s+on\s|\s*[|•·:–—-])")
_PROFILE_URL = re.compile(r"^@?\s*(?:https?:)?//(?:www\.|mobile\.)?(?:twitter|x)\.com/@?(\w{1,15})/?(?:[?#].*)?$",
                          re.I)


def _handle(value: str) -> str:
    """A Twitter card's creator as a handle without its @; one written as its profile's URL
    (`@https://twitter.com/name`, a common CMS slip) is the name at that URL's end."""
    m = _PROFILE_URL.match(value)
    return m.group(1) if m else _author_name(value)


def _byline(names: list[str]) -> str:
    """Names as a byline: "A", "A and B", "A, B and C" (each once, in order)."""
    names = [n for i, n in enumerate(names) if n and n not in names[:i]]
    if len(names) > 1:
        return ", ".join(names[:-1]) + " and " + names[-1]
    return names[0] if names else ""


def _ld_names(s: Sources, key: str) -> str:
    """The JSON-LD persons (or organisations) under `key`, as a byline: "A", "A and B", "A, B and C"."""
    value = s.graph.get(key) if s.graph else None
    names = []
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, dict):
            item = s.graph.resolve(item).get("name")
        names.append(values.text(item))
    return _byline(names)


def _author_name(value: str) -> str:
    if not value or _URL_LIKE.match(value) or len(value) > AUTHOR_MAX:
        return ""
    return typeset(values.fold(_BY.sub("", value)))


def lang(s: Sources) -> str:
    for value in (s.doc.lang, s.doc.meta("og:locale"), s.doc.meta("inlanguage"),
                  s.doc.meta("content-language"), _ld(s, "inLanguage"),
                  s.doc.meta("dc.language"), s.doc.meta("dcterms.language")):
        tag = values.language(value)
        if tag:
            return tag
    return ""


def type_(s: Sources) -> str:
    return _meta(s, "og:type")


# --- dates ------------------------------------------------------------------------------------

# A record states two dates apart: `published_time`, when the page was first published (what a
# preview shows), and `modified_time`, when it says it was last modified.

_PUBLISHED_META = ("article:published_time", "og:published_time", "og:article:published_time",
                   "published_time", "datepublished", "dc.date.issued", "dcterms.issued",
                   "dc.date", "dcterms.date", "dcterms.created", "date", "pubdate",
                   "publish-date", "publish_date", "article:published", "parsely-pub-date",
                   "sailthru.date",
                   # Highwire Press tags, which scholarly pages state for Google Scholar
                   "citation_publication_date", "citation_date", "citation_online_date")
_MODIFIED_META = ("article:modified_time", "og:updated_time", "datemodified", "dcterms.modified",
                  "last-modified")


def _stated_dates(s: Sources, graph_key: str, meta_keys: tuple[str, ...], modified: bool) -> Iterator[Any]:
    """Dates a page states of one kind: JSON-LD's, the metas', then microdata's."""
    if s.graph:
        yield s.graph.get(graph_key)
    for key in meta_keys:
        yield s.doc.meta(key)
    for m in s.doc.item_dates:
        if ("modified" in m.key) == modified:
            yield m.content


def _published_dates(s: Sources) -> Iterator[Any]:
    yield from _stated_dates(s, "datePublished", _PUBLISHED_META, modified=False)
    if s.graph:   # a video (VideoObject) states when it was uploaded, its publication
        yield s.graph.get("uploadDate")
    yield from s.doc.times
    if s.graph:
        yield s.graph.get("dateCreated")


def _modified_dates(s: Sources) -> Iterator[Any]:
    return _stated_dates(s, "dateModified", _MODIFIED_META, modified=True)


def _first_date(dates: Iterator[Any]) -> str:
    for value in dates:
        date = values.rfc3339(value) if value else ""
        if date:
            return date
    return ""


def published_time(s: Sources) -> str:
    """When the page was first published, RFC 3339 in UTC: a stated publication date, else a
    date shown as text (`<p class="date">`); never its modification date."""
    date = _first_date(_published_dates(s))
    if date:
        return date
    for value in s.doc.dated_texts():
        date = values.rfc3339(value, text=True)
        if date:
            return date
    return ""


def modified_time(s: Sources) -> str:
    """When the page says it was last modified, RFC 3339 in UTC, or ''."""
    return _first_date(_modified_dates(s))


# --- URLs -------------------------------------------------------------------------------------

def canonical_url(s: Sources) -> str:
    """og:url first, as for every shared field: it is the URL the page asks to be shared as,
    while <link rel=canonical> is often left pointing at a syndication source or an old scheme.
    The first that `_plausible_canonical` keeps."""
    for value in (s.doc.meta("og:url"), *(link.href for link in s.doc.links if "canonical" in link.rel)):
        url = values.absolute_url(value, s.base)
        if url and _plausible_canonical(url, s.url):
            return url
    return ""


def _plausible_canonical(url: str, page: str) -> bool:
    """Whether a deeper page's claim to be `url` is believed. Not when `url` is its site's root
    (a template that names the home page on every page, mastodon#19573), nor when it is on
    another registrable domain at another path (a syndication source's page, or a claim to be
    someone else's): the same path on another domain is the same page moved (a custom domain, a
    new top-level domain), and kept. A site's root page may name any URL."""
    at, claimed = urlsplit(page), urlsplit(url)
    if not (at.path.strip("/") or at.query):
        return True
    if not (claimed.path.strip("/") or claimed.query):
        return False
    try:
        same_site = urls.registrable_domain(claimed.hostname or "") == urls.registrable_domain(at.hostname or "")
    except (urls.InvalidUrl, ValueError):
        return False
    return same_site or claimed.path.rstrip("/") == at.path.rstrip("/")


# --- structured data --------------------------------------------------------------------------

def structured_data(s: Sources) -> dict[str, Any] | None:
    """The page's JSON-LD blocks as parsed, its microdata items, and its OpenGraph properties
    (first value each)."""
    opengraph: dict[str, str] = {}
    for m in s.doc.metas:
        if m.key.startswith(("og:", "article:")) and m.content and m.key not in opengraph:
            opengraph[m.key] = m.content
    data: dict[str, Any] = {}
    if s.blocks:
        data["json-ld"] = s.blocks
    if s.microdata:
        data["microdata"] = s.microdata
    if opengraph:
        data["opengraph"] = opengraph
    return data or None
