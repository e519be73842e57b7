"""Canonical guards (rules.canonical_url): a deeper page's claim to be its site's root, or another
site's page, is not taken as its canonical URL."""
from __future__ import annotations

import pytest

from spiderduck.extract import extract_page
from support.extraction import EXTRACTION


def canonical(page_url: str, og_url: str = "", link: str = "") -> str:
    head = (f'<meta property="og:url" content="{og_url}">' if og_url else "") + \
           (f'<link rel="canonical" href="{link}">' if link else "")
    page = f"<html><head>{head}</head><body></body></html>".encode()
    return extract_page(page, page_url, **EXTRACTION).canonical_url


@pytest.mark.parametrize("page, og_url, link, expected", [
    # the home page for an article: a template's default, never believed
    ("https://news.test/2026/11/story", "https://news.test/", "", ""),
    ("https://news.test/2026/11/story", "https://news.test", "", ""),
    ("https://news.test/story?id=7", "https://www.news.test/", "", ""),
    # ... and the other declaration is used instead when it is plausible
    ("https://news.test/2026/11/story", "https://news.test/", "https://news.test/2026/11/story?amp=0",
     "https://news.test/2026/11/story?amp=0"),
    # a root page may name any URL, its own root included
    ("https://news.test/", "https://news.test/", "", "https://news.test/"),
    ("https://news.test/", "https://other.test/welcome", "", "https://other.test/welcome"),
    # the same site: another host of one registrable domain, another path, a query
    ("https://m.news.test/a/b", "https://www.news.test/a/b-full", "", "https://www.news.test/a/b-full"),
    ("https://news.test/a/b", "https://news.test/a/b?page=1", "", "https://news.test/a/b?page=1"),
    # another registrable domain at another path: a syndication source, or a hostile claim
    ("https://copies.test/wire/123", "https://original.test/2026/the-story", "", ""),
    ("https://evil.test/login", "", "https://bank.test/secure/login", ""),
    # another registrable domain at the same path: the page moved (a custom domain, a new TLD)
    ("https://blog.host.test/p/slug", "https://writer.test/p/slug", "", "https://writer.test/p/slug"),
    ("https://site.co.uk/2026/01/02/x/", "https://site.com/2026/01/02/x", "", "https://site.com/2026/01/02/x"),
    # a relative canonical is resolved against the page
    ("https://news.test/a/b", "", "/a/b/", "https://news.test/a/b/"),
    ("https://news.test/a/b", "", "/", ""),
])
def test_canonical_guards(page, og_url, link, expected):
    assert canonical(page, og_url, link) == expected


def test_a_canonical_without_a_host_is_not_believed():
    assert canonical("https://news.test/a/b", "mailto:x@news.test") == ""
