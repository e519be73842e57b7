"""Who a hop is sent as (FetchRequest.profile, issue 43's second look): our crawler, or a person's
browser following a link from a post.

    check(profile, cookie)            raises UnknownProfile, InvalidCookie (both ValueErrors)
    navigation_headers(settings, cookie) -> the headers of a browser's top-level navigation

The browser profile sends what desktop Chrome sends when a person clicks a link on another
site: fetcher.browser_user_agent, BROWSER_ACCEPT, fetcher.accept_language, the Sec-Fetch-*
metadata of a user-activated cross-site document navigation, Upgrade-Insecure-Requests, and the
client hints (sec-ch-ua, -mobile, -platform) Chrome of that user agent's version sends by
default; none of the client hints for a user agent that is not Chrome's (Firefox and Safari send
none). Everything else about the hop is the crawler's: its robots.txt (read for fetcher.user_agent,
our crawler's token), politeness, address guard and body caps (src/spiderduck/fetcher/fetcher.py).

A cookie (the browser profile's, kept by the caller across its redirects) goes out as Cookie on
the one hop; one that could split or end the header (CR, LF, NUL or any other control but a tab)
or is longer than MAX_COOKIE_CHARS is refused, never sent.
"""
from __future__ import annotations

import re

from spiderduck.core.config import FetcherSettings
from spiderduck.core.errors import SpiderDuckError
from spiderduck.core.fetch import MAX_COOKIE_CHARS

CRAWLER = ""                    # SpiderDuck's crawler: fetcher.user_agent
BROWSER = "browser"             # a person's browser: fetcher.browser_user_agent and its headers
PROFILES = (CRAWLER, BROWSER)

# Chrome's Accept on a top-level navigation.
BROWSER_ACCEPT = ("text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,"
                  "*/*;q=0.8,application/signed-exchange;v=b3;q=0.7")

_COOKIE_REFUSED = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")     # controls but HTAB (RFC 9110 5.5)
# Chrome's own user agent ends "Chrome/MAJOR.0.0.0 [Mobile ]Safari/537.36"; Edge, Opera and others
# append their token after it, and HeadlessChrome is not this word.
_CHROME = re.compile(r"\bChrome/(\d{1,4})(?:\.\d+)*( Mobile)? Safari/[\d.]+")
_PLATFORMS = (("Android", "Android"), ("CrOS", "Chrome OS"), ("Windows", "Windows"),
              ("Macintosh", "macOS"), ("Linux", "Linux"))
# Chromium's GREASE brand (components/embedder_support/user_agent_utils.cc), seeded by the major version.
_GREASE_CHARS = (" ", "(", ":", "-", ".", "/", ")", ";", "=", "?", "_")
_GREASE_VERSIONS = ("8", "99", "24")
_ORDERS = ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))


class UnknownProfile(SpiderDuckError, ValueError):
    """A FetchRequest.profile that is neither "" (the crawler) nor "browser"."""


class InvalidCookie(SpiderDuckError, ValueError):
    """A cookie that cannot be sent as one header value, or is longer than MAX_COOKIE_CHARS."""


def check(profile: str, cookie: str = "") -> None:
    """Raises UnknownProfile or InvalidCookie; before anything is sent."""
    if profile not in PROFILES:
        raise UnknownProfile(f"profile {profile[:40]!r} is not one of: '' (the crawler), {BROWSER!r}")
    if len(cookie) > MAX_COOKIE_CHARS:
        raise InvalidCookie(f"cookie of {len(cookie)} characters, more than {MAX_COOKIE_CHARS}")
    if _COOKIE_REFUSED.search(cookie):
        raise InvalidCookie("cookie holds a control character (a line break, a NUL): never sent")


def navigation_headers(settings: FetcherSettings, cookie: str = "") -> dict[str, str]:
    """The headers desktop Chrome sends navigating to a page from a link on another site,
    User-Agent and Accept included; Cookie when `cookie` is given (checked: InvalidCookie)."""
    check(BROWSER, cookie)
    user_agent = settings.browser_user_agent
    headers = client_hints(user_agent)
    headers.update({"Upgrade-Insecure-Requests": "1", "User-Agent": user_agent, "Accept": BROWSER_ACCEPT,
                    "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-User": "?1",
                    "Sec-Fetch-Dest": "document"})
    if settings.accept_language:
        headers["Accept-Language"] = settings.accept_language
    if cookie:
        headers["Cookie"] = cookie
    return headers


def client_hints(user_agent: str) -> dict[str, str]:
    """sec-ch-ua, sec-ch-ua-mobile and sec-ch-ua-platform as Chrome of `user_agent`'s major
    version and platform sends them by default; {} when `user_agent` is not Chrome's."""
    match = _CHROME.search(user_agent)
    if match is None or match.end() != len(user_agent):
        return {}
    major = int(match[1])
    platform = next((name for token, name in _PLATFORMS if token in user_agent), "")
    order = _ORDERS[major % len(_ORDERS)]
    grease = (f"Not{_GREASE_CHARS[major % len(_GREASE_CHARS)]}A{_GREASE_CHARS[(major + 1) % len(_GREASE_CHARS)]}"
              f"Brand", _GREASE_VERSIONS[major % len(_GREASE_VERSIONS)])
    brands: list[tuple[str, str]] = [("", "")] * 3
    for place, brand in zip(order, (grease, ("Chromium", str(major)), ("Google Chrome", str(major)))):
        brands[place] = brand
    return {"sec-ch-ua": ", ".join(f'"{name}";v="{version}"' for name, version in brands),
            "sec-ch-ua-mobile": "?1" if match[2] else "?0",
            "sec-ch-ua-platform": f'"{platform}"' if platform else '"Unknown"'}
