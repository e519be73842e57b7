"""The site's or publisher's name (`site_name`), and the headline a page states, which tells
what a <title> adds to it."""
from __future__ import annotations

import re
from typing import Any, Iterator
from urllib.parse import urlsplit

from spiderduck.core import urls
from spiderduck.extract import values
from spiderduck.extract.jsonld import node_types
from spiderduck.extract.sources import Sources, ld as _ld, meta as _meta


def meta_from(s: Sources, *keys: str) -> tuple[str, str]:
    """`sources.meta`'s value and the key it was read from (the provenance's source), or ('', '')."""
    for key in keys:
        value = values.fold(s.doc.meta(key))
        if value:
            return value, key
    return "", ""


def stated_headline(s: Sources) -> str:
    """The headline the page's JSON-LD states, else its first microdata item's."""
    headline = _ld(s, "headline")
    for item in s.microdata if not headline else ():
        props = item.get("properties", {}) if isinstance(item, dict) else {}
        headline = values.text(props.get("headline"))
        if headline:
            break
    return headline


# Names a site gives itself in meta tags, after og:site_name: the web-app name browsers show
# (application-name, and Apple's for a home-screen icon), a publisher's meta, an academic
# journal's (Highwire Press citation_* tags, read by Google Scholar), the app names of Twitter
# cards and App Links, and Dublin Core's.
_SITE_NAME_META = ("application-name", "apple-mobile-web-app-title", "publisher",
                   "citation_journal_title", "citation_publisher", "twitter:app:name:iphone",
                   "twitter:app:name:googleplay", "al:ios:app_name", "al:android:app_name",
                   "dc.publisher", "dcterms.publisher")
# A parenthetical that ends a site name ("Name (beta)", "Name (formerly Other)") is a note
# about the name, not part of it.
_NAME_ASIDE = re.compile(r"\s+\([^()]*\)$")


def site_name(s: Sources, from_title: bool = True) -> str:
    """The site's or publisher's name. The JSON-LD publisher first, as for every fact about the
    work, except that a name the page gives its site twice (og:site_name and its JSON-LD WebSite)
    wins over it (a publisher node often carries the company's legal name), and that a publisher
    that is a Person (a blogger, as WordPress SEO plugins state it) comes last: the site's own
    name is what a preview shows. Then microdata's publisher, og:site_name, the JSON-LD WebSite's
    name, the names in `_SITE_NAME_META`, a JSON-LD Organization on the page's own site (a team
    or about page states only that), a JSON-LD node whose url is the site's home page (its owner:
    `_ld_home_name`), and the site part of <title> (`_title_site`); with from_title=False, ''
    rather than that guess. A name that is only a domain (`example.com`) is taken only when no
    source states a name: it is the address, not what the site calls itself."""
    return site_name_from(s, from_title)[0]


def site_name_from(s: Sources, from_title: bool = True) -> tuple[str, str]:
    """`site_name` and where it was read (a provenance source), or ('', '')."""
    domain = ("", "")
    for name, source in _site_names(s, from_title):
        if _DOMAIN.match(name):
            domain = domain[0] and domain or (name, source)
        elif name:
            return _NAME_ASIDE.sub("", name) or name, source
    return domain


_DOMAIN = re.compile(r"(?:[a-z0-9-]+\.)+[a-z]{2,}$", re.I)


def _site_names(s: Sources, from_title: bool) -> Iterator[tuple[str, str]]:
    """The site's names in the order of `site_name`'s precedence, each with its source."""
    og = _meta(s, "og:site_name")
    website = _ld_typed_name(s, _WEBSITE_TYPES)
    publisher, by_person = _ld_publisher(s)
    yield (og if og and og == website else ""), "og:site_name"
    yield ("" if by_person else publisher), "json-ld:publisher"
    yield _microdata_publisher(s), "microdata:publisher"
    yield og, "og:site_name"
    yield website, "json-ld:name"
    for key in _SITE_NAME_META:
        yield _meta(s, key), key
    yield _ld_typed_name(s, None, same_site=True), "json-ld:name"
    yield _ld_home_name(s), "json-ld:name"
    yield (_title_site(s) if from_title else ""), "<title>"
    yield publisher, "json-ld:publisher"


_WEBSITE_TYPES = frozenset({"WebSite"})


def _is_organization(types: frozenset[str]) -> bool:
    """Whether JSON-LD types name an organisation: Organization or one of its common subtypes."""
    return any(t.endswith("Organization") or t in _ORGANIZATION_TYPES for t in types)


