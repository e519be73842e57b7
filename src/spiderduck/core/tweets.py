"""The URLs in a tweet's text, found as Twitter itself finds them.

Extraction is `twitter_text` (twitter-text-parser), the Python port of
twitter/twitter-text, which passes that project's conformance suite: it knows
the TLD list, trailing punctuation, t.co links, directional marks and URLs
written without a scheme (`example.com/x`). Such a URL is returned as written;
`fetchable` gives it the `http://` a browser would assume.
"""
from __future__ import annotations

import re
import warnings

with warnings.catch_warnings():
    # twitter_text imports pkg_resources, which warns that it is deprecated.
    warnings.simplefilter("ignore", DeprecationWarning)
    warnings.simplefilter("ignore", UserWarning)
    from twitter_text import extract_urls_with_indices

__all__ = ["fetchable", "urls_in_tweet"]

# The only schemes twitter-text recognises in front of a URL.
_SCHEME = re.compile(r"https?://", re.IGNORECASE).match


def urls_in_tweet(text: str) -> list[str]:
    """The URLs `text` contains, in the order they appear, as written."""
    return [found["url"] for found in extract_urls_with_indices(text)]


def fetchable(url_from_tweet: str) -> str:
    """A URL from a tweet, with `http://` prepended when it was written without a
    scheme (`example.com/x` -> `http://example.com/x`)."""
    if _SCHEME(url_from_tweet):
        return url_from_tweet
    return "http://" + url_from_tweet
