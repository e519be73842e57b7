"""The product token our crawler is named by: in robots.txt groups (fetcher.robots.rules), in
robots metas and `X-Robots-Tag` scopes (spiderduck.extract.signals).

A user agent has one when it is a bare token (`FooBot`) or a User-Agent header whose first
product has a version (`SpiderDuck/0.1.0 (+https://...)` -> `spiderduck`); anything else (`Foo
Bar`, which Google's matcher would not obey either) has none. Tokens are compared lower-cased.
"""
from __future__ import annotations

import re

__all__ = ["product_token"]

_WHITESPACE = " \t\n\v\f\r"  # C isspace(); str.strip() would take Unicode spaces too
_CRAWLER_AGENT = re.compile(r"([A-Za-z_-]+)(?:/.*)?", re.DOTALL)


def product_token(user_agent: str) -> str | None:
    """The lower-cased product token a crawler's user agent is matched by, or None.

    >>> product_token("SpiderDuck/0.1.0 (+https://example.org/bot)")
    'spiderduck'
    >>> product_token("Foo Bar") is None
    True
    """
    m = _CRAWLER_AGENT.fullmatch(user_agent.strip(_WHITESPACE))
    return m[1].lower() if m else None