_ORGANIZATION_TYPES = frozenset({"Corporation", "LocalBusiness", "NGO", "OnlineBusiness", "OnlineStore",
                                 "Store", "SportsTeam"})


def _ld_publisher(s: Sources) -> tuple[str, bool]:
    """The JSON-LD publisher's name (a node's, or the text given), and whether it is a Person."""
    value = s.graph.get("publisher") if s.graph else None
    if isinstance(value, list):
        value = next((v for v in value if v), None)
    if isinstance(value, dict):
        node = s.graph.resolve(value)
        return values.text(node.get("name")), "Person" in node_types(node)
    return values.text(value), False


def _ld_typed_name(s: Sources, types: frozenset[str] | None, same_site: bool = False) -> str:
    """The name of the first top-level JSON-LD node of `types` (None: an organisation); with
    `same_site`, only one whose url (or @id) is on the page's registrable domain."""
    for node in s.graph.nodes if s.graph else ():
        kinds = node_types(node)
        if not (kinds & types if types is not None else _is_organization(kinds)):
            continue
        if same_site and not _on_site(node.get("url") or node.get("@id"), s):
            continue
        name = values.text(node.get("name"))
        if name:
            return name
    return ""


def _on_site(ref: Any, s: Sources) -> bool:
    url = values.absolute_url(ref, s.base) if isinstance(ref, str) and not ref.startswith("#") else ""
    try:
        return bool(url) and (urls.registrable_domain(urlsplit(url).hostname or "")
                              == urls.registrable_domain(urlsplit(s.url).hostname or ""))
    except (urls.InvalidUrl, ValueError):
        return False


# JSON-LD types that describe pages, lists and navigation, never who a site belongs to.
_STRUCTURAL_TYPE = re.compile(r"Page$|List(?:Item)?$|^SiteNavigationElement$|^WP[A-Z]|Action$|^EntryPoint$"
                              r"|Object$")


def _ld_home_name(s: Sources) -> str:
    """The name of a JSON-LD node, at any depth, whose url is the home page of the page's site:
    the business, club or person the site belongs to (a restaurant, an event's organiser, an
    author's own site). Pages, lists, navigation and media objects are no owners."""
    for node in s.graph.descendants() if s.graph else ():
        kinds = node_types(node)
        name = values.text(node.get("name"))
        if (name and kinds and not any(_STRUCTURAL_TYPE.search(k) for k in kinds)
                and _is_home(node.get("url"), s)):
            return name
    return ""


def _is_home(ref: Any, s: Sources) -> bool:
    """Whether `ref` is the home page (the root, without a query) of the page's registrable domain."""
    url = values.absolute_url(ref, s.base) if isinstance(ref, str) else ""
    parts = urlsplit(url)
    return bool(url) and parts.path in ("", "/") and not parts.query and _on_site(url, s)


def _microdata_publisher(s: Sources) -> str:
    """The name of a top-level microdata item's publisher (or the text given as it)."""
    for item in s.microdata:
        value = item.get("properties", {}).get("publisher") if isinstance(item, dict) else None
        if isinstance(value, list):
            value = value[0] if value else None
        if isinstance(value, dict):
            value = value.get("properties", {}).get("name")
        name = values.text(value)
        if name:
            return name
    return ""


# What separates a page's title from its site's name in <title>: a dash, bar, bullet or middle
# dot with spaces around it (`Page title | Site`, `Page title · Site`).
TITLE_SEPARATOR = re.compile(r"\s+[-|–—·•]\s+")


def _title_site(s: Sources) -> str:
    """The site name a <title> adds to the page's headline: when the headline the page states
    (og:title, twitter:title, JSON-LD or microdata headline) begins or ends <title> at a
    separator, the rest, nearest its far end; else the part after <title>'s last separator
    (`Page title - Site`)."""
    text = s.doc.title
    for headline in (_meta(s, "og:title", "twitter:title"), stated_headline(s)):
        if not headline or headline == text:
            continue
        if text.startswith(headline):
            parts = TITLE_SEPARATOR.split(" " + text[len(headline):])
            if len(parts) > 1 and not parts[0].strip():
                return parts[-1].strip()
        if text.endswith(headline):
            parts = TITLE_SEPARATOR.split(text[:len(text) - len(headline)] + " ")
            if len(parts) > 1 and not parts[-1].strip():
                return parts[0].strip()
    return _title_suffix(text)


def _title_suffix(text: str) -> str:
    """The site name in a `Page title - Site` style <title>: the part after the last separator."""
    parts = TITLE_SEPARATOR.split(text)
    return parts[-1].strip() if len(parts) > 1 else ""
