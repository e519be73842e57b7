"""The client's copy of the service's queued-marker rule (spiderduck.bus.pending, spiderduck.bus.claims), so that
`submit` marks URLs queued without importing the service.

The key of a URL is "u." + the hex BLAKE2b-128 digest of its canonical form (the WHATWG
serialization of an http(s) URL, without its fragment), or of the URL as given, trimmed, when it
is not a fetchable URL: `spiderduck.bus.pending.url_key`. tests/client/test_client_keys.py holds
`url_key` equal to the service's over many URLs, and `tweet_urls` to the scheduler's reading of a
tweet.

Canonicalization is WHATWG URL parsing (IDNA, IPv4 forms, percent-encoding, dot segments), which
only ada-url does faithfully; tweets' URLs are found by twitter-text-parser. Both are optional
here: without ada-url `url_key` answers None, without twitter-text-parser `tweet_urls` does, and
`submit` then publishes without marking those URLs queued (they show as pending once a scheduler
claims them, as for any producer that writes no marker). `pip install ada-url
twitter-text-parser` restores the markers; the service's own installation has both.
"""
from __future__ import annotations

import functools
import hashlib
import re
import warnings
from typing import Any, Callable

try:
    import ada_url
except ImportError:                      # optional: no markers without it (see above)
    ada_url = None  # type: ignore[assignment]

QUEUED_BUCKET = "spiderduck_url_queued"  # spiderduck.bus.pending.QUEUED_BUCKET
_FETCHABLE_SCHEMES = frozenset({"http", "https"})
_SCHEME = re.compile(r"https?://", re.IGNORECASE).match


def claim_key(url: str) -> str:
    """spiderduck.bus.claims.claim_key: KV keys allow [-/_=.A-Za-z0-9] only, so a digest of the URL."""
    return "u." + hashlib.blake2b(url.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _canonical(url: str) -> str | None:
    """spiderduck.core.urls.canonicalize, or None where it raises InvalidUrl."""
    try:
        href = ada_url.normalize_url(url.strip())
    except ValueError:
        return None
    if href.partition(":")[0] not in _FETCHABLE_SCHEMES:
        return None
    return href.partition("#")[0]


def url_key(url: str) -> str | None:
    """The queued-marker key of `url` (spiderduck.bus.pending.url_key); None without ada-url."""
    if ada_url is None:
        return None
    canonical = _canonical(url)
    return claim_key(url.strip() if canonical is None else canonical)


@functools.cache
def _tweet_extractor() -> Callable[[str], list[dict[str, Any]]] | None:
    """twitter_text's extract_urls_with_indices, imported at the first tweet (it imports
    pkg_resources, slow to load); None without twitter-text-parser."""
    try:
        with warnings.catch_warnings():
            # twitter_text imports pkg_resources, which warns that it is deprecated.
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", UserWarning)
            from twitter_text import extract_urls_with_indices
    except ImportError:                  # optional: tweets' URLs are not marked without it
        return None
    return extract_urls_with_indices  # type: ignore[no-any-return]


def tweet_urls(text: str) -> list[str] | None:
    """The URLs the scheduler reads in a tweet (spiderduck.core.tweets: urls_in_tweet, each made
    fetchable); None without twitter-text-parser."""
    extract = _tweet_extractor()
    if extract is None:
        return None
    found = [u["url"] for u in extract(text)]
    return [u if _SCHEME(u) else "http://" + u for u in found]
