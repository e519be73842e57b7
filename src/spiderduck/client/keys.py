"""The KV key of a URL, defined once here for the client and the service: the key of its queued
marker (bucket names.QUEUED_BUCKET) and of its claim (spiderduck.bus.claims).

The key of a URL is "u." + the hex BLAKE2b-128 digest of its canonical form (the WHATWG
serialization of an http(s) URL, without its fragment), or of the URL as given, trimmed, when it
is not a fetchable URL. The service canonicalizes with spiderduck.core.urls.canonicalize and
calls `key_for`; the client, which must not import the service, does the same with ada-url in
`url_key` (tests/client/test_client_keys.py holds the two equal over many URLs).

ada-url is optional for the client: without it `url_key` answers None. `submit` no longer
computes keys (the service marks what it is asked to queue: spiderduck.metadata_api.queueing).
"""
from __future__ import annotations

import contextlib
import hashlib
import re

try:
    import ada_url
except ImportError:                      # optional: no markers without it (see above)
    ada_url = None  # type: ignore[assignment]

_FETCHABLE_SCHEMES = frozenset({"http", "https"})


def claim_key(text: str) -> str:
    """KV keys allow [-/_=.A-Za-z0-9] only, so "u." + a digest of `text`."""
    return "u." + hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def key_for(url: str, canonical: str | None) -> str:
    """The key of `url` whose canonical form is `canonical` (None: it has none, so the key is
    that of the URL as given, trimmed)."""
    return claim_key(url.strip() if canonical is None else canonical)


def _canonical(url: str) -> str | None:
    """spiderduck.core.urls.canonicalize, or None where it raises InvalidUrl."""
    try:
        href = ada_url.normalize_url(url.strip())
    except ValueError:
        return None
    scheme = href.partition(":")[0]
    if scheme not in _FETCHABLE_SCHEMES:
        return None
    if href.find("@", 0, href.find("/", len(scheme) + 3)) != -1:     # userinfo@: never part of the key
        href = ada_url.replace_url(href, username="", password="")
    return href.partition("#")[0]


def url_key(url: str) -> str | None:
    """The key of `url`, canonicalized here; None without ada-url."""
    if ada_url is None:
        return None
    return key_for(url, _canonical(url))


# A URL's authority as typed: a scheme, any slashes (WHATWG takes "http:host" and "\\"), then up
# to the last "@" before the path, query or fragment starts (the service's rule too).
_USERINFO = re.compile(r"^(\s*[A-Za-z][A-Za-z0-9+.-]*:[/\\]*)[^/\\?#]*@")


def without_userinfo(url: str) -> str:
    """`url` without its userinfo (`user:password@`), as the client publishes it: the service
    drops it at intake anyway (spiderduck.core.urls.without_userinfo, which this equals with
    ada-url: tests/client/test_submitted_userinfo.py), and this keeps the password out of the
    submissions stream too. Without ada-url, or for what it cannot parse, the URL less its
    authority's text up to the last "@". A URL with no "@" is returned as given."""
    if "@" not in url:
        return url
    parsed = None
    if ada_url is not None:
        with contextlib.suppress(ValueError):
            parsed = ada_url.URL(url)
    if parsed is None:
        return _USERINFO.sub(r"\1", url, count=1)
    if parsed.username or parsed.password:
        parsed.username = ""
        parsed.password = ""
        return parsed.href
    return url
