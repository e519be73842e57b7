"""Small pure functions that clean one extracted value: text, URL, date, language, number."""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from functools import lru_cache
from typing import Any, Iterator

from spiderduck.core.urls import join
from spiderduck.extract.document import fold

__all__ = ["fold", "text", "join", "absolute_url", "rfc3339", "language", "integer"]


def text(value: Any) -> str:
    """A JSON-LD or attribute value as folded text ('' for anything that is not text)."""
    if isinstance(value, list):
        for item in value:
            found = text(item)
            if found:
                return found
        return ""
    return fold(value) if isinstance(value, str) else ""


# --- URLs -------------------------------------------------------------------------------------

_SKIPPED_SCHEMES = ("data:", "javascript:", "about:", "blob:", "mailto:")


def absolute_url(ref: Any, base: str) -> str:
    """`ref` resolved against `base`, when it names an http(s) resource; else ''.

    Protocol-relative `//host/x` takes the base's scheme; `data:` and script URLs are ignored.
    A page's rules resolve the same references again (its og:image for the image candidates and
    the card's images, its og:video for the video and its source): the last few short ones are
    remembered (MAX_REMEMBERED_URLS of up to MAX_REMEMBERED_URL_CHARS).
    """
    if not isinstance(ref, str):
        return ""
    if len(ref) <= MAX_REMEMBERED_URL_CHARS and len(base) <= MAX_REMEMBERED_URL_CHARS:
        return _remembered(ref, base)
    return _absolute_url(ref, base)


MAX_REMEMBERED_URLS = 512
MAX_REMEMBERED_URL_CHARS = 2_048


def _absolute_url(ref: str, base: str) -> str:
    ref = ref.strip()
    if not ref or ref.lower().startswith(_SKIPPED_SCHEMES):
        return ""
    url = join(base, ref)
    if not url or not url.startswith(("http://", "https://")):
        return ""
    return url


_remembered = lru_cache(maxsize=MAX_REMEMBERED_URLS)(_absolute_url)


# --- dates ------------------------------------------------------------------------------------

# ISO 8601 (`2017-06-29T10:00:00+02:00`, basic `20170629`), and a date written with slashes
# (`2019/04/17`, as Highwire Press citation_* tags and many CMSs write it).
_ISO = re.compile(
    r"(\d{4})(?P<sep>[-/]?)(\d{2})(?P=sep)(\d{2})"
    r"(?:[T\s]+(\d{1,2}):?(\d{2})(?::?(\d{2})(?:[.,](\d+))?)?)?"
    r"\s*(Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$", re.I)
_YEAR = re.compile(r"\d{4}$")
_EPOCH = re.compile(r"-?\d{9,16}(?:\.\d+)?$")
_ENGLISH_MONTHS = ("january february march april may june july august september october november "
                   "december").split()
# Month names (and abbreviations that are no English word) in the languages of Europe's largest
# webs, for dates written for people (`3. März 2021`, `12 de octubre de 2020`, `1er juin 2019`,
# `3 maja 2021`, `3 марта 2021`, `2021. március 3.`), as they are written after a day (Polish,
# Czech, Russian and Finnish in the genitive); else the start of an English month's name (`Sept`,
# `Febr`), never another word (`Mayor`).
_MONTH_NAMES = {name: month for month, names in enumerate((
    "january januar jänner janvier janv enero ene gennaio janeiro januari stycznia styczeń ledna "
    "января январь ocak tammikuuta január",
    "february februar février fevrier févr fevr febrero febbraio fevereiro fev februari lutego luty "
    "února февраля февраль şubat subat helmikuuta február",
    "march märz maerz mär mars marzo março maart mrt marts marca marzec března марта март mart "
    "maaliskuuta március",
    "april avril avr abril abr aprile kwietnia kwiecień dubna апреля апрель nisan huhtikuuta április",
    "may mai mayo maggio maio mei maj maja května мая май mayıs toukokuuta május",
    "june juni juin junio giugno giu junho czerwca czerwiec června июня июнь haziran kesäkuuta június",
    "july juli juillet juil julio luglio lug julho lipca lipiec července июля июль temmuz heinäkuuta "
    "július",
    "august août aout agosto augustus augusti sierpnia sierpień srpna августа август ağustos elokuuta "
    "augusztus",
    "september sept septembre septiembre setiembre settembre setembro września wrzesień září "
    "сентября сентябрь eylül syyskuuta szeptember",
    "october oktober okt octobre octubre ottobre outubro października październik října октября "
    "октябрь ekim lokakuuta október",
    "november novembre noviembre novembro listopada listopad listopadu ноября ноябрь kasım "
    "marraskuuta",
    "december dezember dez décembre decembre déc diciembre dic dicembre dezembro desember grudnia "
    "grudzień prosince декабря декабрь aralık joulukuuta"), 1)
    for name in names.split()}
