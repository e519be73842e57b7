"""Dates shown as text, for a page that states none for machines (dates.py reads them last).

Two kinds, each made by every parser alike (parsers.py) and kept in the `Document`:

- `Document.dated_texts`: the short texts of the elements that show a date (`shows_date`: a
  <time> without a datetime, an element whose class mentions "date", "time" or "publish", the
  ISO date of a `title` attribute: `<span title="2020-09-20T14:20:02Z">3 days ago</span>`), the
  article's first and a sidebar's, a comment's or a related list's last (`document.place`);
- `Document.page_dates`: the dates written in the page's text (`scan`), what htmldate calls its
  extensive search, in one bounded pass: each year (19xx, 20xx) is found by one compiled pattern,
  and a date is read around it by anchored matches (`values.date_at`, in every format and
  language `values.dates_in` reads:
  `03.02.2022 15:34`, `Mai 06 2018` over three spans, `6 de mayo de 2018`, `3 марта 2021`). What
  stands before a date tells it: a copyright (`© 12.03.2020`), another day's label (`Closing
  date:`, `Event date`) or an update's word (`Updated`,
  `Aktualisiert am`, a state object's key: `"dateModified":"`, `"modifiedGmt": "`) and it is none
  of the page's publication; a publication's word (`Published`, `Veröffentlicht am`, `Publié le`,
  `Datum`, `"datePublished":"`, `"created_at": "`) makes it
  LABELLED; right after the headline (NEAR_HEADLINE characters), where an article's header
  stands, it is NEAR; else OTHER.

The text searched is the <body>'s, scripts' text included (a page's state object states its dates
too), up to DATE_SEARCH_CHARS; at most DATE_SEARCH_YEARS years are looked at and DATE_SEARCH_FOUND
dates kept: a hostile page of a million dates costs no more than a short one.
"""
from __future__ import annotations

import re
from itertools import islice
from typing import Callable, Iterable

from spiderduck.extract.document import DATED_TEXT_MAX, fold
from spiderduck.extract import values

DATE_SEARCH_CHARS = 65_536     # of the page's text searched for dates: its header and article
DATE_SEARCH_YEARS = 96         # years looked at for a date around them
DATE_SEARCH_FOUND = 32         # dates kept
NEAR_HEADLINE = 400            # characters after the headline that are the article's header
DATED_MAX = 8                  # dated texts kept ...
DATED_PLACED = 16              # ... of the first this many, ordered by place ...
DATED_LOOKED = 64              # ... of the first this many elements that show a date
LABELLED, NEAR, OTHER = 0, 1, 2

_YEAR = re.compile(r"(?:19|20)\d\d")
_CONTEXT = 48                  # characters before a date read for what it is

# What may stand between a label and its date: `Published: `, `Veröffentlicht am `, `Publié le `,
# `Posted on Sunday, `: a preposition, and a weekday (no other word: `Data from 12.03.2020` is
# prose).
_WEEKDAY = ("mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun|monday|tuesday|wednesday|thursday|friday|saturday"
            "|sunday|mo|di|mi|do|fr|sa|so|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonnabend"
            "|sonntag|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|lunes|martes|miércoles|jueves"
            "|viernes|sábado|domingo|lunedì|martedì|mercoledì|giovedì|venerdì|sabato|domenica|segunda|terça"
            "|quarta|quinta|sexta|maandag|dinsdag|woensdag|donderdag|vrijdag|zaterdag|zondag|måndag|tisdag"
            "|onsdag|torsdag|fredag|lördag|söndag|mandag|tirsdag|lørdag|søndag|poniedziałek|wtorek|środa"
            "|czwartek|piątek|sobota|niedziela")
_ON = (r"\W{0,4}(?:(?:on|am|le|el|il|em|op|dnia|the|at|vom|du|del|den)\s+)?"
       rf"(?:(?:{_WEEKDAY})(?:-feira)?\.?,?\s+)?\W{{0,3}}$")
# A state object's key before its value (`"datePublished": "`, `'created_at':'`).
_KEY = r"[\"']\s*[:=]\s*[\"']?$"
# `Date:` and its like label a publication only alone: not `Closing date:`, `Event date`.
_DATE_WORDS = r"date|dated|datum|fecha|data|дата"
_NOT_PUBLICATION = re.compile(r"(?:closing|due|event|start|end|expiry|expiration|birth|release|deadline"
                              r"|application|departure|arrival|delivery|effective|issue|update|last"
                              r"|modified|updated|veranstaltungs|abgabe|einsende|geburts|fecha de"
                              r"|date de|data di|data de)\W*$", re.I)
_PUBLISHED = re.compile(
    r"(?:\b(?:published|posted|publication date|veröffentlicht|erschienen|publiziert|publiée?|publie"
    r"|mis en ligne|publicad[oa]|pubblicat[oa]|gepubliceerd|geplaatst|publicerad|publicerat|publiceret"
    r"|udgivet|publisert|opublikowan[oay]|dodano|publikováno|vydáno|julkaistu|yayınlanma|yayınlandı"
    r"|опубликовано)\b" + _ON +
    r"|(?P<word>\b(?:" + _DATE_WORDS + r"))\b" + _ON +
    r"|[a-z_]*(?:published|publish_?date|pubdate|created|issued)[a-z_]*" + _KEY + ")", re.I)
_UPDATED = re.compile(
    r"(?:\b(?:updated|modified|edited|revised|aktualisiert|geändert|actualizad[oa]|atualizad[oa]"
    r"|mis à jour|mise à jour|modifié|aggiornat[oa]|bijgewerkt|gewijzigd|uppdaterad|uppdaterat"
    r"|opdateret|oppdatert|zaktualizowan[oay]|aktualizováno|päivitetty|güncellendi|обновлено)\b" + _ON +
    r"|[a-z_]*(?:modified|updated|lastmod)[a-z_]*" + _KEY + ")", re.I)
