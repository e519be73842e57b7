"""spiderduck.fetcher.robots.rules: Google's reference answers, and our interface on top of protego."""
from __future__ import annotations

import pytest

from spiderduck.fetcher.robots.rules import RobotsRules

UA = "SpiderDuck/0.1.0 (+https://example.org/spiderduck)"


def _check(case):
    rules = RobotsRules.parse(case["robots_txt"])
    assert rules.allowed(case["url"], case["user_agent"]) is case["allowed"]


@pytest.mark.vectors("testdata", "robots_google.json", ids=lambda case: case["name"])
def test_google_robots_cases(case):
    _check(case)


@pytest.mark.vectors("testdata", "robots_google_derived.json", ids=lambda case: case["name"])
def test_google_robots_line_endings(case):
    _check(case)


def test_our_full_user_agent_matches_its_group():
    rules = RobotsRules.parse(
        "User-agent: *\nDisallow: /\n\nUser-agent: spiderduck\nDisallow: /private\n")
    assert rules.allowed("https://example.com/page", UA)
    assert not rules.allowed("https://example.com/private/x", UA)
    assert not rules.allowed("https://example.com/page", "OtherBot/2.0")
    # exact token match: a group for "spider" is not ours
    rules = RobotsRules.parse("User-agent: spider\nDisallow: /\n")
    assert rules.allowed("https://example.com/page", UA)


def test_crawl_delay():
    rules = RobotsRules.parse(
        "User-agent: SpiderDuck\nCrawl-delay: 2.5\nDisallow: /x\n\n"
        "User-agent: Slurp\nCrawl-delay: 10\n\n"
        "User-agent: *\nCrawl-delay: 1\nDisallow: /tmp\n")
    assert rules.crawl_delay(UA) == 2.5
    assert rules.crawl_delay("Slurp") == 10.0   # not overwritten by the "*" line below it
    assert rules.crawl_delay("Other") == 1.0
    # Slurp and * share one group for allow/disallow (RFC 9309, Google)
    assert not rules.allowed("https://example.com/tmp/a", "Slurp")
    assert RobotsRules.parse("User-agent: *\nCrawl-delay: soon\n").crawl_delay(UA) is None
    assert RobotsRules.parse("User-agent: *\nCrawl-delay: -1\n").crawl_delay(UA) is None
    assert RobotsRules.allow_all().crawl_delay(UA) is None


def test_allow_all_and_disallow_all():
    assert RobotsRules.allow_all().allowed("https://example.com/anything", UA)
    assert not RobotsRules.disallow_all().allowed("https://example.com/anything", UA)
    assert not RobotsRules.disallow_all().allowed("https://example.com/", UA)


def test_bytes_with_bom_and_crlf():
    body = b"\xef\xbb\xbfUser-agent: *\r\nDisallow: /private\r\n"
    rules = RobotsRules.parse(body)
    assert not rules.allowed("https://example.com/private/a", UA)
    assert rules.allowed("https://example.com/public", UA)


def test_non_ascii_patterns_match_encoded_urls():
    rules = RobotsRules.parse("User-agent: *\nDisallow: /café\n".encode())
    assert not rules.allowed("https://example.com/caf%C3%A9/menu", UA)
    assert not rules.allowed("https://example.com/caf%c3%a9/menu", UA)  # hex case is equivalent
    assert rules.allowed("https://example.com/cafe", UA)


def test_invalid_utf8_is_escaped_byte_for_byte():
    rules = RobotsRules.parse(b"User-agent: *\nDisallow: /\xff\n")
    assert not rules.allowed("https://example.com/%FF", UA)
    assert rules.allowed("https://example.com/%EF%BF%BD", UA)
