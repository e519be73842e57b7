"""The extraction rules: for each field, its sources in order of precedence.

Each field is a function of a `Sources` (the parsed page) returning a clean value,
or the empty value when no source has one. The order is the policy; the
cleaning is in `values`. In general:

- what a page shows when shared (title, description, image, canonical URL) comes
  first from its sharing metadata (OpenGraph, then Twitter cards), then plain HTML;
- facts about the work (author, publisher, dates) come first from JSON-LD, which
  is structured, then from meta tags;
- Dublin Core and guesses from the body (first <h1>, <p>, <img>, author links) come last.

The site's name is `publisher.site_name`, the author `authors.author`, the dates
`dates.published_time` and `dates.modified_time`; the image, favicon, video and players are in `media`.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from spiderduck.core import urls
from spiderduck.extract import values
from spiderduck.extract.authors import author  # noqa: F401 (the record's author)
from spiderduck.extract.dates import modified_time, published_time  # noqa: F401 (the record's dates)
from spiderduck.extract.publisher import TITLE_SEPARATOR, meta_from, site_name, stated_headline
from spiderduck.extract.sources import Sources, ld as _ld, meta as _meta
from spiderduck.extract.typography import typeset


# --- text fields ------------------------------------------------------------------------------

def title(s: Sources) -> str:
    return title_from(s)[0]


def title_from(s: Sources) -> tuple[str, str]:
    """The title and where it was read (a provenance source)."""
    if not s.doc.title or _meta(s, "og:title", "twitter:title"):
        return _first_text(s, ("og:title", "twitter:title"), "headline", ("dc.title", "dcterms.title"), "h1")
    text = page_title(s)
    return text, "<title>" if text else ""


def page_title(s: Sources) -> str:
    """The page's <title> as a preview's title, typeset (title_from's third source)."""
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
    return description_from(s)[0]


def description_from(s: Sources) -> tuple[str, str]:
    """The description and where it was read (a provenance source)."""
    return _first_text(s, ("og:description", "twitter:description", "description"), "description",
                       ("dc.description", "dcterms.description"), "paragraph")


def _first_text(s: Sources, shared: tuple[str, ...], ld_key: str, dublin_core: tuple[str, ...],
                body: str) -> tuple[str, str]:
    """The first text of the sharing metas, JSON-LD's `ld_key`, Dublin Core's metas, the document's
    `body` guess (`h1`, `paragraph`: `<h1>`, `<p>`), typeset, with its source."""
    text, source = meta_from(s, *shared)
    if not text:
        text, source = _ld(s, ld_key), "json-ld:" + ld_key
    if not text:
        text, source = meta_from(s, *dublin_core)
    if not text:
        text, source = getattr(s.doc, body), _BODY_SOURCES[body]
    text = typeset(text)
    return text, source if text else ""


_BODY_SOURCES = {"h1": "<h1>", "paragraph": "<p>"}


def lang(s: Sources) -> str:
    return lang_from(s)[0]


_LANG_METAS = ("og:locale", "inlanguage", "content-language")


def lang_from(s: Sources) -> tuple[str, str]:
    """The page's language and where it was read (a provenance source)."""
    tag = values.language(s.doc.lang)
    if tag:
        return tag, "<html lang>"
    for key in _LANG_METAS:
        tag = values.language(s.doc.meta(key))
        if tag:
            return tag, key
    tag = values.language(_ld(s, "inLanguage"))
    if tag:
        return tag, "json-ld:inLanguage"
    for key in ("dc.language", "dcterms.language"):
        tag = values.language(s.doc.meta(key))
        if tag:
            return tag, key
    return "", ""


def type_(s: Sources) -> str:
    return _meta(s, "og:type")


# --- URLs -------------------------------------------------------------------------------------

def canonical_url(s: Sources) -> str:
    """og:url first, as for every shared field: it is the URL the page asks to be shared as,
    while <link rel=canonical> is often left pointing at a syndication source or an old scheme.
    The first that `_plausible_canonical` keeps."""
    return canonical_url_from(s)[0]


def canonical_url_from(s: Sources) -> tuple[str, str]:
    """`canonical_url` and where it was read: `og:url` or `<link rel=canonical>`, or ('', '')."""
    return next(((url, source) for url, source in _claims(s) if _plausible_canonical(url, s.url)), ("", ""))


def claimed_url_from(s: Sources) -> str:
    """The URL the card claims to be (issue 43's claimed domain): `og:url`, else the first
    `<link rel=canonical>`, absolute, whether or not canonical_url_from believes it."""
    return next((url for url, _ in _claims(s)), "")


def _claims(s: Sources):
    """(absolute URL, source) of each URL the page says it is: its og:url, then its canonical links."""
    url = values.absolute_url(s.doc.meta("og:url"), s.base)
    if url:
        yield url, "og:url"
    for link in s.doc.links:
        if "canonical" in link.rel:
            url = values.absolute_url(link.href, s.base)
            if url:
                yield url, "<link rel=canonical>"


def _plausible_canonical(url: str, page: str) -> bool:
    return not canonical_refusal(url, page)


def canonical_refusal(url: str, page: str) -> str:
    """Why a deeper page's claim to be `url` is not believed, or '' when it is. Not when `url` is
    its site's root (a template that names the home page on every page, mastodon#19573), nor when
    it is on another registrable domain at another path (a syndication source's page, or a claim
    to be someone else's): the same path on another domain is the same page moved (a custom
    domain, a new top-level domain), and kept. A site's root page may name any URL."""
    at, claimed = urlsplit(page), urlsplit(url)
    if not (at.path.strip("/") or at.query):
        return ""
    if not (claimed.path.strip("/") or claimed.query):
        return "names the site's home page, not this page (a template's)"
    try:
        same_site = urls.registrable_domain(claimed.hostname or "") == urls.registrable_domain(at.hostname or "")
    except (urls.InvalidUrl, ValueError):
        return "its host has no registrable domain"
    if same_site or claimed.path.rstrip("/") == at.path.rstrip("/"):
        return ""
    return "another site's page at another path (a syndication source, or a claim to be someone else's)"


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
