"""Pacing alone: Retry-After parsing, exponential back-off with jitter, Crawl-delay per host."""
from __future__ import annotations

import dataclasses
import email.utils

import pytest

from spiderduck.core.config import FetcherSettings
from spiderduck.core.fetch import FetchResult
from spiderduck.core.status import Status
from spiderduck.fetcher.pacing import DomainPacing, PacingPolicy, backoff_delay, retry_after_seconds

NOW = 1_700_000_000.0
DEFAULTS = PacingPolicy.from_settings(FetcherSettings())   # a fetcher started with no config file


def answer(code: int, **headers) -> FetchResult:
    return FetchResult(url="http://h.test/", status=Status.OK, http_status=code,
                       headers=tuple((k.replace("_", "-"), v) for k, v in headers.items()))


def http_date(epoch: float) -> str:
    return email.utils.formatdate(epoch, usegmt=True)


@pytest.mark.parametrize("value,date,expected", [
    ("120", None, 120.0),
    (" 0 ", None, 0.0),
    (http_date(NOW + 30), None, 30.0),
    (http_date(NOW - 30), None, 0.0),                 # a date in the past: no wait
    (http_date(NOW + 500), http_date(NOW + 490), 10.0),   # read against the response's Date
    ("soon", None, None), ("-5", None, None), ("1.5", None, None), ("", None, None),
])
def test_retry_after_is_seconds_or_an_http_date(value, date, expected):
    assert retry_after_seconds(value, now_wall=NOW, date=date) == expected


def test_backoff_grows_by_the_factor_caps_and_jitter_only_adds():
    p = dataclasses.replace(DEFAULTS, backoff_base=1, backoff_factor=2, backoff_max=60, backoff_jitter=0.5)
    assert [backoff_delay(p, n, 0.0) for n in range(0, 5)] == [0, 1, 2, 4, 8]
    assert backoff_delay(p, 2, 0.999) < 3 <= backoff_delay(p, 3, 0.0)   # jitter never overtakes
    assert backoff_delay(p, 10, 0.9) == 60
    assert backoff_delay(p, 10_000, 0.5) == 60                          # no overflow


def pacing(**kw) -> DomainPacing:
    return DomainPacing(dataclasses.replace(DEFAULTS, **{"backoff_jitter": 0.0, **kw}), rate=10.0, rng=lambda: 0.0)


def test_errors_back_off_and_a_healthy_answer_resets():
    d = pacing(backoff_base=1, backoff_factor=2)
    assert d.observe(answer(500), now=0, now_wall=NOW) == 1
    assert d.observe(FetchResult(url="u", status=Status.TIMEOUT), now=1, now_wall=NOW) == 2
    assert d.hold_until == 3 and d.interval() == 2 and d.failures == 2
    assert d.earliest(last_start=1) == 3
    assert d.observe(answer(404), now=3, now_wall=NOW) == 0
    assert d.failures == 0 and d.backoff == 0 and d.interval() == 0.1


@pytest.mark.parametrize("code", [429, 503])
def test_retry_after_on_429_and_503_holds_and_is_capped(code):
    d = pacing(backoff_base=0.5, max_retry_after=100)
    assert d.observe(answer(code, retry_after="7"), now=10, now_wall=NOW) == 7
    assert d.hold_until == 17 and "Retry-After 7s" in d.hold_reason
    assert d.observe(answer(code, retry_after="100000"), now=20, now_wall=NOW) == 100


def test_retry_after_is_ignored_on_other_codes_and_back_off_applies_without_it():
    d = pacing(backoff_base=0.5)
    assert d.observe(answer(200, retry_after="60"), now=0, now_wall=NOW) == 0
    assert d.observe(answer(429), now=0, now_wall=NOW) == 0.5


def test_crawl_delay_is_per_host_capped_and_the_largest_applies():
    d = pacing(max_crawl_delay=5)
    d.tell_crawl_delay("a.h.test", 2, now=0)
    d.tell_crawl_delay("b.h.test", 60, now=10)
    d.tell_crawl_delay("c.h.test", None, now=10)
    assert d.crawl_delay == 5 and d.spacing() == 5
    assert d.evict_hosts(now=100, idle_seconds=95) == ["a.h.test"]
    assert sorted(d.hosts()) == ["b.h.test", "c.h.test"]
    d.rate = 0.1
    assert d.spacing() == 10                          # 1/rate when it is longer
