"""Every value a page offers for each field of a preview, in the order its rule weighs them.

    offers(s) -> ((field, (Candidate(source, value, reason), ...)), ...)   PROVENANCE_FIELDS' order

ExplainUrl's view of the extraction (src/spiderduck/extract/explain.py says why each lost). Each field
walks the same sources its rule walks (rules, publisher, authors, dates, media), in the same
order, and gives each value the rule would refuse its reason (`reason`; '' for one it would
take), so the first offer with no reason is the rule's winner: tests/extract/test_offers.py
holds the two together on the corpus. A value is given once per source, cut at VALUE_CHARS, and
a field's first MAX_OFFERS are given.
"""
from __future__ import annotations

import json
from typing import Any, Iterator
from urllib.parse import urlsplit

from spiderduck.core.record import Candidate
from spiderduck.extract import authors, date_text, dates, media, publisher, rules, values
from spiderduck.extract.sources import Sources, ld as _ld
from spiderduck.extract.typography import typeset

VALUE_CHARS = 300          # of an offered value shown; a description's whole text is in the record
MAX_OFFERS = 16            # offers shown per field (a page may name dozens of icons)

NOT_TEXT = "empty once its markup and spacing are cleaned"
NOT_DATE = "not a date (or outside 1970-2100)"
NOT_LANGUAGE = "not a language tag"
NOT_URL = "not an http(s) URL"
DOMAIN_ONLY = "only a domain name: a name the site states is preferred"
SITE_NOT_PERSON = "names the site or its publisher, not a person"
NOT_A_NAME = "not a person's name (a placeholder, a URL, a date or a sentence)"
ORGANISATION = "an organisation: the person a later source names is preferred"
NOT_A_PERSON = "not a person's name, after the organisation the page names as its author"
UPDATE_DATE = "a date the page shows as its last update (or its copyright), not its publication"
NOT_URL_DAY = "shown as text, but not on the day the page's URL names"
YEAR_ALONE = "a year alone names no day: only when nothing else names one"
TOO_LATE = "after the page's own modification, or in the future: not its publication"
NOT_IMAGE = "a video or sound file, not an image"
PIXEL = "a tracking pixel or spacer (its URL says so)"
BEYOND = f"beyond the first {media.MAX_IMAGE_CANDIDATES} images the page offers"


def offers(s: Sources) -> tuple[tuple[str, tuple[Candidate, ...]], ...]:
    return tuple((name, _once(walk(s))) for name, walk in _FIELDS)


def _once(found: Iterator[Candidate]) -> tuple[Candidate, ...]:
    """Each (source, value) once, in order, values cut to VALUE_CHARS, at most MAX_OFFERS."""
    out, seen = [], set()
    for c in found:
        if len(out) == MAX_OFFERS:
            break
        if c.value and (c.source, c.value) not in seen:
            seen.add((c.source, c.value))
            out.append(Candidate(c.source, cut(c.value), c.reason))
    return tuple(out)


def cut(value: str) -> str:
    """A value as an offer shows it: at most VALUE_CHARS characters."""
    return value if len(value) <= VALUE_CHARS else value[:VALUE_CHARS - 1] + "…"


def _text(source: str, raw: Any) -> Candidate:
    raw = values.text(raw)
    text = typeset(raw)
    return Candidate(source, text or raw, "" if text else NOT_TEXT)


def _shown(value: Any) -> str:
    """A raw value as text to show (JSON for a structure)."""
    if isinstance(value, str):
        return values.fold(value)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return ""


# --- text fields (rules) ----------------------------------------------------------------------

def _title(s: Sources) -> Iterator[Candidate]:
    for key in ("og:title", "twitter:title"):
        yield _text(key, s.doc.meta(key))
    if s.doc.title:
        yield _text("<title>", rules.page_title(s) or s.doc.title)
    yield _text("json-ld:headline", _ld(s, "headline"))
    for key in ("dc.title", "dcterms.title"):
        yield _text(key, s.doc.meta(key))
    yield _text("<h1>", s.doc.h1)


def _description(s: Sources) -> Iterator[Candidate]:
    for key in ("og:description", "twitter:description", "description"):
        yield _text(key, s.doc.meta(key))
    yield _text("json-ld:description", _ld(s, "description"))
    for key in ("dc.description", "dcterms.description"):
        yield _text(key, s.doc.meta(key))
    yield _text("<p>", s.doc.paragraph)


def _lang(s: Sources) -> Iterator[Candidate]:
    raws = [("<html lang>", s.doc.lang)] + [(key, s.doc.meta(key)) for key in rules._LANG_METAS]
    raws += [("json-ld:inLanguage", _ld(s, "inLanguage"))]
    raws += [(key, s.doc.meta(key)) for key in ("dc.language", "dcterms.language")]
    for source, raw in raws:
        tag = values.language(raw)
        yield Candidate(source, tag or values.fold(raw or ""), "" if tag else NOT_LANGUAGE)