# A copyright's date: the sign or word right before it (`© 12.03.2020`), not a photo credit's
# sign some words before (`Photo: © Reuters 12.03.2021`).
_COPYRIGHT = re.compile(r"(?:©|&copy;|\(c\)|copyright)\s*(?:©\s*)?$", re.I)
# Around a year, what a date written with it can have (`12.03.2021`, `2021-03-12`, `May 6, 2018`,
# `"2021-07-09T21:25:40"`, `2018年`): a year in a style sheet or script (`1920px`, `:2000;`) has
# none, and does not count against DATE_SEARCH_YEARS.
_BEFORE_A_YEAR = frozenset(" ,.-/\"'\xa0\t\n\r(>")
_AFTER_A_YEAR = frozenset(" ,.-/\"'\xa0\t\n\r)<年년T")


def scan(text: str, headline: str = "") -> tuple[tuple[int, str], ...]:
    """`Document.page_dates` of a page's text: (LABELLED, NEAR or OTHER, RFC 3339 in UTC) in
    document order (see the module's docstring). `headline` is the headline's text as it stands
    in `text`: the first place it stands starts the article's header."""
    text = text[:DATE_SEARCH_CHARS]
    near = text.find(headline) if headline else -1
    near_from = near + len(headline) if near >= 0 else len(text) + 1
    found: list[tuple[int, str]] = []
    read_to, years = 0, 0
    for year in _YEAR.finditer(text):
        at = year.start()
        if at < read_to or not (at == 0 or text[at - 1] in _BEFORE_A_YEAR) \
                or not (at + 4 == len(text) or text[at + 4] in _AFTER_A_YEAR):
            continue
        years += 1
        if years > DATE_SEARCH_YEARS:
            break
        date = values.date_at(text, at)
        if date is not None:
            begin, read_to, value = date
            kind = _kind(text[max(0, begin - _CONTEXT):begin], begin - near_from)
            if kind is not None:
                found.append((kind, value))
        if len(found) == DATE_SEARCH_FOUND:
            break
    return tuple(found)


SHOWN_READ = 512        # characters of a short text read for a date (a <title> may be any length)


def shown_date(text: str) -> str:
    """The first date in a short text (a dated element's, the <title>) that is no update's,
    copyright's or another day's (`Updated 14 Jan 2020`, `Aktualisiert am ...`, `Closing date:`):
    no publication. RFC 3339 in UTC, or ''."""
    text = text[:SHOWN_READ]
    for start, _, date in sorted(values.dates_in(text)) if text else ():
        if _kind(text[max(0, start - _CONTEXT):start], -1) is not None:
            return date
    return ""


def near_dates(levels: Iterable[Iterable[str]]) -> tuple[str, ...]:
    """`Document.headline_dates`: the dates in the first NEAR_HEADLINE characters of the text right
    after the headline, read from the texts after its <h1> level by level (`headline.after_headline`'s
    levels, each read only as far as needed), where an article's header shows its date
    (`<h1>…</h1><div class="meta">03.02.2022 15:34</div>`): a publication's or none (`_kind`)."""
    parts, size = [], 0
    for level in levels:
        for text in level:
            parts.append(text)
            size += len(text) + 1
            if size >= NEAR_HEADLINE:
                break
        if size >= NEAR_HEADLINE:
            break
    return tuple(date for _, date in scan(" ".join(parts)[:NEAR_HEADLINE]))


def _kind(before: str, after_headline: int) -> int | None:
    if _COPYRIGHT.search(before) or _UPDATED.search(before):
        return None
    label = _PUBLISHED.search(before)
    if label and label["word"] and _NOT_PUBLICATION.search(before, 0, label.start("word")):
        return None                 # another day's date: `Closing date:`, `Event date`
    if label:
        return LABELLED
    return NEAR if 0 <= after_headline <= NEAR_HEADLINE else OTHER


def shows_date(tag: str, attrs: dict[str, str]) -> bool:
    """Whether an element shows a date as text (see `Document.dated_texts`): the CSS of
    parsers' _DATED_SELECTOR, for a parser without one."""
    cls = attrs.get("class", "").lower()
    return ((tag == "time" and "datetime" not in attrs) or "date" in cls or "time" in cls
            or "publish" in cls or attrs.get("title", "")[:2] in ("19", "20"))


def dated_text(attrs: dict[str, str], text: Callable[[], str]) -> str:
    """The date an element that shows one shows: its title when that is an ISO date, else its text."""
    title = attrs.get("title") or ""
    return title if title[:2] in ("19", "20") else text()


def placed_texts(shown: Iterable[tuple[Callable[[], int], str]]) -> tuple[str, ...]:
    """`Document.dated_texts` from (its place, text) of the elements that show a date, in document
    order: the first DATED_PLACED that are short texts with a year (every date read names one:
    `class="timeline"`, `<span class="time">5 mins</span>`, `2 days ago` show none), folded,
    ordered by place (stable), the first DATED_MAX of them. A place is asked for only for a text
    that is kept."""
    kept: list[tuple[int, str]] = []
    for place, text in islice(shown, DATED_LOOKED):
        if not text or len(text) > DATED_TEXT_MAX * 4:    # a paragraph, however its white space folds
            continue
        text = fold(text)
        if text and len(text) <= DATED_TEXT_MAX and _YEAR.search(text):
            kept.append((place(), text))
            if len(kept) == DATED_PLACED:
                break
    return tuple(text for _, text in sorted(kept, key=lambda pair: pair[0]))[:DATED_MAX]
