"""How long a record stays fresh, and the validators a re-fetch sends (RFC 9111, RFC 9110 §8.8).

    freshness = Freshness.from_settings(settings)
    expires_at = freshness.expires_at(final_hop, status, fetched_at)
    freshness.is_fresh(record, now)

A record's lifetime comes from its final response, as a shared cache reads it: `s-maxage`, else
`max-age`, else `Expires` less `Date`; `no-store`, `no-cache` and `private` count as 0; the
response's `Age` is already spent. That lifetime is held within [min_recrawl_after,
max_recrawl_after], so an origin can neither make us fetch it on every sighting nor keep a card
for a year. A response that says nothing lasts `recrawl_after`. A failure that says more about the
network than about the page (DNS, connection, timeout) or a 5xx lasts `recrawl_failed_after`,
whatever its headers say. Records written before expires_at existed keep the old rule.
"""
from __future__ import annotations

import email.utils
import re
from dataclasses import dataclass
from datetime import datetime, timezone

from spiderduck.core.fetch import FetchResult
from spiderduck.core.record import UrlRecord
from spiderduck.core.status import TRANSIENT, Status

MAX_ETAG_CHARS = 1024      # a longer ETag is not kept (a validator cut short would never match)
_ETAG = re.compile(r'^(W/)?"[\x21\x23-\x7e\x80-\xff]*"$')   # RFC 9110 §8.8.3 entity-tag
_DIRECTIVE = re.compile(r'([!#$%&\'*+\-.^_`|~0-9A-Za-z]+)(?:\s*=\s*("[^"]*"|[^,\s]*))?')


def _http_date(value: str | None) -> float | None:
    """Epoch seconds of an HTTP-date (any of RFC 9110's three forms), or None."""
    if not value:
        return None
    try:
        dt = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        return dt.timestamp()
    except (OverflowError, OSError, ValueError):
        return None


def _seconds(value: str | None) -> int | None:
    """A delta-seconds value (RFC 9111 §1.2.2): digits only; huge is as good as forever."""
    if value is None:
        return None
    value = value.strip('"')
    if not value.isascii() or not value.isdigit():
        return None
    return min(int(value[:12]), 2**31)


def cache_directives(value: str | None) -> dict[str, str | None]:
    """Cache-Control's directives, names lower-cased; the first of a repeated name counts."""
    out: dict[str, str | None] = {}
    if not value:
        return out
    # One directive per comma-separated part, each matched whole: linear in the header's length
    # (a single regex over the whole value backtracked cubically on runs of letters and spaces).
    for part in value[:4096].split(","):
        m = _DIRECTIVE.fullmatch(part.strip())
        if m is not None:
            out.setdefault(m.group(1).lower(), m.group(2))
    return out


def stated_lifetime(response: FetchResult, fetched_at: float) -> float | None:
    """Seconds the response says it stays fresh, counted from `fetched_at`; None when it says
    nothing (RFC 9111 §4.2.1, as a shared cache)."""
    directives = cache_directives(response.header("cache-control"))
    if {"no-store", "no-cache", "private"} & directives.keys():
        lifetime: float | None = 0
    elif (s := _seconds(directives.get("s-maxage"))) is not None:
        lifetime = s
    elif (s := _seconds(directives.get("max-age"))) is not None:
        lifetime = s
    elif (expires := response.header("expires")) is not None:
        at = _http_date(expires)
        date = _http_date(response.header("date")) or fetched_at
        lifetime = 0 if at is None else max(0.0, at - date)     # an invalid Expires is the past
    else:
        return None
    age = _seconds(response.header("age")) or 0
    return max(0.0, lifetime - age)


def etag(response: FetchResult) -> str:
    """The response's ETag as sent (weak or strong), or "" when it is missing or malformed."""
    value = (response.header("etag") or "").strip()
    if not value or len(value) > MAX_ETAG_CHARS or not _ETAG.match(value):
        return ""
    return value


