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

from common.record import Image, Video
from scheduler.extraction import values
from scheduler.extraction.document import Document
from scheduler.extraction.jsonld import Graph
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
    return typeset(
        _meta(s, "og:title", "twitter:title") or s.doc.title or _ld(s, "headline")
        or _meta(s, "dc.title", "dcterms.title") or s.doc.h1)


def description(s: Sources) -> str:
    text = (_meta(s, "og:description", "twitter:description", "description")
            or _ld(s, "description") or _meta(s, "dc.description", "dcterms.description")
            or s.doc.paragraph)
    return typeset(text)


def site_name(s: Sources) -> str:
    return (_ld(s, "publisher.name") or _meta(s, "og:site_name")
            or _meta(s, "application-name", "publisher", "twitter:app:name:iphone",
                     "twitter:app:name:googleplay", "dc.publisher", "dcterms.publisher")
            or _title_suffix(s.doc.title))


_TITLE_SEPARATOR = re.compile(r"\s[-|–—]\s+")


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
    for links in (s.doc.author_links, s.doc.byline_links()):
        for value in links:   # a link's text is a name only if it has two words or more
            name = _author_name(value)
            if " " in name:
                return name
    return _author_name(_meta(s, "twitter:creator"))


def _ld_names(s: Sources, key: str) -> str:
    """The JSON-LD persons (or organisations) under `key`, as a byline: "A", "A and B", "A, B and C"."""
    value = s.graph.get(key) if s.graph else None
    names = []
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, dict):
            item = s.graph.resolve(item).get("name")
        name = values.text(item)
        if name and name not in names:
            names.append(name)
    if len(names) > 1:
        return ", ".join(names[:-1]) + " and " + names[-1]
    return names[0] if names else ""


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
                   "sailthru.date")
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
    while <link rel=canonical> is often left pointing at a syndication source or an old scheme."""
    url = values.absolute_url(s.doc.meta("og:url"), s.base)
    if url:
        return url
    for link in s.doc.links:
        if "canonical" in link.rel:
            url = values.absolute_url(link.href, s.base)
            if url:
                return url
    return ""


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
