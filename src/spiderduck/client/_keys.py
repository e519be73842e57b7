"""The client's copy of the scheduler's reading of a tweet (spiderduck.core.tweets), so that
`submit` marks a tweet's URLs queued without importing the service; and, for the client's own
modules, the queued-marker names it uses (defined in `names` and `keys`, shared with the service).

tests/client/test_client_keys.py holds `tweet_urls` equal to the scheduler's reading of a tweet.
Tweets' URLs are found by twitter-text-parser, optional here: without it `tweet_urls` answers
None, and `submit` publishes a tweet without marking its URLs queued. `pip install
twitter-text-parser` restores the markers; the service's own installation has it.
"""
from __future__ import annotations

import functools
import re
import warnings
from typing import Any, Callable

from spiderduck.client.keys import url_key
from spiderduck.client.names import QUEUED_BUCKET

__all__ = ["QUEUED_BUCKET", "tweet_urls", "url_key"]

_SCHEME = re.compile(r"https?://", re.IGNORECASE).match


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