def last_modified(response: FetchResult) -> float:
    """Last-Modified in epoch seconds, or 0 when it is missing or not a date."""
    at = _http_date(response.header("last-modified"))
    return at if at is not None and at > 0 else 0.0


def http_date(epoch: float) -> str:
    """An IMF-fixdate, as If-Modified-Since wants it."""
    return email.utils.format_datetime(datetime.fromtimestamp(int(epoch), timezone.utc), usegmt=True)


@dataclass(frozen=True)
class Validators:
    """What a conditional re-fetch sends (RFC 9110 §13.1): the stored ETag and Last-Modified.

    They travel as text (FetchRequest.if_none_match, .if_modified_since), so `headers` admits
    only a well-formed entity-tag and HTTP-date: a caller cannot put anything else on the wire."""
    if_none_match: str = ""          # an entity-tag, as the origin sent it
    if_modified_since: str = ""      # an HTTP-date

    @classmethod
    def of(cls, record: UrlRecord) -> "Validators":
        return cls(if_none_match=record.etag,
                   if_modified_since=http_date(record.last_modified) if record.last_modified else "")

    def __bool__(self) -> bool:
        return bool(self.if_none_match or self.if_modified_since)

    def headers(self) -> dict[str, str]:
        out = {}
        etag_value = self.if_none_match.strip()
        if etag_value and len(etag_value) <= MAX_ETAG_CHARS and _ETAG.match(etag_value):
            out["If-None-Match"] = etag_value
        if self.if_modified_since and (at := _http_date(self.if_modified_since)) is not None and at > 0:
            out["If-Modified-Since"] = http_date(at)
        return out


@dataclass(frozen=True)
class Freshness:
    recrawl_after: float           # a response that states no lifetime
    recrawl_failed_after: float    # a TRANSIENT failure or a 5xx
    min_recrawl_after: float       # the bounds of a lifetime the origin states
    max_recrawl_after: float

    @classmethod
    def from_settings(cls, settings) -> "Freshness":
        return cls(recrawl_after=settings.recrawl_after,
                   recrawl_failed_after=settings.scheduler.recrawl_failed_after,
                   min_recrawl_after=settings.min_recrawl_after,
                   max_recrawl_after=settings.max_recrawl_after)

    def failed(self, status: Status, http_status: int) -> bool:
        """No answer, a server error, or a wall in front of the page (INTERSTITIAL), which a
        challenge passed or a consent given elsewhere may lift: tried again sooner."""
        return status in TRANSIENT or status is Status.INTERSTITIAL or http_status >= 500

    def lifetime(self, response: FetchResult | None, status: Status, http_status: int,
                 fetched_at: float) -> float:
        if self.failed(status, http_status):
            return self.recrawl_failed_after
        stated = stated_lifetime(response, fetched_at) if response is not None else None
        if stated is None:
            return self.recrawl_after
        return min(max(stated, self.min_recrawl_after), self.max_recrawl_after)

    def expires_at(self, response: FetchResult | None, status: Status, http_status: int,
                   fetched_at: float) -> float:
        return fetched_at + self.lifetime(response, status, http_status, fetched_at)

    def expiry(self, record: UrlRecord) -> float:
        if record.expires_at:
            return record.expires_at
        # Written before records carried expires_at: the windows alone.
        window = (self.recrawl_failed_after if self.failed(record.status, record.http_status)
                  else self.recrawl_after)
        return record.fetched_at + window

    def is_fresh(self, record: UrlRecord, now: float) -> bool:
        return now < self.expiry(record)

    def servable_stale(self, record: UrlRecord, now: float, serve_stale_for: float) -> bool:
        """An OK record expired less than `serve_stale_for` ago (a failure is never served stale:
        who asks again wants the retry)."""
        return record.ok and self.expiry(record) <= now < self.expiry(record) + serve_stale_for
