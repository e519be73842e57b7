"""spiderduck.core.urls: WHATWG conformance of `parse`, and our own rules on top of it."""
from __future__ import annotations

import re
import socket

import pytest

from spiderduck.core import urls
from spiderduck.core.urls import (
    InvalidUrl,
    canonicalize,
    host_of,
    is_ip_literal,
    join,
    origin_of,
    parse,
    registrable_domain,
)


def _url_case_id(case):
    return f"{case['input']!r}" + (f" on {case['base']!r}" if case["base"] else "")


@pytest.mark.vectors("testdata", "urltestdata.json", ids=_url_case_id)
def test_whatwg_urltestdata(case):
    if case.get("failure"):
        with pytest.raises(InvalidUrl):
            parse(case["input"], case["base"])
    else:
        assert parse(case["input"], case["base"]).href == case["href"]


def _without_userinfo(href: str) -> str:
    """The standard's serialization of `href` with its username and password set empty."""
    url = parse(href)
    url.username = ""
    url.password = ""
    return url.href


@pytest.mark.vectors("testdata", "urltestdata.json", ids=_url_case_id)
def test_canonicalize_is_the_whatwg_href_without_its_fragment(case):
    """Its canonical form is the standard's serialization less the fragment and the userinfo, for
    http and https; anything else (or a failure) is an InvalidUrl. Inputs relative to a base are
    resolved first (canonicalize takes absolute URLs)."""
    fetchable = not case.get("failure") and case["href"].split(":", 1)[0] in ("http", "https")
    expected = fetchable and _without_userinfo(case["href"]).partition("#")[0]
    if case["base"]:
        if fetchable:
            assert canonicalize(parse(case["input"], case["base"]).href) == expected
        return
    if fetchable:
        assert canonicalize(case["input"]) == expected
    else:
        with pytest.raises(InvalidUrl):
            canonicalize(case["input"])


# canonicalize

@pytest.mark.parametrize("url, scheme", [
    ("ftp://example.com/file", "ftp"),
    ("javascript:alert(1)", "javascript"),
    ("mailto:someone@example.com", "mailto"),
    ("data:text/html,<p>hi</p>", "data"),
    ("file:///etc/passwd", "file"),
])
def test_canonicalize_rejects_other_schemes(url, scheme):
    with pytest.raises(InvalidUrl) as raised:
        canonicalize(url)
    assert raised.value.reason == f"unsupported scheme {scheme}"
    assert raised.value.retryable is False
    assert raised.value.url == url


@pytest.mark.parametrize("url", ["", "example.com/x", "http://", "https://exa mple.com/", "http://[::1/"])
def test_canonicalize_rejects_unparseable(url):
    with pytest.raises(InvalidUrl, match="cannot be parsed"):
        canonicalize(url)


@pytest.mark.parametrize("url, expected", [
    ("http://example.com/a#section", "http://example.com/a"),
    ("http://example.com/a#", "http://example.com/a"),
    ("HTTP://WWW.Example.COM/Path", "http://www.example.com/Path"),   # path case kept
    ("http://example.com:80/", "http://example.com/"),
    ("https://example.com:443/x", "https://example.com/x"),
    ("https://example.com:8443/x", "https://example.com:8443/x"),
    ("  http://example.com/x \n", "http://example.com/x"),
    ("http://example.com", "http://example.com/"),
    ("http://example.com/a/./b/../c", "http://example.com/a/c"),
    ("http://example.com/?b=2&a=1&a=1", "http://example.com/?b=2&a=1&a=1"),  # query kept
    ("http://example.com/a b?q=x y", "http://example.com/a%20b?q=x%20y"),
    ("http://example.com/%7euser", "http://example.com/%7euser"),       # escapes as written
    ("http://bücher.de/straße", "http://xn--bcher-kva.de/stra%C3%9Fe"),  # IDN -> punycode
    ("http://0x7f.1/", "http://127.0.0.1/"),
    ("http://[0:0::1]:8080/", "http://[::1]:8080/"),
    ("http://alice:PASSW0RD@host.test/login", "http://host.test/login"),   # userinfo dropped
    ("https://alice@host.test:8443/a@b?c=@", "https://host.test:8443/a@b?c=@"),
    ("http://a@b:c@host.test/", "http://host.test/"),                   # up to the last "@"
])
def test_canonicalize(url, expected):
    assert canonicalize(url) == expected
    assert canonicalize(expected) == expected   # idempotent


@pytest.mark.parametrize("url, expected", [
    ("http://alice:PASSW0RD@host.test/login?x=1#f", "http://host.test/login?x=1#f"),
    ("HTTP://alice@Host.test", "http://host.test/"),
    ("http://a@b@host.test/x?y=@", "http://host.test/x?y=@"),
    ("http:\\\\u:p@h.test/", "http://h.test/"),
    ("http://alice:PW@exa mple.com/", "http://exa mple.com/"),      # unparseable: cut all the same
    ("http://host.test/a@b?c=@", "http://host.test/a@b?c=@"),       # none: as given
    ("mailto:someone@example.com", "mailto:someone@example.com"),
    ("Example.COM/x", "Example.COM/x"),
])
def test_without_userinfo(url, expected):
    assert urls.without_userinfo(url) == expected
    assert urls.without_userinfo(expected) == expected


