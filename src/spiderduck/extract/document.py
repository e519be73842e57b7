"""An HTML5 page reduced to the read-only facts the extraction rules use.

`parsers` walks a parsed tree once and feeds the elements of interest, in document
order, to a `Builder`, which makes the `Document`; `wanted` decides which elements
matter, for every parser alike, so that all parsers give the same `Document`.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Callable, Iterable

_JSONLD_TYPE = "application/ld+json"
# Elements whose tag alone makes them interesting. <time> and [itemprop] are filtered on attributes.
_TAGS = frozenset({"html", "title", "base", "meta", "link", "script", "h1", "p", "time", "img", "video",
                   "audio"})
# Links whose only purpose is loading resources; no rule reads them, and pages have dozens.
HINT_RELS = frozenset({"stylesheet", "preload", "preconnect", "dns-prefetch", "modulepreload",
                        "prefetch", "prerender"})
_MAX_HINTS = 8   # at most this many <time>, itemprop and author-link values are kept
_MAX_IMAGES = 16  # at most this many <img>: the first is a guess, the largest stated one a better one


def fold(text: str | None) -> str:
    """White space folded to single spaces and trimmed: re.sub(r"\\s+", " ", text).strip(), as
    str.split's white space is the pattern's \\s, four times faster."""
    return " ".join(text.split()) if text else ""


@dataclass(frozen=True, slots=True)
class Link:
    rel: tuple[str, ...]      # lower-cased tokens
    href: str
    type: str = ""
    sizes: str = ""
    hreflang: str = ""


@dataclass(frozen=True, slots=True)
class Img:
    src: str
    width: str = ""           # the width and height attributes, as written (trimmed)
    height: str = ""


@dataclass(frozen=True, slots=True)
class Meta:
    key: str                  # lower-cased value of property, name or itemprop
    content: str
    media: str = ""           # its media attribute, as written (trimmed): theme-color's dark scheme


class Document:
    """What a page says about itself; built by `parse`, never changed."""

    __slots__ = ("metas", "links", "lang", "title", "base_href", "jsonld", "h1", "paragraph",
                 "times", "item_authors", "item_dates", "author_links", "images", "video_poster",
                 "audio", "has_items", "_index", "_item_html", "_lazy")

    def __init__(self, metas: tuple[Meta, ...], links: tuple[Link, ...], lang: str, title: str,
                 base_href: str, jsonld: tuple[str, ...], h1: str, paragraph: str,
                 times: tuple[str, ...], item_authors: tuple[str, ...], item_dates: tuple[Meta, ...],
                 author_links: tuple[str, ...], images: tuple[Img, ...], video_poster: str,
                 bylines: Callable[[], tuple[str, ...]] = tuple,
                 dated: Callable[[], tuple[str, ...]] = tuple, has_items: bool = False,
                 item_html: Callable[[], str | None] = lambda: None,
                 placed_times: Callable[[], tuple[str, ...]] = tuple,
                 byline_texts: Callable[[], tuple[str, ...]] = tuple,
                 audio: tuple[str, str] = ("", ""), main_words: Callable[[], int] = int,
                 headline_texts: Callable[[], tuple[str, ...]] = tuple,
                 page_dates: Callable[[], tuple[tuple[int, str], ...]] = tuple,
                 headline_dates: Callable[[], tuple[str, ...]] = tuple):
        self.metas = metas            # in document order; a tag with both name and property appears twice
        self.links = links
        self.lang = lang              # <html lang>
        self.title = title            # first <title>, folded
        self.base_href = base_href    # first <base href>, as written
        self.jsonld = jsonld          # texts of <script type="application/ld+json">
        self.h1 = h1                  # first non-empty <h1>, folded
        self.paragraph = paragraph    # first non-empty <p>, folded
        self.times = times            # datetime attributes of <time>, first few
        self.item_authors = item_authors  # microdata: content or text of [itemprop*=author]
        self.item_dates = item_dates      # microdata: (itemprop, content / datetime / title / text)
                                          # of [itemprop*=date]
        self.author_links = author_links  # text of <a rel=author> and <a class="...author...">
        self.images = images          # the first few <img src> (not aria-hidden), with their
                                      # width and height attributes
        self.video_poster = video_poster  # poster of the first <video poster>
        self.has_items = has_items    # an element declares a microdata item (itemscope)
        self.audio = audio            # (src, type) of the first <audio> with a src or a <source src>
        index: dict[str, list[str]] = {}
        for m in metas:
            index.setdefault(m.key, []).append(m.content)
        self._index = index
        self._item_html = item_html
        # What is found on first use only (each its own walk), by name: a callable until then.
        self._lazy: dict[str, object] = {
            "bylines": bylines, "dated": dated, "placed": placed_times, "byline_texts": byline_texts,
            "main_words": main_words, "headline_texts": headline_texts, "page_dates": page_dates,
            "headline_dates": headline_dates}

    def _found(self, name: str):
        value = self._lazy[name]
        if callable(value):
            value = self._lazy[name] = value()
        return value

    def byline_links(self) -> tuple[str, ...]:
        """Texts of the first few links inside an element whose class mentions "author", in
        document order. Found on first use only: matching them costs as much as the rest."""
        return self._found("bylines")

    def dated_texts(self) -> tuple[str, ...]:
        """Short texts of the first few elements that show a date: <time> without a datetime
        attribute, and elements whose class mentions "date" or "time" (`<p class="date">Aug 14,
        2020</p>`). Found on first use only, like `byline_links`."""
        return self._found("dated")

    def article_times(self) -> tuple[str, ...]:
        """The datetime attributes of the page's first <time>s, the article's first: those inside
        <article>, <main>, the article's body, header or byline (`ARTICLE`), then those outside
        both, then those of an <aside>, <nav>, a comment, sidebar or related list (`ASIDE`) last. Found on first use only, like `byline_links`."""
        return self._found("placed")

    def byline_texts(self) -> tuple[str, ...]:
        """Short texts of the first few elements whose class mentions "byline" or "author"
        (`<span class="author-name">Jane Doe</span>`, `<p class="byline">By Jane Doe</p>`), in
        document order. Found on first use only, like `byline_links`."""
        return self._found("byline_texts")

    def headline_texts(self) -> tuple[str, ...]:
        """Short texts of what follows the headline (the first non-empty <h1>) in document order:
        its next few siblings, then its parent's and grandparent's (headline.HEADLINE_NEXT in all), where a
        byline written as plain text stands (`<h1>…</h1><p>By Jane Doe</p>`). Found on first use
        only, like `byline_links`."""
        return self._found("headline_texts")

    def main_words(self) -> int:
        """The words of the page's main text: its articleBody, <article>, <main>, else <body>,
        without scripts, styles, navigation and asides (main_text.py). Found on first use only,
        like `byline_links`: only an article's is asked for."""
        return self._found("main_words")

    def page_dates(self) -> tuple[tuple[int, str], ...]:
        """Dates written in the page's text, each with what stands around it (date_text.scan:
        LABELLED, NEAR the headline, or OTHER), in document order. Found on first use only."""
        return self._found("page_dates")

    def headline_dates(self) -> tuple[str, ...]:
        """Dates in the text right after the headline (date_text.near_dates), RFC 3339 in UTC, in
        order. Found on first use only."""
        return self._found("headline_dates")

    def item_html(self) -> str | None:
        """The page's top-level microdata items as HTML, for a parse of just them; None when
        only the whole page will do (an item on <html> or <body>, an itemref, or a parser that
        cannot tell)."""
        return self._item_html()

    def meta(self, key: str) -> str:
        """Content of the first non-empty meta with this property / name / itemprop."""
        for content in self._index.get(key, ()):
            if content:
                return content
        return ""

    def meta_all(self, key: str) -> list[str]:
        return self._index.get(key, [])

    def has_meta(self, key: str) -> bool:
        return key in self._index

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Document)
                and all(self._found(name) == other._found(name) for name in self._lazy)
                and all(getattr(self, s) == getattr(other, s) for s in self.__slots__
                        if s not in ("_item_html", "_lazy")))

    def __repr__(self) -> str:
        return (f"Document(title={self.title!r}, metas={len(self.metas)}, links={len(self.links)}, "
                f"jsonld={len(self.jsonld)})")


