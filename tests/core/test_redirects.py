"""spiderduck.core.redirects: the RFC 9110 §15.4 rules one by one, and the loop that follows a chain."""
from __future__ import annotations

import pytest

from spiderduck.core import redirects
from spiderduck.core.fetch import FetchResult
from spiderduck.core.redirects import follow, is_loop, is_redirect, location, method_after, target
from spiderduck.core.status import Status
from spiderduck.core.urls import InvalidUrl


def answer(url, code=200, loc=None, status=Status.OK, name="Location"):
    return FetchResult(url=url, status=status, http_status=code,
                       headers=((name, loc),) if loc is not None else ())


# --- which answers redirect ------------------------------------------------------------------

@pytest.mark.parametrize("code", range(300, 310))
def test_only_the_five_redirect_codes_are_followed(code):
    followed = code in (301, 302, 303, 307, 308)
    assert is_redirect(code) is followed
    assert (location(answer("http://a.test/", code, "/next")) == "/next") is followed


@pytest.mark.parametrize("result", [
    answer("http://a.test/", 302),                                  # no Location
    answer("http://a.test/", 302, ""),                              # an empty one
    answer("http://a.test/", 200, "/next"),                         # not a redirect code
    answer("http://a.test/", 0, "/next", status=Status.TIMEOUT),    # no answer from the origin
    answer("http://a.test/", 301, "/next", status=Status.ROBOTS_DISALLOWED),
], ids=["no-location", "empty", "200", "timeout", "refused"])
def test_an_answer_without_a_location_to_follow_is_final(result):
    assert location(result) is None


def test_the_location_header_is_found_whatever_its_case():
    assert location(answer("http://a.test/", 307, "/x", name="LOCATION")) == "/x"


# --- the Location joined against the requested URL (§10.2.2) ---------------------------------

@pytest.mark.parametrize("requested, value, expected", [
    ("http://b.test/x/y", "../z?q=1", "http://b.test/z?q=1"),              # relative, dot segments
    ("http://b.test/x/y", "z", "http://b.test/x/z"),
    ("http://b.test/x/y", "/root", "http://b.test/root"),
    ("http://b.test/x/y?old=1", "?new=2", "http://b.test/x/y?new=2"),
    ("https://a.test/x", "//cdn.test/img", "https://cdn.test/img"),          # protocol-relative
    ("http://a.test/x", "//cdn.test/img", "http://cdn.test/img"),
    ("http://a.test/x", "HTTPS://Other.TEST:443/p", "https://other.test/p"),   # absolute, canonical
    ("http://a.test/x", "/p#section", "http://a.test/p"),                    # a fragment is dropped
    ("http://a.test/x", "#only", "http://a.test/x"),                         # ... so this one is a self-redirect
    ("http://a.test/x", "  /spaced  ", "http://a.test/spaced"),
    ("http://a.test/x", "/caf\u00e9 au lait", "http://a.test/caf%C3%A9%20au%20lait"),
])
def test_a_location_is_resolved_against_the_requested_url(requested, value, expected):
    assert target(requested, value) == expected


@pytest.mark.parametrize("value, reason", [
    ("http://exa mple.test:99999/", "cannot be resolved against 'http://a.test/x'"),
    ("http://[::1/", "cannot be resolved"),
    ("javascript:alert(1)", "unsupported scheme javascript"),
    ("ftp://files.test/f", "unsupported scheme ftp"),
    ("mailto:a@b.test", "unsupported scheme mailto"),
])
def test_a_location_that_is_no_fetchable_url_raises(value, reason):
    with pytest.raises(InvalidUrl, match=reason.replace("[", r"\[")):
        target("http://a.test/x", value)


# --- the next request's method (§15.4.2-9) ---------------------------------------------------

@pytest.mark.parametrize("code, method, expected", [
    (303, "POST", "GET"), (303, "PUT", "GET"), (303, "GET", "GET"), (303, "HEAD", "HEAD"),
    (301, "POST", "GET"), (302, "POST", "GET"),
    (301, "PUT", "PUT"), (302, "HEAD", "HEAD"), (301, "GET", "GET"),
    (307, "POST", "POST"), (308, "POST", "POST"), (307, "GET", "GET"),
])
def test_the_method_after_a_redirect(code, method, expected):
    assert method_after(code, method) == expected


# --- loops ----------------------------------------------------------------------------------

def test_a_chain_that_asks_for_one_url_twice_is_a_loop():
    assert is_loop(["http://a.test/", "http://b.test/", "http://a.test/"])
    assert is_loop(["http://a.test/", "http://a.test/"])
    assert not is_loop(["http://a.test/", "http://b.test/", "http://c.test/"])
    assert not is_loop([])


# --- the loop that follows a chain -----------------------------------------------------------

async def chain_of(responses: dict, url="http://a.test/", max_redirects=10) -> redirects.Chain:
    asked = []

    async def fetch(u):
        asked.append(u)
        return responses[u]
    chain = await follow(fetch, url, max_redirects=max_redirects)
    assert [h.url for h in chain.hops] == asked
    return chain


