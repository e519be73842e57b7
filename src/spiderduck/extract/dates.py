"""The page's dates: `published_time`, when it was first published (what a preview shows), and
`modified_time`, when it says it last changed. Each RFC 3339 in UTC, or ''.

The publication date's sources, in order:

1. a date the page states for machines: JSON-LD datePublished, the publication metas
   (`_PUBLISHED_META`), microdata's date properties, a video's uploadDate;
2. a <time datetime> of the body: the article's before one outside it, and one of a sidebar,
   a comment or a related list last (`Document.article_times`); but first one that falls on the
   day the page's URL names (`/2020/01/13/slug`): the article's own. Then JSON-LD dateCreated;
3. a date shown as text (`<p class="date">13 January 2020</p>`, `13.01.2020`), unless that text
   says it is an update (`Updated 14 Jan 2020`, `Aktualisiert am ...`): an update is no
   publication;
4. the date in the page's URL path (`/2020/01/13/`, `/2020-01-13-slug`, `/20200113/`), only
   when the page states none: a plausible day (a real calendar day of a year from 1995, the
   web's first news sites, to next year), at noon UTC like any date without a time.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, Iterator
from urllib.parse import urlsplit

from spiderduck.extract import values
from spiderduck.extract.sources import Sources

_PUBLISHED_META = ("article:published_time", "og:published_time", "og:article:published_time",
                   "published_time", "datepublished", "dc.date.issued", "dcterms.issued",
                   "dc.date", "dcterms.date", "dcterms.created", "date", "pubdate",
                   "publish-date", "publish_date", "article:published", "parsely-pub-date",
                   "sailthru.date",
                   # Highwire Press tags, which scholarly pages state for Google Scholar
                   "citation_publication_date", "citation_date", "citation_online_date")
_MODIFIED_META = ("article:modified_time", "og:updated_time", "datemodified", "dcterms.modified",
                  "last-modified")


def published_time(s: Sources) -> str:
    """When the page was first published (see the module's docstring); never its modification."""
    return published_time_from(s)[0]


def published_time_from(s: Sources) -> tuple[str, str]:
    """`published_time` and where it was read (a provenance source: `json-ld:datePublished`, a
    meta's name, `microdata:<itemprop>`, `<time>`, `text` for a date shown as text, `derived`
    for the URL's day), or ('', '')."""
    day = url_day(s.url)
    for dates in (_stated_dates(s, "datePublished", _PUBLISHED_META, modified=False),
                  _uploaded(s), _body_times(s, day), _created(s)):
        found = _first_date(dates)
        if found[0]:
            return found
    for text in s.doc.dated_texts():
        date = "" if _UPDATE.match(text) else values.rfc3339(text, text=True)
        if date:
            return date, "text"
    return (f"{day}T{values.TEXT_DATE_HOUR:02d}:00:00Z", "derived") if day else ("", "")


def modified_time(s: Sources) -> str:
    """When the page says it was last modified, or ''."""
    return _first_date(_stated_dates(s, "dateModified", _MODIFIED_META, modified=True))[0]


def _stated_dates(s: Sources, graph_key: str, meta_keys: tuple[str, ...],
                  modified: bool) -> Iterator[tuple[Any, str]]:
    """Dates a page states of one kind, with their sources: JSON-LD's, the metas', then microdata's."""
    if s.graph:
        yield s.graph.get(graph_key), "json-ld:" + graph_key
    for key in meta_keys:
        yield s.doc.meta(key), key
    for m in s.doc.item_dates:
        if ("modified" in m.key) == modified:
            yield m.content, "microdata:" + m.key


def _uploaded(s: Sources) -> Iterator[tuple[Any, str]]:
    if s.graph:   # a video (VideoObject) states when it was uploaded, its publication
        yield s.graph.get("uploadDate"), "json-ld:uploadDate"


def _created(s: Sources) -> Iterator[tuple[Any, str]]:
    if s.graph:
        yield s.graph.get("dateCreated"), "json-ld:dateCreated"


def _body_times(s: Sources, day: str) -> Iterator[tuple[str, str]]:
    """The body's <time datetime>s, one on the URL's day (as written, in the page's zone) first."""
    times = s.doc.article_times() or s.doc.times
    if day:
        yield from ((t, "<time>") for t in times if t[:10] == day)
    yield from ((t, "<time>") for t in times)


def _first_date(dates: Iterator[tuple[Any, str]]) -> tuple[str, str]:
    for value, source in dates:
        date = values.rfc3339(value) if value else ""
        if date:
            return date, source
    return "", ""


# A shown date that says it is the last change: English, Spanish, Portuguese, French, German, Italian.
_UPDATE = re.compile(r"\W*(?:last\s+)?(?:updated|modified|edited|revised|actualizad[oa]|atualizad[oa]"
                     r"|modifié|mis à jour|mise à jour|aktualisiert|geändert|aggiornat[oa])\b", re.I)

# A day in a URL's path: /2020/01/13/, /2020/1/13.html, /2020-01-13/, /slug-2020-01-13,
# /20200113/, /20200113-slug. Digits around it make it part of a number (an id), not a date.
_URL_DAY = re.compile(r"(?<![\d])(?:(?<=/)(\d{4})/(\d{1,2})/(\d{1,2})"
                      r"|(\d{4})-(\d{2})-(\d{2})"
                      r"|(?<=[/_-])(\d{4})(\d{2})(\d{2}))(?=[/._-]|$)")
FIRST_YEAR = 1995   # the first news sites; a "date" before it in a path is a number


def url_day(url: str) -> str:
    """The calendar day (`YYYY-MM-DD`) a URL's path names, or '' (see `_URL_DAY`)."""
    try:
        path = urlsplit(url).path
    except ValueError:
        return ""
    last_year = datetime.now(timezone.utc).year + 1
    for m in _URL_DAY.finditer(path):
        year, month, day = (int(g) for g in m.groups() if g is not None)
        if not FIRST_YEAR <= year <= last_year:
            continue
        try:
            return datetime(year, month, day).strftime("%Y-%m-%d")
        except ValueError:
            continue
    return ""
