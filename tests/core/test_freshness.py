"""A record's lifetime, from its final response's caching headers within the configured bounds;
the validators kept for a re-fetch."""
from __future__ import annotations

import pytest

from spiderduck.core import freshness
from spiderduck.core.fetch import FetchResult
from spiderduck.core.freshness import Freshness
from spiderduck.core.record import UrlRecord
from spiderduck.core.status import Status

F = Freshness(recrawl_after=7 * 86400, recrawl_failed_after=3600, min_recrawl_after=600,
              max_recrawl_after=30 * 86400)
AT = 1_700_000_000.0
DATE = "Tue, 14 Nov 2023 22:13:20 GMT"          # AT as an HTTP-date


def response(*headers: tuple[str, str], http_status=200, status=Status.OK) -> FetchResult:
    return FetchResult("http://a.test/", status, http_status, headers=tuple(headers))


def lifetime(*headers, http_status=200, status=Status.OK) -> float:
    return F.lifetime(response(*headers, http_status=http_status, status=status), status, http_status, AT)


def test_the_http_date_fixture_is_the_epoch_it_stands_for():
    assert freshness.http_date(AT) == DATE


@pytest.mark.parametrize("headers,seconds", [
    ((), 7 * 86400),                                                       # says nothing
    ((("Cache-Control", "max-age=7200"),), 7200),
    ((("Cache-Control", "public, max-age=7200, s-maxage=9000"),), 9000),    # a shared cache's own first
    ((("cache-control", "S-MaxAge=9000"),), 9000),                         # names are case-blind
    ((("Cache-Control", 'max-age="7200"'),), 7200),                        # quoted, as some send it
    ((("Cache-Control", "max-age=60"),), 600),                             # held at min_recrawl_after
    ((("Cache-Control", "max-age=0"),), 600),
    ((("Cache-Control", "no-cache"),), 600),
    ((("Cache-Control", "private, max-age=86400"),), 600),                 # not for a shared cache
    ((("Cache-Control", "max-age=86400, no-store"),), 600),
    ((("Cache-Control", "max-age=31536000, immutable"),), 30 * 86400),      # held at max_recrawl_after
    ((("Cache-Control", "max-age=" + "9" * 400),), 30 * 86400),            # endless digits
    ((("Cache-Control", "max-age=7200"), ("Age", "3600")), 3600),          # a CDN spent part of it
    ((("Cache-Control", "max-age=7200"), ("Age", "99999999")), 600),
    ((("Expires", "Wed, 15 Nov 2023 22:13:20 GMT"), ("Date", DATE)), 86400),
    ((("Expires", "Wed, 15 Nov 2023 22:13:20 GMT"),), 86400),              # no Date: from the fetch
    ((("Expires", "0"),), 600),                                            # invalid: already expired
    ((("Expires", "Thu, 01 Jan 1970 00:00:00 GMT"),), 600),
    ((("Cache-Control", "max-age=7200"), ("Expires", "0")), 7200),         # max-age wins over Expires
    ((("Cache-Control", "max-age=abc"),), 7 * 86400),                      # malformed: says nothing
    ((("Cache-Control", "max-age=-5"),), 7 * 86400),
    ((("Cache-Control", ",,=,;max-age"),), 7 * 86400),
    ((("Cache-Control", "x" * 100_000 + ", max-age=7200"),), 7 * 86400),   # only the first 4 KiB read
    ((("Cache-Control", "a" * 2048 + " " * 2047 + ";"),), 7 * 86400),       # no backtracking: minutes once
    ((("Cache-Control", "max-age=7200" + " " * 4000 + ","),), 7200),
])
def test_the_lifetime_is_the_origins_within_bounds(headers, seconds):
    assert lifetime(*headers) == seconds


@pytest.mark.parametrize("status,http_status", [
    (Status.CONNECTION_ERROR, 0), (Status.TIMEOUT, 0), (Status.DNS_ERROR, 0), (Status.HTTP_ERROR, 503),
    (Status.INTERSTITIAL, 200), (Status.INTERSTITIAL, 403)])        # a wall may be gone soon
def test_failures_last_recrawl_failed_after_whatever_the_headers(status, http_status):
    assert lifetime(("Cache-Control", "max-age=86400"), status=status, http_status=http_status) == 3600


def test_a_404_follows_its_headers_like_any_answer():
    assert lifetime(("Cache-Control", "max-age=7200"), status=Status.HTTP_ERROR, http_status=404) == 7200
    assert F.expires_at(None, Status.ROBOTS_DISALLOWED, 0, AT) == AT + 7 * 86400


@pytest.mark.parametrize("value,kept", [
    ('"abc"', '"abc"'), ('W/"v1"', 'W/"v1"'), ('  "x"  ', '"x"'), ('""', '""'),
    ("abc", ""), ('"a"b"', ""), ('W/ "x"', ""), ('"' + "a" * 2000 + '"', ""), ('"caf\udce9"', ""),
])
def test_an_etag_is_kept_as_sent_or_not_at_all(value, kept):
    assert freshness.etag(response(("ETag", value))) == kept


@pytest.mark.parametrize("value,epoch", [
    (DATE, AT), ("Tuesday, 14-Nov-23 22:13:20 GMT", AT), ("Tue Nov 14 22:13:20 2023", AT),
    ("yesterday", 0.0), ("", 0.0), ("Thu, 01 Jan 1970 00:00:00 GMT", 0.0), ("Mon, 99 Zzz 99999 99:99:99", 0.0),
])
def test_last_modified_is_read_in_any_http_date_form(value, epoch):
    assert freshness.last_modified(response(("Last-Modified", value))) == epoch


def test_a_record_is_fresh_until_its_expiry():
    rec = UrlRecord(url="http://a.test/", status=Status.OK, fetched_at=AT, expires_at=AT + 60)
    assert F.is_fresh(rec, AT + 59.9) and not F.is_fresh(rec, AT + 60)


def test_a_record_from_before_expiry_keeps_the_old_windows():
    rec = UrlRecord(url="http://a.test/", status=Status.OK, fetched_at=AT)
    assert F.is_fresh(rec, AT + 7 * 86400 - 1) and not F.is_fresh(rec, AT + 7 * 86400)
    down = UrlRecord(url="http://a.test/", status=Status.TIMEOUT, fetched_at=AT)
    assert F.is_fresh(down, AT + 3599) and not F.is_fresh(down, AT + 3600)


def test_validators_come_from_the_record_and_only_well_formed_ones_are_sent():
    rec = UrlRecord(url="http://a.test/", status=Status.OK, etag='W/"v1"', last_modified=AT)
    sent = freshness.Validators.of(rec)
    assert sent == freshness.Validators('W/"v1"', DATE) and sent
    assert sent.headers() == {"If-None-Match": 'W/"v1"', "If-Modified-Since": DATE}
    assert not freshness.Validators.of(UrlRecord(url="http://a.test/", status=Status.OK))
    hostile = freshness.Validators('"x"\r\nX-Injected: 1', "Tue, 14 Nov 2023 22:13:20 GMT\r\nX: 1")
    assert hostile.headers() == {"If-Modified-Since": DATE}     # the date is written anew, never echoed
    assert freshness.Validators("", "Tuesday, 14-Nov-23 22:13:20 GMT").headers() == {"If-Modified-Since": DATE}
