"""The extraction rules: for each field, its sources in order of precedence.

Each field is a function of a `Sources` (the parsed page) returning a clean value,
or the empty value when no source has one. The order is the policy; the
cleaning is in `values`. In general:

- what a page shows when shared (title, description, image, canonical URL) comes
  first from its sharing metadata (OpenGraph, then Twitter cards), then plain HTML;
- facts about the work (author, publisher, dates) come first from JSON-LD, which
  is structured, then from meta tags;
- Dublin Core and guesses from the body (first <h1>, <p>, <img>, author links) come last.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator, NamedTuple
from urllib.parse import urlsplit

from common import urls
from common.record import Image, Video
from scheduler.extraction import values
from scheduler.extraction.document import Document
from scheduler.extraction.jsonld import Graph, node_types
from scheduler.extraction.typography import typeset

AUTHOR_MAX = 128          # characters; longer "authors" are sentences, not names

_BY = re.compile(r"^\s*by\s+|^\s*@\s*", re.I)
_URL_LIKE = re.compile(r"^(?:https?:)?//|^www\.", re.I)


@dataclass(frozen=True)
class Sources:
    """One page's parsed sources and the URL its relative links resolve against."""
    doc: Document
    graph: Graph
    url: str                   # the page's URL
    base: str                  # <base href> resolved against url, else url
    blocks: list[Any] = field(default_factory=list)   # JSON-LD blocks as parsed
    microdata: list[Any] = field(default_factory=list)  # microdata items (extruct)


def _meta(s: Sources, *keys: str) -> str:
    for key in keys:
        value = values.fold(s.doc.meta(key))
        if value:
            return value
    return ""


def _ld(s: Sources, path: str) -> str:
    return values.text(s.graph.get(path)) if s.graph else ""


# --- text fields ------------------------------------------------------------------------------

def title(s: Sources) -> str:
    shared = _meta(s, "og:title", "twitter:title")
    if shared or not s.doc.title:
        return typeset(shared or _ld(s, "headline") or _meta(s, "dc.title", "dcterms.title") or s.doc.h1)
    # A <title> that adds the site's name, which the page states elsewhere, to the page's own
    # title (`Page title | Site`, `Site - Page title`) is the page's title without it.
    # So is one that adds anything to the headline its structured data states.
    text, site, headline = s.doc.title, _site_name(s, from_title=False), _stated_headline(s)
    for sep in _TITLE_SEPARATOR.finditer(text) if site or headline else ():
        before, after = text[:sep.start()], text[sep.end():]
        if before and (after == site or before == headline):
            return typeset(before)
        if after and (before == site or after == headline):
            return typeset(after)
    return typeset(text)


def _stated_headline(s: Sources) -> str:
    """The headline the page's JSON-LD states, else its first microdata item's."""
    headline = _ld(s, "headline")
    for item in s.microdata if not headline else ():
        props = item.get("properties", {}) if isinstance(item, dict) else {}
        headline = values.text(props.get("headline"))
        if headline:
            break
    return headline


def description(s: Sources) -> str:
    text = (_meta(s, "og:description", "twitter:description", "description")
            or _ld(s, "description") or _meta(s, "dc.description", "dcterms.description")
            or s.doc.paragraph)
    return typeset(text)


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


def site_name(s: Sources) -> str:
    """The site's or publisher's name. The JSON-LD publisher first, as for every fact about the
    work, except that a name the page gives its site twice (og:site_name and its JSON-LD WebSite)
    wins over it (a publisher node often carries the company's legal name), and that a publisher
    that is a Person (a blogger, as WordPress SEO plugins state it) comes last: the site's own
    name is what a preview shows. Then microdata's publisher, og:site_name, the JSON-LD WebSite's
    name, the names in `_SITE_NAME_META`, a JSON-LD Organization on the page's own site (a team
    or about page states only that), a JSON-LD node whose url is the site's home page (its owner:
    `_ld_home_name`), and the site part of <title> (`_title_site`)."""
    return _site_name(s)


def _site_name(s: Sources, from_title: bool = True) -> str:
    """`site_name`; with from_title=False, '' rather than a guess from <title>."""
    og = _meta(s, "og:site_name")
    website = _ld_typed_name(s, _WEBSITE_TYPES)
    publisher, by_person = _ld_publisher(s)
    name = ((og if og and og == website else "")
            or ("" if by_person else publisher) or _microdata_publisher(s) or og or website
            or _meta(s, *_SITE_NAME_META) or _ld_typed_name(s, None, same_site=True) or _ld_home_name(s)
            or (_title_site(s) if from_title else "") or publisher)
    return _NAME_ASIDE.sub("", name) or name


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
_TITLE_SEPARATOR = re.compile(r"\s+[-|–—·•]\s+")


