"""src/spiderduck/client/keys.py: the key rule the client and the service share, the client's own
canonicalization (ada-url, as the service's spiderduck.core.urls) held to give the service's keys
(spiderduck.bus.pending.url_key) over many URLs."""
from __future__ import annotations

import json
import random

import pytest

from spiderduck.bus.pending import url_key
from conftest import shared_path
from spiderduck.client import keys

HANDWRITTEN = [
    "https://example.com/", "http://example.com", "  https://Example.COM/a/../b?q#frag  ",
    "HTTPS://EXAMPLE.com:443/", "http://example.com:80/x", "http://example.com:8080",
    "https://www.bücher.de/ä?ö=ü", "http://xn--bcher-kva.de/", "http://[::1]:8000/", "http://0x7f.1/",
    "http://192.168.0.257/", "https://example.com/%7euser/%41", "https://example.com/a b<c>",
    "https://user:pass@example.com/", "ftp://example.com/", "mailto:a@example.com", "example.com/x",
    "", "   ", "http://", "https://exa mple.com/", "javascript:alert(1)", "http://a.b/\ud800",
    "http://example.com/\x00", "\thttp://example.com/\n", "https://example.com/#", "https://ex%41mple.com/",
    "https://example.com/?a=1&b=2#c", "http://example.com./", "http://EXAMPLE.com/Path/",
]


def _vectors(name: str) -> list[dict]:
    return [c for c in json.loads(shared_path("testdata", name).read_text("utf-8")) if not isinstance(c, str)]


def _random_urls(n: int) -> list[str]:
    rng = random.Random(28)
    alphabet = "abcXYZ09-._~%/?#:@!$&'()*+,;= \t[]\\^`{|}ü€\u0130\u00df"
    schemes = ["http://", "https://", "HTTP://", "", "ftp://", " https://"]
    hosts = ["example.com", "EXAMPLE.com", "bücher.de", "127.0.0.1", "[::1]", "0x7f.0.0.1", "a..b", ""]
    return [rng.choice(schemes) + rng.choice(hosts) + "/" +
            "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 24))) for _ in range(n)]


@pytest.mark.parametrize("key_of", [keys.url_key, url_key], ids=["client", "service"])
def test_the_key_is_the_digest_of_the_canonical_url_else_of_the_trimmed_url(key_of):
    """The keys markers and claims already in NATS have: the rule must not change."""
    assert key_of("  HTTPS://Example.COM/a#frag ") == "u.969065efe4e160eb6d90f3b0ab5cc775"  # https://example.com/a
    assert key_of(" not a url ") == "u.d955ecaff5b5c7a56fc39b11657c06ac"                   # "not a url"


def test_url_key_is_the_services_over_many_urls():
    urls = list(HANDWRITTEN)
    for case in _vectors("urltestdata.json"):
        urls.append(case["input"])
        if case.get("href"):
            urls.append(case["href"])
    urls += _random_urls(5000)
    assert len(urls) > 5000
    differ = [u for u in urls if keys.url_key(u) != url_key(u)]
    assert not differ, differ[:20]


def test_without_ada_url_nothing_is_keyed(monkeypatch):
    """Installed alone (no ada-url), the client computes no key (the service writes the markers)."""
    monkeypatch.setattr(keys, "ada_url", None)
    assert keys.url_key("https://example.com/") is None
