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
from collections import Counter
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable, Iterator
from urllib.parse import urlsplit

from spiderduck.extract import date_text, values
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
    meta's name, `microdata:<itemprop>`, `<time>`, `text` for a date shown as text, `<title>`,
    `derived` for the URL's day), or ('', '')."""
    day = url_day(s.url)
    years: list[tuple[Any, str]] = []       # a year alone (`2019`) names no day: the last resort
    for dates in (_stated_dates(s, "datePublished", _PUBLISHED_META, modified=False),
                  _uploaded(s), _not_after(_body_times(s, day), s), _created(s)):
        found = _first_date(dates, years)
        if found[0]:
            return found
    shown = _shown(s)
    if day:     # the first date shown on the URL's day (in any zone), else that day
        return next(((date, source) for date, source in shown if _on_day(date, day)),
                    (f"{day}T{values.TEXT_DATE_HOUR:02d}:00:00Z", "derived"))
    return next(shown, None) or _first_date(iter(years))


_YEAR_ALONE = re.compile(r"\s*\d{4}\s*$")


def _not_after(dates: Iterator[tuple[str, str]], s: Sources) -> Iterator[tuple[str, str]]:
    """The <time>s that may be the publication: not after `_latest` (a comment's, a later event's)."""
    latest = ""
    for value, source in dates:
        latest = latest or _latest(s)
        if (values.rfc3339(value) or "") <= latest:
            yield value, source


def _shown(s: Sources, latest: str = "") -> Iterator[tuple[str, str]]:
    """The dates a page shows as text that may be its publication (not before FIRST_YEAR, nor after
    `_latest`), best first: one right after the headline (the article's header: before a dated
    element, which may be a sidebar's or a comment's that `document.place` cannot tell), a dated
    element's (the article's first), one the page's text labels a publication, one in the <title>,
    then the day the page's text shows most often, when one stands out (the first date on it); a
    list's many days, each shown as often, are none. A site's front page (its URL's path is `/`)
    shows its news' dates: none is its own."""
    if _is_front_page(s.url):
        return                      # a site's front page shows its news' dates: none is its own
    latest, first = latest or _latest(s), f"{FIRST_YEAR:04d}"

    def kept(dates: Iterable[str], source: str) -> Iterator[tuple[str, str]]:
        return ((date, source) for date in dates if date and first <= date <= latest)

    yield from kept(s.doc.headline_dates(), "text")
    yield from kept(map(date_text.shown_date, s.doc.dated_texts()), "text")
    found = s.doc.page_dates()      # (the page's text is searched only when those show none)
    yield from kept((date for kind, date in found if kind == date_text.LABELLED), "text")
    yield from kept((date for kind, date in found if kind == date_text.NEAR), "text")
    yield from kept((date_text.shown_date(s.doc.title),), "<title>")
    days = Counter(date[:10] for date, _ in kept((date for _, date in found), "")).most_common(2)
    if days and (len(days) == 1 or days[0][1] > days[1][1]):   # one day stands out, not a list's
        yield next((date, "text") for _, date in found if date[:10] == days[0][0])


def _is_front_page(url: str) -> bool:
    try:
        return urlsplit(url).path in ("", "/")
    except ValueError:
        return False


def _latest(s: Sources) -> str:
    """The latest a shown date may be to be the publication: now (a day ahead, for the zones),
    and not past the page's own modification, as it states it (a day ahead too)."""
    latest = datetime.now(timezone.utc) + _SLACK
    modified = modified_time(s)
    if modified:
        latest = min(latest, datetime.fromisoformat(modified.replace("Z", "+00:00")) + _SLACK)
    return values.rfc3339(latest)


_SLACK = timedelta(days=1)


_EAST, _WEST = timedelta(hours=26), timedelta(hours=24)


def _on_day(date: str, day: str) -> bool:
    """Whether an instant falls on a calendar day in some time zone (UTC-12 to UTC+14)."""
    at = datetime.fromisoformat(date.replace("Z", "+00:00"))
    noon = datetime.fromisoformat(day).replace(hour=12, tzinfo=timezone.utc)
    return -_EAST <= at - noon < _WEST      # the day from UTC+14 to UTC-12


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


def _first_date(dates: Iterator[tuple[Any, str]], years: list[tuple[Any, str]] | None = None) -> tuple[str, str]:
    """The first of `dates` that is one; with `years`, one that is a year alone is put aside there."""
    for value, source in dates:
        date = values.rfc3339(value) if value else ""
        if date:
            if years is not None and isinstance(value, str) and _YEAR_ALONE.match(value):
                years.append((value, source))
                continue
            return date, source
    return "", ""


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