def _title_site(s: Sources) -> str:
    """The site name a <title> adds to the page's headline: when the headline the page states
    (og:title, twitter:title, JSON-LD or microdata headline) begins or ends <title> at a
    separator, the rest, nearest its far end; else the part after <title>'s last separator
    (`Page title - Site`)."""
    text = s.doc.title
    for headline in (_meta(s, "og:title", "twitter:title"), _stated_headline(s)):
        if not headline or headline == text:
            continue
        if text.startswith(headline):
            parts = _TITLE_SEPARATOR.split(" " + text[len(headline):])
            if len(parts) > 1 and not parts[0].strip():
                return parts[-1].strip()
        if text.endswith(headline):
            parts = _TITLE_SEPARATOR.split(text[:len(text) - len(headline)] + " ")
            if len(parts) > 1 and not parts[-1].strip():
                return parts[0].strip()
    return _title_suffix(text)


def _title_suffix(text: str) -> str:
    """The site name in a `Page title - Site` style <title>: the part after the last separator."""
    parts = _TITLE_SEPARATOR.split(text)
    return parts[-1].strip() if len(parts) > 1 else ""


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

# Which date a page's `published_time` reports when it states both (config `process.prefer_dates`):
# "modified", the newest stated date, like the corpus's reference extractor (metascraper) and the
# previews that show when an article was last updated; or "published", its first publication.

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


def published_time(s: Sources, prefer: str) -> str:
    """The page's date, RFC 3339 in UTC: its last modification or its publication, whichever
    `prefer` names, else the other; else a date shown as text (`<p class="date">`)."""
    order = (_published_dates, _modified_dates) if prefer == "published" else (_modified_dates, _published_dates)
    for dates in order:
        for value in dates(s):
            date = values.rfc3339(value) if value else ""
            if date:
                return date
    for value in s.doc.dated_texts():
        date = values.rfc3339(value, text=True)
        if date:
            return date
    return ""


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


# --- images -----------------------------------------------------------------------------------

# Smaller than this in a stated width or height (pixels), an image is an icon, a spacer or a
# tracking pixel, never a preview. It is the default of `process.min_image_size`, which the
# related fetches apply to the sizes they read; the extraction has no settings, so the sizes a
# page states are held to the default.
MIN_IMAGE_SIZE = 50
MAX_IMAGE_CANDIDATES = 8     # images a page offers that are kept (and, at most, probed)

_ICON_RELS = ("icon", "apple-touch-icon", "apple-touch-icon-precomposed")   # in order of preference
_ICON_SIZES = range(32, 193)  # pixels: an icon stated this size suits a preview best


def favicon(s: Sources) -> str:
    """The page's icon: a `<link rel=icon>` (or "shortcut icon"), else its Apple touch icon; one
    whose stated `sizes` fits a preview (32 to 192 pixels, or "any": scalable) before one that
    states none, and that before one stated only smaller or larger. Safari's `mask-icon`, a
    one-colour silhouette, is none. '' when the page names none: the related fetches then try
    the site's /favicon.ico."""
    best, best_rank = "", None
    for order, link in enumerate(s.doc.links):
        kind = next((k for k, rel in enumerate(_ICON_RELS) if rel in link.rel), None)
        if kind is None:
            continue
        url = values.absolute_url(link.href, s.base)
        rank = (_icon_size_rank(link.sizes), kind, order)
        if url and (best_rank is None or rank < best_rank):
            best, best_rank = url, rank
    return best


def _icon_size_rank(sizes: str) -> int:
    """0: a size in _ICON_SIZES, or "any"; 1: no size stated; 2: only other sizes."""
    if not sizes:
        return 1
    for size in sizes.split():
        width, _, height = size.partition("x")
        if size == "any" or (width.isdigit() and height.isdigit()
                             and int(width) in _ICON_SIZES and int(height) in _ICON_SIZES):
            return 0
    return 2


def image_candidates(s: Sources) -> tuple[Image, ...]:
    """Every image the page offers for its preview, best first (`image` is the first), each URL
    once, at most MAX_IMAGE_CANDIDATES: its og:image structures (with their stated size and
    type), the Twitter card's image, `<meta name=image>`, every JSON-LD image and thumbnailUrl,
    `<link rel=image_src>`; then guesses from the body: the `<img>` that state a width and a
    height, largest first, then the others in page order, then a `<video poster>`.

    Left out: an image stated smaller than MIN_IMAGE_SIZE in either dimension, a URL that names
    a tracking pixel (`_PIXEL`) or a file that is no image (a video, a sound). The related
    fetches try them in order, and keep the first that loads and is large enough."""
    found: list[Image] = []
    seen: set[str] = set()
    for image in _images(s):
        url = image.url
        if not url or url in seen:
            continue
        seen.add(url)
        if _NOT_IMAGE.search(url) or _PIXEL.search(url) or _tiny(image):
            continue      # a URL left out once stays out, whoever names it again
        found.append(image)
        if len(found) == MAX_IMAGE_CANDIDATES:
            break
    return tuple(found)


def image(s: Sources) -> Image | None:
    candidates = image_candidates(s)
    return candidates[0] if candidates else None