_MONTH = r"(?<![^\W\d_])[^\W\d_]{3,}"    # a word of letters, in any script
_TEXT_DATE = re.compile(
    rf"(?:(?P<d1>\d{{1,2}})(?:st|nd|rd|th|er|\.)?\s+(?:de\s+)?(?P<m1>{_MONTH})\.?,?\s+(?:de\s+)?(?P<y1>\d{{4}})"
    rf"|(?P<m2>{_MONTH})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y2>\d{{4}})"
    rf"|(?<!\d)(?P<y3>\d{{4}})\.\s+(?P<m3>{_MONTH})\.?\s+(?P<d3>\d{{1,2}})(?!\d)\.?)"
    r"(?:\D{0,5}?(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?\s*(?P<ap>[ap]\.?m\.?)?"
    r"\s*(?P<tz>[+-](?:0\d|1[0-4]):?\d{2}(?![\d:])|[a-z]{1,5}\b)?)?", re.I)
# Zone abbreviations common in published dates (RFC 5322 and North American / European ones).
_ZONES = {"z": 0, "ut": 0, "utc": 0, "gmt": 0, "est": -5, "edt": -4, "cst": -6, "cdt": -5, "mst": -7,
          "mdt": -6, "pst": -8, "pdt": -7, "bst": 1, "cet": 1, "cest": 2, "eet": 2, "eest": 3,
          "ist": 5.5, "jst": 9, "aest": 10, "aedt": 11}
_MIN_YEAR, _MAX_YEAR = 1970, 2100
TEXT_DATE_HOUR = 12


def rfc3339(value: Any, text: bool = False) -> str:
    """A date or time as RFC 3339 in UTC (`2016-05-24T18:00:03Z`); '' when it is not one.

    A value without an offset is taken as UTC. A machine-readable date without a time
    (ISO 8601 `2017-06-29`) is midnight UTC, as ECMAScript and XML Schema read it. A date
    written for people without a time (`June 29, 2017`) has no such convention and is taken
    as noon UTC (`TEXT_DATE_HOUR`): the instant that falls on that calendar day in every time
    zone from UTC-12 to UTC+11, so a preview shows the day the page states wherever it is read.
    `text=True` is for prose (`Aug 14, 2020 · 54 min`): it must name a day, not only a year.
    """
    dt = _parse_date(value, text)
    if dt is None or not _MIN_YEAR <= dt.year <= _MAX_YEAR:
        return ""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    dt = dt.astimezone(timezone.utc)
    millis = f".{dt.microsecond // 1000:03d}" if dt.microsecond else ""
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + millis + "Z"


def _parse_date(value: Any, text: bool = False) -> datetime | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, datetime):
        return value
    if isinstance(value, (int, float)):
        return _from_epoch(float(value))
    if not isinstance(value, str):
        return None
    value = fold(value)
    if not value:
        return None
    try:
        if m := _ISO.match(value):
            return _from_iso(m)
        if text:
            return _text_date(value)
        if _YEAR.match(value):
            return datetime(int(value), 1, 1)
        if _EPOCH.match(value):
            return _from_epoch(float(value))
        if dt := _text_date(value):
            return dt
        return parsedate_to_datetime(value)
    except (ValueError, TypeError, IndexError, OverflowError):
        return None


def _from_epoch(seconds: float) -> datetime | None:
    if abs(seconds) >= 1e11:        # milliseconds
        seconds /= 1000
    try:
        return datetime.fromtimestamp(seconds, timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def _from_iso(m: re.Match[str]) -> datetime:
    year, _, month, day, hour, minute, second, frac, zone = m.groups()
    micro = int((frac or "0")[:6].ljust(6, "0"))
    dt = datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0),
                  int(second or 0), micro)
    if zone:
        z = zone.upper()
        if z in ("Z", "UTC", "GMT"):
            return dt.replace(tzinfo=timezone.utc)
        sign = -1 if z[0] == "-" else 1
        digits = z[1:].replace(":", "")
        offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
        return dt.replace(tzinfo=timezone(sign * offset))
    return dt


