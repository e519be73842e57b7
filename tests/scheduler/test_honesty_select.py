"""Which crawls get a browser's look in triggered mode (issue 43, scheduler.honesty_select): each
reason the first fetch can give, and none for an ordinary page; and the budget's share per minute."""
from __future__ import annotations

import pytest

from spiderduck.core.fetch import FetchResult
from spiderduck.core.record import HTTP_REDIRECT, META_REFRESH, PageMetadata, UrlRecord
from spiderduck.core.status import Status
from spiderduck.scheduler.honesty_select import Budget, eligible, reasons
from spiderduck.scheduler.task import CrawlTask, Outcome, Resolution

CARD = b'<html><head><meta property="og:title" content="A card"></head><body>Text</body></html>'


def hop(url, status=200, headers=(), body=CARD):
    return FetchResult(url=url, status=Status.OK, http_status=status, headers=tuple(headers), body=body)


def outcome(*hops, kinds=(), page=None, status=Status.OK, resolution=Resolution.CRAWLED):
    task = CrawlTask(submitted=hops[0].url, received_at=0.0, url=hops[0].url, hops=hops, hop_kinds=kinds)
    return Outcome(task, UrlRecord(url=hops[0].url, status=status, final_url=hops[-1].url), resolution,
                   key=hops[-1].url, page=page or PageMetadata(title="A card"))


def why(o):
    return reasons(o, refresh_max_delay=5.0)


def test_an_ordinary_page_gives_no_reason():
    assert why(outcome(hop("http://a.test/x"))) == ()
    # a redirect within the registrable domain, a Vary on the encoding, a same-site claim: none
    assert why(outcome(hop("http://a.test/x", 301, [("Location", "http://m.a.test/x")]),
                       hop("http://m.a.test/x", headers=[("Vary", "Accept-Encoding")]), kinds=(HTTP_REDIRECT,),
                       page=PageMetadata(claimed_url="https://www.a.test/x", site_name="A News"))) == ()


@pytest.mark.parametrize("made, reason", [
    (lambda: outcome(hop("http://s.test/1", 301), hop("http://b.test/")), "cross_domain_hop"),
    (lambda: outcome(hop("http://a.test/1"), hop("http://a.test/2"), kinds=(META_REFRESH,)), "refresh"),
    (lambda: outcome(hop("http://a.test/", body=CARD.replace(b"<head>", b'<head><meta http-equiv="refresh" '
                                                                  b'content="0; url=http://b.test/">'))), "refresh"),
    (lambda: outcome(hop("http://a.test/"), page=PageMetadata(script_redirect="http://b.test/")), "script_redirect"),
    (lambda: outcome(hop("http://a.test/", headers=[("Vary", "Accept-Encoding, User-Agent")])), "vary"),
    (lambda: outcome(hop("http://a.test/", headers=[("Vary", "cookie")])), "vary"),
    (lambda: outcome(hop("http://a.test/1", 302, [("Set-Cookie", "s=1")]), hop("http://a.test/2")),
     "cookie_on_redirect"),
    (lambda: outcome(hop("http://a.test/"), page=PageMetadata(claimed_url="https://bank.test/")), "claimed_domain"),
    (lambda: outcome(hop("http://a.test/"), page=PageMetadata(site_name="bank.test")), "claimed_domain"),
    (lambda: outcome(hop("http://a.test/"), status=Status.INTERSTITIAL), "interstitial"),
])
def test_each_reason_to_look(made, reason):
    assert reason in why(made())


def test_only_a_crawl_the_origin_answered_is_eligible():
    assert eligible(outcome(hop("http://a.test/")))
    assert not eligible(outcome(hop("http://a.test/"), resolution=Resolution.FRESH))
    refused = FetchResult(url="http://a.test/", status=Status.ROBOTS_DISALLOWED)
    assert not eligible(outcome(refused))
    # a shortener that answered, then a final hop that did not: nothing to weigh
    timed_out = FetchResult(url="http://b.test/", status=Status.TIMEOUT)
    assert not eligible(outcome(hop("http://s.test/1", 301), timed_out))
    # a 304 to a re-fetch: the stored record and its verdict stand
    assert not eligible(outcome(hop("http://a.test/", 304), resolution=Resolution.REVALIDATED))


def test_the_budget_is_a_share_of_the_minutes_crawls():
    now = [0.0]
    budget = Budget(0.1, clock=lambda: now[0])
    budget.crawled()
    assert budget.admit()                     # the first due URL of a quiet minute
    admitted = 0
    for _ in range(99):
        now[0] += 0.1
        budget.crawled()
        admitted += budget.admit()
    assert admitted == 9                      # 10 of 100 in the minute, the first among them
    now[0] += 61                              # a minute later the window is empty again
    budget.crawled()
    assert budget.admit()


def test_a_zero_budget_checks_nothing():
    budget = Budget(0.0)
    budget.crawled()
    assert not budget.admit()
