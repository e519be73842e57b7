"""spiderduck.core.tweets: twitter-text's own conformance cases for URL extraction."""
from __future__ import annotations

import pytest

from spiderduck.core.tweets import fetchable, urls_in_tweet


@pytest.mark.vectors("testdata", "tweet_urls.json",
                     ids=lambda case: f"{case['section']}: {case['description']}")
def test_twitter_text_conformance(case):
    expected = [e["url"] if isinstance(e, dict) else e for e in case["expected"]]
    assert urls_in_tweet(case["text"]) == expected


def test_urls_in_order():
    text = "read example.com/a then https://t.co/xYz123 and HTTP://Foo.org/b."
    assert urls_in_tweet(text) == ["example.com/a", "https://t.co/xYz123", "HTTP://Foo.org/b"]
    assert urls_in_tweet("no links here") == []


@pytest.mark.parametrize("found, expected", [
    ("example.com/x", "http://example.com/x"),
    ("www.example.com", "http://www.example.com"),
    ("http://example.com/x", "http://example.com/x"),
    ("HTTPS://t.co/abc", "HTTPS://t.co/abc"),
])
def test_fetchable(found, expected):
    assert fetchable(found) == expected