class Builder:
    """Collects facts from a stream of (tag, attributes, text-getter) in document order."""

    def __init__(self) -> None:
        self.metas: list[Meta] = []
        self.links: list[Link] = []
        self.lang = ""
        self.title: str | None = None
        self.base_href: str | None = None
        self.jsonld: list[str] = []
        self.h1 = ""
        self.paragraph = ""
        self.times: list[str] = []
        self.item_authors: list[str] = []
        self.item_dates: list[Meta] = []
        self.author_links: list[str] = []
        self.images: list[Img] = []
        self.video_poster = ""
        self.audio = ("", "")
        self.has_items = False
        self.satisfied: set[str] = set()   # tags whose facts are complete: later ones can be skipped

    def feed(self, tag: str, attrs: dict[str, str], text: Callable[[], str]) -> None:
        if tag == "meta":
            content = attrs.get("content")
            if content is None:
                return
            content = content.strip()
            keys = []
            media = attrs.get("media", "").strip()
            for attr in ("property", "name", "itemprop", "http-equiv"):
                key = attrs.get(attr)
                if key and (key := key.strip().lower()) not in keys:
                    keys.append(key)
                    self.metas.append(Meta(key, content, media) if media else Meta(key, content))
        elif tag == "link":
            href = attrs.get("href")
            rel = attrs.get("rel")
            if href is not None and rel:
                self.links.append(Link(tuple(rel.lower().split()), href.strip(),
                                       attrs.get("type", "").strip().lower(),
                                       attrs.get("sizes", "").strip().lower(),
                                       attrs.get("hreflang", "").strip().lower()))
        elif tag == "script":
            if attrs.get("type", "").strip().lower() == _JSONLD_TYPE:
                self.jsonld.append(text())
        elif tag == "title":
            if self.title is None:
                self.title = fold(text())
                self.satisfied.add(tag)
        elif tag == "base":
            if self.base_href is None and "href" in attrs:
                self.base_href = attrs["href"].strip()
        elif tag == "html":
            if not self.lang:
                self.lang = attrs.get("lang", "").strip()
        elif tag == "h1":
            if not self.h1:
                self.h1 = fold(text())
                if self.h1:
                    self.satisfied.add(tag)
        elif tag == "p":
            if not self.paragraph:
                self.paragraph = fold(text())
                if self.paragraph:
                    self.satisfied.add(tag)
        elif tag == "time":
            if "datetime" in attrs and len(self.times) < _MAX_HINTS:
                self.times.append(attrs["datetime"].strip())
        elif tag == "img":
            src = attrs.get("src", "").strip()
            if src and len(self.images) < _MAX_IMAGES and attrs.get("aria-hidden", "").lower() != "true":
                self.images.append(Img(src, attrs.get("width", "").strip(), attrs.get("height", "").strip()))
                if len(self.images) == _MAX_IMAGES and "itemprop" not in attrs:
                    self.satisfied.add(tag)
        elif tag == "video":
            if not self.video_poster:
                self.video_poster = attrs.get("poster", "").strip()
        elif tag == "audio":
            # the parsers put the first <source src> inside it, when it has no src, in its attributes
            src = attrs.get("src", "").strip()
            if src and not self.audio[0]:
                self.audio = (src, attrs.get("type", "").strip().lower())
        elif tag == "a" and is_author_link(attrs):
            if len(self.author_links) < _MAX_HINTS:
                value = fold(text())
                if value:
                    self.author_links.append(value)
        if "itemscope" in attrs:
            self.has_items = True
        if "itemprop" in attrs and tag != "meta":
            self._itemprop(attrs, text)

    def _itemprop(self, attrs: dict[str, str], text: Callable[[], str]) -> None:
        prop = attrs["itemprop"].lower()
        if "author" in prop and len(self.item_authors) < _MAX_HINTS:
            value = fold(attrs["content"] if "content" in attrs else text())
            if value:
                self.item_authors.append(value)
        if "date" in prop and len(self.item_dates) < _MAX_HINTS:
            for attr in ("content", "datetime", "title"):
                if attrs.get(attr):
                    self.item_dates.append(Meta(prop, fold(attrs[attr])))
                    return
            value = fold(text())
            if value:
                self.item_dates.append(Meta(prop, value))

    def build(self, bylines: Callable[[], tuple[str, ...]] = tuple,
              dated: Callable[[], tuple[str, ...]] = tuple,
              item_html: Callable[[], str | None] = lambda: None,
              placed_times: Callable[[], tuple[str, ...]] = tuple,
              byline_texts: Callable[[], tuple[str, ...]] = tuple,
              main_words: Callable[[], int] = int,
              headline_texts: Callable[[], tuple[str, ...]] = tuple,
              page_dates: Callable[[], tuple[tuple[int, str], ...]] = tuple,
              headline_dates: Callable[[], tuple[str, ...]] = tuple) -> Document:
        return Document(tuple(self.metas), tuple(self.links), self.lang, self.title or "",
                        self.base_href or "", tuple(self.jsonld), self.h1, self.paragraph,
                        tuple(self.times), tuple(self.item_authors), tuple(self.item_dates),
                        tuple(self.author_links), tuple(self.images), self.video_poster, bylines, dated,
                        self.has_items, item_html, placed_times, byline_texts, self.audio, main_words,
                        headline_texts, page_dates, headline_dates)


