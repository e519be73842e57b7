"""The browser look's cookie jar (scheduler.honesty_look): a cookie comes back to the site and path
that set it (or to the domain it names), never to another site, and never for a public suffix."""
from __future__ import annotations

import aiohttp

from spiderduck.core.fetch import FetchResult
from spiderduck.core.status import Status
from spiderduck.scheduler.honesty_look import _cookie_header, _keep_cookies


def answer(url: str, *cookies: str) -> FetchResult:
    return FetchResult(url=url, status=Status.OK, http_status=302,
                       headers=tuple(("Set-Cookie", c) for c in cookies))


async def test_cookies_go_back_to_their_own_site_only():
    jar = aiohttp.CookieJar(unsafe=True, quote_cookie=False)
    _keep_cookies(jar, answer("http://a.example.com/x", "s=1; Path=/", "wide=1; Domain=com",
                              "uk=1; Domain=co.uk", "site=1; Domain=example.com", "deep=1; Path=/x/y"))
    assert sorted(_cookie_header(jar, "http://a.example.com/y").split("; ")) == ["s=1", "site=1"]
    assert _cookie_header(jar, "http://www.example.com/") == "site=1"
    assert _cookie_header(jar, "http://bank.com/") == ""
    assert _cookie_header(jar, "http://bank.co.uk/") == ""