def _canonical_url(s: Sources) -> Iterator[Candidate]:
    refs = [("og:url", s.doc.meta("og:url"))]
    refs += [("<link rel=canonical>", link.href) for link in s.doc.links if "canonical" in link.rel]
    for source, ref in refs:
        url = values.absolute_url(ref, s.base)
        reason = rules.canonical_refusal(url, s.url) if url else NOT_URL
        yield Candidate(source, url or values.fold(ref or ""), reason)
    yield Candidate("derived", s.url)


# --- facts about the work (publisher, authors, dates) ----------------------------------------

def _site_name(s: Sources) -> Iterator[Candidate]:
    for name, source in publisher._site_names(s, True):
        if name:
            kept = publisher._NAME_ASIDE.sub("", name) or name
            yield Candidate(source, kept, DOMAIN_ONLY if publisher._DOMAIN.match(name) else "")


def _author(s: Sources) -> Iterator[Candidate]:
    chosen = authors.author_from(s)     # an organisation's turn depends on what comes after it
    reasons = {authors.NOT_A_PERSON: NOT_A_PERSON, authors.SITE: SITE_NOT_PERSON}
    for source, found, raw, verdict in authors.judged(s):
        value = authors._byline(found)
        if verdict == authors.ORGANISATION:     # a JSON-LD Organization, an agency (authors.author_from)
            yield Candidate(source, value, "" if (value, source) == chosen else ORGANISATION)
        elif verdict == authors.NO_NAME:
            yield Candidate(source, "; ".join(filter(None, map(values.text, raw))), NOT_A_NAME)
        else:
            yield Candidate(source, value, reasons.get(verdict, ""))


def _published_time(s: Sources) -> Iterator[Candidate]:
    day, latest = dates.url_day(s.url), dates._latest(s)
    years: list[Candidate] = []          # a year alone is offered last (dates._first_date)
    offered: list[Candidate] = []
    for found in (dates._stated_dates(s, "datePublished", dates._PUBLISHED_META, modified=False),
                  dates._uploaded(s), dates._body_times(s, day), dates._created(s)):
        for raw, source in found:
            if raw in (None, "", [], {}):
                continue
            date = values.rfc3339(raw) if raw else ""
            too_late = bool(date) and source == "<time>" and date > latest
            if date and not too_late and isinstance(raw, str) and dates._YEAR_ALONE.match(raw):
                years.append(Candidate(source, date))
                continue
            offered.append(Candidate(source, date or _shown(raw),
                                     NOT_DATE if not date else TOO_LATE if too_late else ""))
    for text in s.doc.dated_texts():
        if not date_text.shown_date(text) and next(values.dates_in(text), None):
            offered.append(Candidate("text", values.fold(text), UPDATE_DATE))
    offered += [Candidate(source, date, "" if not day or dates._on_day(date, day) else NOT_URL_DAY)
                for date, source in dates._shown(s, latest)]
    if day:
        offered.append(Candidate("derived", f"{day}T{values.TEXT_DATE_HOUR:02d}:00:00Z"))
    taken = any(not c.reason for c in offered)
    yield from offered
    for i, year in enumerate(years):     # the first, when nothing else names a day
        yield Candidate(year.source, year.value, YEAR_ALONE if taken or i else "")


# --- media ------------------------------------------------------------------------------------

def _image(s: Sources) -> Iterator[Candidate]:
    seen: set[str] = set()
    kept = 0
    for image, source in media._images(s):
        url = image.url
        if not url or url in seen:
            continue
        seen.add(url)
        if media._NOT_IMAGE.search(url):
            reason = NOT_IMAGE
        elif media._is_pixel(url):
            reason = PIXEL
        elif media._tiny(image):
            reason = (f"stated {image.width or '?'}×{image.height or '?'} px: under "
                      f"{media.MIN_IMAGE_SIZE} px, an icon or a spacer")
        elif kept >= media.MAX_IMAGE_CANDIDATES:
            reason = BEYOND
        else:
            reason, kept = "", kept + 1
        yield Candidate(source, url, reason)


def _favicon(s: Sources) -> Iterator[Candidate]:
    icons = []
    for order, link in enumerate(s.doc.links):
        kind = next((k for k, rel in enumerate(media._ICON_RELS) if rel in link.rel), None)
        url = values.absolute_url(link.href, s.base) if kind is not None else ""
        if url:
            icons.append(((media._icon_size_rank(link.sizes), kind, order), url))
    for (_, kind, _), url in sorted(icons):
        yield Candidate(media._ICON_SOURCES[kind], url)
    parts = urlsplit(s.url)
    yield Candidate("/favicon.ico", f"{parts.scheme}://{parts.netloc}/favicon.ico")


_FIELDS = (("title", _title), ("description", _description), ("image", _image),
           ("site_name", _site_name), ("author", _author), ("published_time", _published_time),
           ("canonical_url", _canonical_url), ("lang", _lang), ("favicon", _favicon))