def _images(s: Sources) -> Iterator[Image]:
    """What `image_candidates` chooses from, in order; URLs absolute, or '' when unusable."""
    for media in _og_media(s, "og:image"):
        yield Image(*media)
    for value in (s.doc.meta("twitter:image"), s.doc.meta("twitter:image:src"), s.doc.meta("image")):
        yield Image(values.absolute_url(value, s.base))
    yield from _ld_images(s, "image")
    yield from _ld_images(s, "thumbnailUrl")
    for link in s.doc.links:
        if "image_src" in link.rel:
            yield Image(values.absolute_url(link.href, s.base))
    body = [Image(values.absolute_url(img.src, s.base), _pixels(img.width), _pixels(img.height))
            for img in s.doc.images]                                      # guesses from the body
    yield from sorted((i for i in body if i.width and i.height), key=lambda i: -i.width * i.height)
    yield from body
    yield Image(values.absolute_url(s.doc.video_poster, s.base))


def _tiny(image: Image) -> bool:
    return 0 < image.width < MIN_IMAGE_SIZE or 0 < image.height < MIN_IMAGE_SIZE


_NOT_IMAGE = re.compile(r"\.(?:mp4|m4v|webm|mov|avi|mkv|ogv|mp3|m4a|wav|ogg|oga|flac|aac)(?:[?#]|$)", re.I)
# Tracking pixels and beacons, by the names they commonly go by: a file named pixel, 1x1, spacer,
# blank or beacon (`/t/pixel.gif`, `/img/1x1.png`), Meta's pixel (facebook.com/tr) and Adobe
# Analytics' beacons (`/b/ss/`).
_PIXEL = re.compile(r"/(?:[\w.-]*[_.-])?(?:pixel|1x1|spacer|blank|beacon)\.(?:gif|png)(?:[?#]|$)"
                    r"|^https?://(?:www\.)?facebook\.com/tr(?:[/?#]|$)|/b/ss/", re.I)
_PIXELS = re.compile(r"\s*(\d{1,6})(?:\.\d*)?\s*(?:px)?\s*$", re.I)


def _pixels(value: Any) -> int:
    """A stated size in pixels: `<img width="640">`, "640px", JSON-LD's 640 or {"value": 640};
    0 for a relative size ("100%", "auto") or none."""
    if isinstance(value, dict):
        value = value.get("value")
    if isinstance(value, bool):
        return 0
    if isinstance(value, (int, float)):
        return int(value) if 0 < value < 1_000_000 else 0
    m = _PIXELS.match(value) if isinstance(value, str) else None
    return int(m.group(1)) if m else 0


def _ld_images(s: Sources, key: str) -> Iterator[Image]:
    """Every entry of the first JSON-LD `key` (a URL, or an ImageObject with its stated size)."""
    value = s.graph.get(key) if s.graph else None
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, dict):
            item = s.graph.resolve(item)
            yield Image(values.absolute_url(item.get("url") or item.get("contentUrl"), s.base),
                        _pixels(item.get("width")), _pixels(item.get("height")))
        elif isinstance(item, str):
            yield Image(values.absolute_url(item, s.base))


def video(s: Sources) -> Video | None:
    for media in _og_media(s, "og:video"):
        return Video(*media)
    url = values.absolute_url(s.doc.meta("twitter:player:stream"), s.base)
    return Video(url) if url else None


def players(s: Sources) -> tuple[Video, ...]:
    """The page's players, for its embed: each og:video, then its twitter:player (an HTML page
    made to be framed; twitter:player:stream is a media file, not a player). Which may be framed
    is decided later, against process.embed_allow_hosts (extraction.embeds)."""
    found = [Video(*m) for m in _og_media(s, "og:video")]
    url = values.absolute_url(s.doc.meta("twitter:player"), s.base)
    if url:
        found.append(Video(url, values.integer(s.doc.meta("twitter:player:width")),
                           values.integer(s.doc.meta("twitter:player:height")), "text/html"))
    return tuple(found[:MAX_PLAYERS])


MAX_PLAYERS = 8


class _Media(NamedTuple):
    url: str
    width: int
    height: int
    content_type: str


def _og_media(s: Sources, prefix: str) -> list[_Media]:
    """The page's og:image (or og:video) structures, in order, with a usable URL.

    A structure starts at `og:image` (or `og:image:url`); the `:secure_url`, `:width`,
    `:height` and `:type` properties after it belong to it.
    """
    groups: list[dict[str, str]] = []
    starts = (prefix, prefix + ":url")
    sub = prefix + ":"
    for m in [m for m in s.doc.metas if m.key.startswith(prefix)]:   # usually none for og:video
        key = m.key
        if key in starts:
            if not groups or "url" in groups[-1]:
                groups.append({})
            groups[-1]["url"] = m.content
        elif key.startswith(sub):
            if not groups:
                groups.append({})
            groups[-1].setdefault(key[len(sub):], m.content)
    found = []
    for g in groups:
        url = values.absolute_url(g.get("secure_url"), s.base) or values.absolute_url(g.get("url"), s.base)
        if url:
            found.append(_Media(url, values.integer(g.get("width")), values.integer(g.get("height")),
                               values.fold(g.get("type", "")).lower()))
    return found


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