async def test_the_location_is_joined_against_the_url_requested_not_the_one_answered():
    responses = {"http://a.test/dir/page": answer("http://elsewhere.test/other/", 302, "next"),
                 "http://a.test/dir/next": answer("http://a.test/dir/next", 200)}
    asked = []

    async def fetch(u):
        asked.append(u)
        return responses[u]
    chain = await follow(fetch, "http://a.test/dir/page", max_redirects=5)
    assert asked == ["http://a.test/dir/page", "http://a.test/dir/next"] and chain.failure is None


@pytest.mark.parametrize("redirects_in_chain, failure", [(3, None), (4, Status.TOO_MANY_REDIRECTS)])
async def test_max_redirects_are_followed_and_one_more_is_too_many(redirects_in_chain, failure):
    responses = {f"http://a.test/{i}": answer(f"http://a.test/{i}", (303, 308, 301, 302)[i], f"/{i + 1}")
                 for i in range(redirects_in_chain)}
    responses[f"http://a.test/{redirects_in_chain}"] = answer(f"http://a.test/{redirects_in_chain}", 200)
    chain = await chain_of(responses, "http://a.test/0", max_redirects=3)
    assert len(chain.hops) == min(redirects_in_chain, 3) + 1           # never a fifth request
    assert (chain.failure and chain.failure[0]) == failure
    if failure:
        assert chain.failure[1] == "more than 3 redirects"              # no loop: every URL new


async def test_a_loop_ends_at_the_limit_and_is_named():
    chain = await chain_of({"http://a.test/": answer("http://a.test/", 302, "http://b.test/"),
                            "http://b.test/": answer("http://b.test/", 307, "http://a.test/")},
                           max_redirects=3)
    assert len(chain.hops) == 4
    assert chain.failure == (Status.TOO_MANY_REDIRECTS, "more than 3 redirects (a redirect loop)")


async def test_zero_redirects_allowed_stops_at_the_first():
    chain = await chain_of({"http://a.test/": answer("http://a.test/", 301, "/b")}, max_redirects=0)
    assert len(chain.hops) == 1 and chain.failure[0] is Status.TOO_MANY_REDIRECTS


async def test_an_unusable_location_stops_the_chain_as_invalid_url():
    chain = await chain_of({"http://a.test/": answer("http://a.test/", 301, "ftp://a.test/f")})
    assert len(chain.hops) == 1 and chain.failure[0] is Status.INVALID_URL
    assert chain.failure[1].startswith("redirect to an unusable URL: ") and "ftp" in chain.failure[1]


async def test_a_redirect_without_location_and_a_failure_are_final_answers():
    for final in (answer("http://a.test/", 302), answer("http://a.test/", 304, "/x"),
                  answer("http://a.test/", 0, status=Status.CONNECTION_ERROR)):
        chain = await chain_of({"http://a.test/": final})
        assert chain.hops == (final,) and chain.failure is None


async def test_what_fetch_raises_is_raised():
    async def fetch(u):
        if u == "http://b.test/":
            raise ConnectionError("no fetcher")
        return answer(u, 302, "http://b.test/")
    with pytest.raises(ConnectionError, match="no fetcher"):
        await follow(fetch, "http://a.test/", max_redirects=5)


# --- other ways on: a refresh (the scheduler's spiderduck.extract.refresh) --------------------

def refreshes(result: FetchResult):
    """A stand-in for the scheduler's refresh rule: a 200 whose Refresh header names a URL."""
    value = result.header("refresh") if result.http_status == 200 else None
    return ("refresh-header", value) if value else None


async def test_a_refresh_is_a_hop_of_its_kind_and_counts_against_the_limit():
    responses = {"http://a.test/": answer("http://a.test/", 301, "http://b.test/"),
                 "http://b.test/": answer("http://b.test/", 200, "http://c.test/", name="Refresh"),
                 "http://c.test/": answer("http://c.test/", 200)}
    asked = []

    async def fetch(u):
        asked.append(u)
        return responses[u]
    chain = await follow(fetch, "http://a.test/", max_redirects=5, refresh=refreshes)
    assert asked == ["http://a.test/", "http://b.test/", "http://c.test/"]
    assert chain.kinds == ("http", "refresh-header") and chain.failure is None
    chain = await follow(fetch, "http://a.test/", max_redirects=1, refresh=refreshes)
    assert len(chain.hops) == 2 and chain.kinds == ("http",)
    assert chain.failure == (Status.TOO_MANY_REDIRECTS, "more than 1 redirects")
    plain = await follow(fetch, "http://a.test/", max_redirects=5)       # without it: final
    assert len(plain.hops) == 2 and plain.kinds == ("http",) and plain.failure is None


async def test_a_refresh_loop_ends_at_the_limit_and_is_named():
    responses = {"http://a.test/": answer("http://a.test/", 200, "http://b.test/", name="Refresh"),
                 "http://b.test/": answer("http://b.test/", 200, "http://a.test/", name="Refresh")}

    async def fetch(u):
        return responses[u]
    chain = await follow(fetch, "http://a.test/", max_redirects=3, refresh=refreshes)
    assert len(chain.hops) == 4 and chain.kinds == ("refresh-header",) * 3
    assert chain.failure == (Status.TOO_MANY_REDIRECTS, "more than 3 redirects (a redirect loop)")