def test_join():
    page = "https://example.com/blog/post.html?x=1"
    assert join(page, "/img/a.png") == "https://example.com/img/a.png"
    assert join(page, "../b.png") == "https://example.com/b.png"
    assert join(page, "//cdn.example.net/c.png") == "https://cdn.example.net/c.png"
    assert join(page, "https://other.org/") == "https://other.org/"
    assert join(page, "http://[bad") is None
    assert join("not a base", "x.png") is None


def test_host_and_origin():
    assert host_of("https://WWW.Example.com:8443/x") == "www.example.com"
    assert host_of("http://[::1]:8080/") == "[::1]"
    assert origin_of("https://WWW.Example.com:8443/x?y#z") == "https://www.example.com:8443"
    assert origin_of("http://example.com:80/x") == "http://example.com"
    with pytest.raises(InvalidUrl):
        host_of("nope")


@pytest.mark.parametrize("host, expected", [
    ("127.0.0.1", True), ("10.1.2.3", True), ("::1", True), ("[::1]", True),
    ("[2001:db8::1]", True), ("example.com", False), ("localhost", False), ("1.2.3", False),
])
def test_is_ip_literal(host, expected):
    assert is_ip_literal(host) is expected


# registrable_domain

@pytest.mark.parametrize("host, expected", [
    ("example.com", "example.com"),
    ("www.example.com", "example.com"),
    ("WWW.Example.COM.", "example.com"),
    ("www.bbc.co.uk", "bbc.co.uk"),
    ("a.b.c.example.co.uk", "example.co.uk"),
    ("www.city.kawasaki.jp", "city.kawasaki.jp"),      # wildcard and exception rules
    ("foo.github.io", "github.io"),                    # private suffixes are not used
    ("foo.bar.blogspot.com", "blogspot.com"),
    ("co.uk", "co.uk"),                                # a bare suffix is its own domain
    ("www.bücher.de", "xn--bcher-kva.de"),
    ("xn--bcher-kva.de", "xn--bcher-kva.de"),
    ("127.0.0.1", "127.0.0.1"),
    ("[::1]", "[::1]"),
    ("2001:db8::1", "2001:db8::1"),
    ("localhost", "localhost"),
    ("shop.test", "shop.test"),
    ("a.b.test", "b.test"),
    ("x.y.internal", "y.internal"),
])
def test_registrable_domain(host, expected):
    assert registrable_domain(host) == expected


def test_registrable_domain_rejects_empty_host():
    with pytest.raises(InvalidUrl):
        registrable_domain("")


# domain_named: what an operator may name

@pytest.mark.parametrize("text, expected", [
    ("example.com", "example.com"),
    (" Example.COM. ", "example.com"),
    ("news.bbc.co.uk", "bbc.co.uk"),
    ("https://news.bbc.co.uk/world?x=1", "bbc.co.uk"),
    ("foo_bar.example.com", "example.com"),            # an underscore in a host name is fine
    ("a.github.io", "github.io"),                      # as registrable_domain: no private suffixes
    ("www.city.kawasaki.jp", "city.kawasaki.jp"),
    ("www.foo.ck", "www.foo.ck"),                      # *.ck: foo.ck is a suffix
    ("bücher.de", "xn--bcher-kva.de"),
    ("127.0.0.1", "127.0.0.1"),
    ("0x7f.1", "127.0.0.1"),                           # as a URL's host would be read
    ("::1", "[::1]"),
    ("[2001:DB8::1]", "[2001:db8::1]"),
    ("http://[::1]:8080/", "[::1]"),
    ("localhost", "localhost"),                        # a name the list does not know is its own
    ("a.b.test", "b.test"),
])
def test_domain_named(text, expected):
    assert urls.domain_named(text) == expected


@pytest.mark.parametrize("text, reason", [
    ("", "a domain is required"),
    ("com", "com is a public suffix"),
    ("co.uk", "co.uk is a public suffix; name a domain under it, such as example.co.uk"),
    ("ck", "ck is a public suffix"),
    ("foo.ck", "foo.ck is a public suffix"),
    ("http://co.uk/", "co.uk is a public suffix"),
    ("*.example.com", "a wildcard"),
    ("http://*.example.com/", "a wildcard"),
    ("exa mple.com", "not a host name"),
    ("-bad-.com", "bad label '-bad-'"),
    ("bad-.com", "bad label 'bad-'"),
    ("a..com", "an empty label"),
    (".example.com", "an empty label"),
    ("a" * 64 + ".com", "bad label"),
    ("x." * 127 + "com", "longer than 253 characters"),
    ("a_b.com", "no underscore in a registrable domain"),
    ("example.com/path", "a URL needs its scheme"),
    ("example.com:80", "a URL needs its scheme"),
    ("user@example.com", "a URL needs its scheme"),
    ("%65xample.com", "a URL needs its scheme"),
    ("ftp://example.com/", "unsupported scheme ftp"),
    ("http://[::1", "cannot be parsed"),
])
def test_domain_named_refuses_what_is_not_a_registrable_domain(text, reason):
    with pytest.raises(urls.InvalidDomain, match=f"^{re.escape(repr(text))} is not a registrable domain: .*"
                                                 f"{re.escape(reason)}"):
        urls.domain_named(text)


def test_suffix_list_is_read_without_network(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("tldextract tried the network")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    extract = urls._offline_extractor()
    assert extract.suffix_list_urls == ()
    assert extract("www.bbc.co.uk").top_domain_under_public_suffix == "bbc.co.uk"
