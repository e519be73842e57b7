"""What a page may load or link: http(s) URLs as a browser parses them (WHATWG), so the CSP
allows exactly the origin the browser will load from."""
from __future__ import annotations

import pytest

from spiderduck.web.views import origin_of, web_url


@pytest.mark.parametrize("url, origin, href", [
    ("https://x.test:8443/a?b", "https://x.test:8443", "https://x.test:8443/a?b"),
    ("HTTP://Ex.COM:80/p", "http://ex.com", "http://ex.com/p"),
    # A backslash is a slash to a browser: the host is a.com, not b.com (urlsplit says b.com).
    ("http://a.com\\@b.com/", "http://a.com", "http://a.com/@b.com/"),
    ("http://[2001:db8::1]:8080/", "", ""),     # documentation range: not public
    ("http://[2606:4700::1]:8080/", "http://[2606:4700::1]:8080", "http://[2606:4700::1]:8080/"),
    ("http://93.184.215.14/i.png", "http://93.184.215.14", "http://93.184.215.14/i.png"),
    # The operator's own network is never loaded from (nor linked) by a crawled page's word.
    ("http://127.0.0.1:8080/admin", "", ""),
    ("http://[::1]/", "", ""),
    ("http://10.1.2.3/", "", ""),
    ("http://169.254.169.254/latest/meta-data", "", ""),
    ("http://0x7f000001/", "", ""),             # 127.0.0.1, as WHATWG reads it
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