def _text_date(value: str) -> datetime | None:
    """The first date written for people in `value` whose month is a month's name; else the
    first written in digits (`_digits_date`)."""
    for m in _TEXT_DATE.finditer(value):
        dt = _from_text(m)
        if dt is not None:
            return dt
    return _digits_date(value)


# Dates written in digits inside a text: year first (`2020-01-13`, `2020.01.13`, `2020/1/13`,
# with a time and zone if any: `2020-01-13 10:05 +01:00`), in Chinese, Japanese or Korean
# (`2020年1月13日`, `2020년 1월 13일`), or day first with dots or dashes, as Europe writes it
# (`13.01.2020`, `13-01-2020`). With slashes the order is the writer's custom (`01/13/2020` in the
# United States, `13/01/2020` elsewhere): such a date is read only when one order is impossible.
_DIGITS_DATE = re.compile(
    r"(?<![\d.])(?:(?P<y>\d{4})(?P<s>[-./])(?P<m>\d{1,2})(?P=s)(?P<d>\d{1,2})"
    r"|(?P<cy>\d{4})\s*[年년]\s*(?P<cm>\d{1,2})\s*[月월]\s*(?P<cd>\d{1,2})\s*[日일]"
    r"|(?P<a>\d{1,2})(?P<t>[-./])(?P<b>\d{1,2})(?P=t)(?P<ey>\d{4}))(?![\d])"
    r"(?:(?:T|\s*@\s*|,?\s+(?:at\s+|um\s+|à\s+|a las\s+|às\s+|alle\s+)?)(?P<h>\d{1,2}):(?P<mi>\d{2})"
    r"(?::(?P<sec>\d{2}))?\s*(?P<tz>Z|UTC|GMT|[+-](?:0?\d|1[0-4])(?:[:.]?\d{2})?)?(?![\w:]))?")


def _digits_date(value: str) -> datetime | None:
    for m in _DIGITS_DATE.finditer(value):
        if (dt := _from_digits(m)) is not None:
            return dt
    return None


def _from_digits(m: re.Match[str]) -> datetime | None:
    if m["y"]:
        year, month, day = int(m["y"]), int(m["m"]), int(m["d"])
    elif m["cy"]:
        year, month, day = int(m["cy"]), int(m["cm"]), int(m["cd"])
    else:
        a, b, year = int(m["a"]), int(m["b"]), int(m["ey"])
        if m["t"] != "/":
            day, month = a, b
        elif (a > 12) == (b > 12):
            return None             # both orders possible (or neither)
        else:
            day, month = (a, b) if a > 12 else (b, a)
    try:
        if m["h"] is None:
            return datetime(year, month, day, TEXT_DATE_HOUR, tzinfo=timezone.utc)
        dt = datetime(year, month, day, int(m["h"]), int(m["mi"]), int(m["sec"] or 0))
    except ValueError:
        return None
    zone = (m["tz"] or "").upper()
    if zone[:1] in ("+", "-"):     # +01:00, +0100, +1, and +5.30 (India, as some CMSs write it)
        hours, _, minutes = zone[1:].replace(".", ":").partition(":")
        if not minutes and len(hours) > 2:
            hours, minutes = hours[:-2], hours[-2:]
        try:
            offset = timedelta(hours=int(hours), minutes=int(minutes or 0))
            return dt.replace(tzinfo=timezone(-offset if zone[0] == "-" else offset))
        except ValueError:          # an offset of a day or more
            return None
    return dt.replace(tzinfo=timezone.utc) if zone else dt


def dates_in(value: str) -> Iterator[tuple[int, int, str]]:
    """Every date written for people in `value` (`_TEXT_DATE`'s, then `_DIGITS_DATE`'s), as
    (start, end, RFC 3339 in UTC) with where it is written; an impossible one (31 February, a
    year outside 1970-2100) is none."""
    for pattern, read in ((_TEXT_DATE, _from_text), (_DIGITS_DATE, _from_digits)):
        for m in pattern.finditer(value):
            if date := _read(m, read):
                yield m.start(), m.end(), date