def is_author_link(attrs: dict[str, str]) -> bool:
    return "author" in attrs.get("rel", "").lower().split() or "author" in attrs.get("class", "").lower()


def wanted(tag: str, attrs: dict[str, str]) -> bool:
    if tag in _TAGS:
        if tag == "link":
            rel = attrs.get("rel", "").lower().split()
            return bool(rel) and not HINT_RELS.issuperset(rel)
        if tag == "script":
            return attrs.get("type", "").strip().lower() == _JSONLD_TYPE
        return True
    if tag == "a" and is_author_link(attrs):
        return True
    if "itemscope" in attrs:
        return True
    prop = attrs.get("itemprop", "").lower()
    return "author" in prop or "date" in prop


DATED_TEXT_MAX = 80   # characters; a longer text is a paragraph that happens to hold a date


def texts(texts: Iterable[str], max_length: int = 0) -> tuple[str, ...]:
    """The first few non-empty texts, folded (and at most `max_length` long, when given)."""
    found: list[str] = []
    for text in texts:
        text = fold(text)
        if text and not (max_length and len(text) > max_length):
            found.append(text)
            if len(found) == _MAX_HINTS:
                break
    return tuple(found)


# Where a <time> is (see `Document.article_times`): the article's own, or a sidebar's or comment's.
ARTICLE, OUTSIDE, ASIDE = 0, 1, 2
_ARTICLE_TAGS = frozenset({"article", "main"})
_ASIDE_TAGS = frozenset({"aside", "nav"})
_ARTICLE_CLASS = ("byline", "article-body", "articlebody", "entry-content", "post-content", "entry-meta",
                  "post-meta", "article-meta", "entry-header", "post-header", "article-header")
