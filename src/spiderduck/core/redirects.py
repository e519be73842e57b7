"""Redirects (RFC 9110 §15.4): the rules as small functions, and the one loop that follows them.

    chain = await follow(fetch, url, max_redirects=10)

Input: the first URL (canonical) and `fetch(url) -> FetchResult`, one request that never
follows a redirect itself.
Output: a Chain: every answer in order (`hops`), how each but the last moved on (`kinds`:
record.HTTP_REDIRECT, or the kind `refresh` named), and `failure`, None when the last answer is
the final one, else why the chain stopped at a redirect: (TOO_MANY_REDIRECTS, reason) past
`max_redirects` redirects, (INVALID_URL, reason) for a Location that is no fetchable URL.
`refresh(result) -> (kind, URL) | None`, when given, is asked of each answer that is no 3xx: a
page that sends the reader on by other means (a meta refresh, a Refresh header: the scheduler's
spiderduck.extract.refresh). Its hop is a redirect like any other: counted against
`max_redirects`, fetched by the same `fetch`.
Failure: what `fetch` raises, unchanged; the rules themselves raise only InvalidUrl (target).

The rules:
    is_redirect(code)         301 302 303 307 308 are followed; 300, 304, 305, 306 are not
    location(result)          the Location of an answer to follow, or None: this is the only
                              place the header is read
    target(requested, value)  Location joined against the requested URL (§10.2.2), canonical
    method_after(code, m)     the next request's method (§15.4.2-5)
    is_loop(requested)        a chain that asked for one URL twice (§15.4: "SHOULD detect")

A fragment never matters here: a canonical URL has none and none is sent, so a Location's
fragment, or the one it would inherit (§10.2.2), is dropped. Every request is a GET, which
every rule keeps a GET, so the loop never changes the method. A loop is named in the failure's
reason; the chain still ends at `max_redirects`, as before the loop was detected.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable, Sequence

from spiderduck.core import urls
from spiderduck.core.fetch import FetchResult
from spiderduck.core.record import HTTP_REDIRECT
from spiderduck.core.status import Status

__all__ = ["Chain", "REDIRECT_STATUSES", "follow", "is_loop", "is_redirect", "location",
           "method_after", "target"]

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

Fetch = Callable[[str], Awaitable[FetchResult]]
Refresh = Callable[[FetchResult], "tuple[str, str] | None"]   # an answer's next hop: (kind, canonical URL)


def is_redirect(code: int) -> bool:
    """§15.4.2-9: the codes that send the client to the Location. 300 leaves the choice to the
    user, 304 is a cache answer, 305 and 306 are deprecated or unused."""
    return code in REDIRECT_STATUSES


def location(result: FetchResult) -> str | None:
    """The Location of an answer to follow: an origin's answer with a redirect code and a
    non-empty Location header; None for any other answer (it is final)."""
    if result.status is not Status.OK or not is_redirect(result.http_status):
        return None
    return result.header("location") or None


def target(requested: str, value: str) -> str:
    """§10.2.2: the URL a Location `value` names, resolved against the URL that was requested,
    in the canonical form (urls.canonicalize). Raises InvalidUrl when it cannot be resolved or
    is no http(s) URL."""
    joined = urls.join(requested, value.strip())
    if joined is None:
        raise urls.InvalidUrl(value, f"cannot be resolved against {requested!r}")
    return urls.canonicalize(joined)


def method_after(code: int, method: str) -> str:
    """The method of the request a `code` redirect of a `method` request leads to: GET after a
    303 (HEAD stays HEAD, §15.4.4) and after a 301 or 302 of a POST (§15.4.2-3 allow it "for
    historical reasons" and browsers do it); 307 and 308 keep the method (§15.4.8-9)."""
    if (code == 303 and method != "HEAD") or (code in (301, 302) and method == "POST"):
        return "GET"
    return method


def is_loop(requested: Sequence[str]) -> bool:
    """Whether a chain asked for one URL twice: without cookies the same GET gets the same
    answer, so the chain cycles."""
    return len(set(requested)) < len(requested)


@dataclass(frozen=True)
class Chain:
    hops: tuple[FetchResult, ...]
    failure: tuple[Status, str] | None = None
    kinds: tuple[str, ...] = ()     # how each hop but the last moved on (record.REDIRECT_KINDS)


async def follow(fetch: Fetch, url: str, *, max_redirects: int, refresh: Refresh | None = None) -> Chain:
    """Requests `url`, then each redirect's target, up to `max_redirects` redirects (see the
    module doc)."""
    hops: list[FetchResult] = []
    kinds: list[str] = []
    asked = [url]
    while True:
        result = await fetch(url)
        hops.append(result)
        kind, loc = HTTP_REDIRECT, location(result)
        if loc is None:
            moved = refresh(result) if refresh is not None else None
            if moved is None:
                return Chain(tuple(hops), kinds=tuple(kinds))
            kind, loc = moved
        if len(hops) > max_redirects:
            loop = " (a redirect loop)" if is_loop(asked) else ""
            return Chain(tuple(hops), (Status.TOO_MANY_REDIRECTS, f"more than {max_redirects} redirects{loop}"),
                         tuple(kinds))
        try:
            url = target(url, loc)
        except urls.InvalidUrl as exc:
            return Chain(tuple(hops), (Status.INVALID_URL, f"redirect to an unusable URL: {exc}"), tuple(kinds))
        kinds.append(kind)
        asked.append(url)