def _read(m: re.Match[str], read: Any) -> str:
    """RFC 3339 of the date a match of _TEXT_DATE or _DIGITS_DATE writes (`read` reads it), or ''."""
    try:
        dt = read(m)
    except (ValueError, OverflowError):     # 31 February, an offset of a day
        return ""
    return rfc3339(dt) if dt is not None else ""


# What stands before a year that ends a date written with a month's name (`6. Mai `, `May 6th, `,
# `6 de mayo de `): where such a date starts, found from the year back.
_BEFORE_YEAR = re.compile(
    rf"(?:\d{{1,2}}(?:st|nd|rd|th|er|\.)?\s+(?:de\s+)?{_MONTH}\.?,?\s+(?:de\s+)?"
    rf"|{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+)$", re.I)
_BACK = 32     # characters before a year where its date may start


def date_at(value: str, year: int) -> tuple[int, int, str] | None:
    """The date written for people that holds the year at `value[year:year + 4]`, as `dates_in`
    gives it, or None: tried only where such a date can stand (starting at the year, or ending
    with it after a day and month in digits or a month's name), by anchored matches, not a
    search of the text around it."""
    tries: list[tuple[re.Pattern[str], Any, int]] = [(_DIGITS_DATE, _from_digits, year),
                                                    (_TEXT_DATE, _from_text, year)]
    before = value[year - 1:year]
    if before in ("-", ".", "/"):
        tries += [(_DIGITS_DATE, _from_digits, start) for start in range(max(0, year - 6), year - 3)
                  if value[start].isdigit()]
    elif before.isspace() or before == ",":
        if m := _BEFORE_YEAR.search(value, max(0, year - _BACK), year):
            tries.append((_TEXT_DATE, _from_text, m.start()))
    for pattern, read, start in tries:
        m = pattern.match(value, start)
        if m is not None and m.end() > year and (date := _read(m, read)):
            return m.start(), m.end(), date
    return None


def _from_text(m: re.Match[str]) -> datetime | None:
    word = (m["m1"] or m["m2"] or m["m3"]).lower()
    month = _MONTH_NAMES.get(word) or next(
        (i for i, name in enumerate(_ENGLISH_MONTHS, 1) if name.startswith(word)), None)
    if month is None:
        return None
    day, year = int(m["d1"] or m["d2"] or m["d3"]), int(m["y1"] or m["y2"] or m["y3"])
    if m["h"] is None:
        return datetime(year, month, day, TEXT_DATE_HOUR, tzinfo=timezone.utc)
    hour, minute, second = int(m["h"] or 0), int(m["mi"] or 0), int(m["s"] or 0)
    if m["ap"]:
        hour = hour % 12 + (12 if m["ap"][0].lower() == "p" else 0)
    dt = datetime(year, month, day, hour, minute, second)
    zone = (m["tz"] or "").lower()
    if zone[:1] in ("+", "-"):
        digits = zone[1:].replace(":", "")
        offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        return dt.replace(tzinfo=timezone(-offset if zone[0] == "-" else offset))
    if zone in _ZONES:
        return dt.replace(tzinfo=timezone(timedelta(hours=_ZONES[zone])))
    return dt


# --- languages and numbers --------------------------------------------------------------------

_INTEGER = re.compile(r"\s*(\d{1,7})")
_LANG = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]{1,8})*$", re.I)


def language(value: Any) -> str:
    """A BCP 47 language tag (`en`, `pt-BR`); `en_US` becomes `en-US`; '' when not a tag."""
    if not isinstance(value, str):
        return ""
    tag = value.strip().replace("_", "-")
    if not _LANG.match(tag):
        return ""
    primary, _, rest = tag.partition("-")
    return primary.lower() + ("-" + rest if rest else "")


def integer(value: Any) -> int:
    """A non-negative integer from an attribute such as `og:image:width` ('1200', '1200px'); else 0."""
    if isinstance(value, int) and not isinstance(value, bool):
        return max(value, 0)
    if isinstance(value, str):
        m = _INTEGER.match(value)
        if m:
            return int(m.group(1))
    return 0