_ASIDE_CLASS = ("comment", "sidebar", "related", "widget", "recommend", "trending", "popular", "most-read",
                "reply")
_PLACED_MAX = 16   # <time>s placed per page


def place(ancestors: Iterable[tuple[str, dict[str, str]]]) -> int:
    """ARTICLE, OUTSIDE or ASIDE for an element under these (tag, attributes) ancestors, in any
    order: ASIDE when any is one (a comment inside an article is a comment), else ARTICLE when any is one."""
    found = OUTSIDE
    for tag, attrs in ancestors:
        classes = (attrs.get("class") or "").lower().split()
        if tag in _ASIDE_TAGS or any(c.startswith(_ASIDE_CLASS) for c in classes):
            return ASIDE
        if (tag in _ARTICLE_TAGS or (attrs.get("itemprop") or "").lower() == "articlebody"
                or any(c.startswith(_ARTICLE_CLASS) for c in classes)):
            found = ARTICLE
    return found


def placed(times: Iterable[tuple[int, str]]) -> tuple[str, ...]:
    """The datetimes of (place, datetime) pairs in document order, ordered by place (stable)."""
    kept = [(rank, value.strip()) for rank, value in islice(times, _PLACED_MAX) if value.strip()]
    return tuple(value for _, value in sorted(kept, key=lambda pair: pair[0]))


BYLINE_TEXT_MAX = 120   # characters; a longer "byline" is an author's biography


def shows_byline(attrs: dict[str, str]) -> bool:
    """Whether an element is a byline (see `Document.byline_texts`)."""
    cls = attrs.get("class", "").lower()
    return "byline" in cls or "author" in cls
