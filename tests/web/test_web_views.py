"""What a page may load or link: http(s) URLs as a browser parses them (WHATWG), so the CSP
allows exactly the origin the browser will load from."""
from __future__ import annotations

import pytest

from web.views import origin_of, web_url


@pytest.mark.parametrize("url, origin, href", [
    ("https://x.test:8443/a?b", "https://x.test:8443", "https://x.test:8443/a?b"),
    ("HTTP://Ex.COM:80/p", "http://ex.com", "http://ex.com/p"),
    # A backslash is a slash to a browser: the host is a.com, not b.com (urlsplit says b.com).
    ("http://a.com\\@b.com/", "http://a.com", "http://a.com/@b.com/"),
    ("http://[::1]:8080/", "http://[::1]:8080", "http://[::1]:8080/"),
    ("http://bücher.example/", "http://xn--bcher-kva.example", "http://xn--bcher-kva.example/"),
    ("javascript:alert(1)", "", ""),
    ("data:image/png;base64,AA", "", ""),
    ("//evil.com/x", "", ""),
    ("", "", ""),
    ("http://exa mple.com/", "", ""),
])
def test_only_http_urls_with_a_plain_host_are_loaded_or_linked(url, origin, href):
    assert origin_of(url) == origin
    assert web_url(url) == href
