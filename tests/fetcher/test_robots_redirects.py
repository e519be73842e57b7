"""robots.txt over real sockets: redirects (RFC 9309 §2.3.1.2) and status codes (§2.3.1.3-4).

Every verdict is read through what a page fetch does (OK or ROBOTS_DISALLOWED, or the failure
of an unreachable robots.txt) and through what the origins saw (hit counts).
"""
from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from spiderduck.core import config

from spiderduck.cli.nats_server import free_port
from spiderduck.core import urls
from spiderduck.core.status import Status
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.ownership import AllShards
from spiderduck.fetcher.robots.fetch import MAX_REDIRECTS
from spiderduck.fetcher.robots.verdict import VerdictKind

ROBOTS = "User-agent: *\nDisallow: /private\n"
PRIVATE_IP = "127.0.0.2"        # loopback, but outside the allowed 127.0.0.1/32: the guard's to refuse


def settings(**kw):
    values = {"fetcher.allowed_networks": ["127.0.0.1/32"],
              "fetcher.dns_overrides": {"*.test": "127.0.0.1", "secret.test": PRIVATE_IP,
                                        "inside.test": "10.9.8.7"},
              "fetcher.default_rate": 1000.0,
              "fetcher.backoff_base": 0.0}        # a 429 or 5xx robots.txt holds no later page
    values.update({f"fetcher.{k}": v for k, v in kw.items()})
    return config.load(env={}, overrides=values).fetcher


def site(localweb, host: str) -> None:
    for path in ("/open", "/private"):
        localweb.page(host, path, "<title>x</title>")


async def fetch_both(f: Fetcher, localweb, host: str) -> list:
    """The results of /open and /private on `host`, one after the other."""
    return [await f.fetch(localweb.url(host, p)) for p in ("/open", "/private")]


def kind_cached(f: Fetcher, localweb, host: str) -> VerdictKind | None:
    verdict = f.robots.cached(urls.origin_of(localweb.url(host)))
    return None if verdict is None else verdict.kind


# --- status codes: §2.3.1.3 (4xx: unavailable, allow all) and §2.3.1.4 (5xx: disallow all) ---------

OK, NO = Status.OK, Status.ROBOTS_DISALLOWED


@pytest.mark.parametrize("code, headers, expected, kind", [
    (200, {}, [OK, NO], VerdictKind.PARSED),
    (401, {}, [OK, OK], VerdictKind.ALLOW_ALL),
    (403, {}, [OK, OK], VerdictKind.ALLOW_ALL),
    (404, {}, [OK, OK], VerdictKind.ALLOW_ALL),
    (429, {}, [OK, OK], VerdictKind.ALLOW_ALL),                 # RFC 9309: a 4xx (Google: a 5xx)
    (500, {}, [NO, NO], VerdictKind.DISALLOW_ALL),
    (503, {}, [NO, NO], VerdictKind.DISALLOW_ALL),
    (302, {}, [OK, OK], VerdictKind.ALLOW_ALL),                 # a redirect without Location
    (301, {"Location": "ftp://files.test/robots.txt"}, [OK, OK], VerdictKind.ALLOW_ALL),
    (300, {"Location": "/robots-en.txt"}, [OK, OK], VerdictKind.ALLOW_ALL),   # not a redirect code
], ids=["200", "401", "403", "404", "429", "500", "503", "302-no-location", "301-to-ftp", "300"])
async def test_status_codes(localweb, code, headers, expected, kind):
    site(localweb, "s.test")
    localweb.page("s.test", "/robots.txt", ROBOTS, status=code, headers=headers,
                  content_type="text/plain")
    for host, path in (("files.test", "/robots.txt"), ("s.test", "/robots-en.txt")):   # never asked for
        localweb.page(host, path, "User-agent: *\nDisallow: /\n", content_type="text/plain")
    async with Fetcher(settings(), ownership=AllShards()) as f:
        first = await fetch_both(f, localweb, "s.test")
        again = await fetch_both(f, localweb, "s.test")         # from the cache
        assert kind_cached(f, localweb, "s.test") is kind
    assert [r.status for r in first] == [r.status for r in again] == expected
    assert len(localweb.hits_for("s.test", "/robots.txt")) == 1
    assert localweb.hits_for("s.test", "/robots-en.txt") == localweb.hits_for("files.test") == []
    for path, status in zip(("/open", "/private"), expected):
        assert len(localweb.hits_for("s.test", path)) == (2 if status is OK else 0)


async def test_connection_refused_disallows_all():
    page = f"http://dead.test:{free_port()}/open"              # nothing listens there
    async with Fetcher(settings(), ownership=AllShards()) as f:
        results = [await f.fetch(page) for _ in range(2)]
        assert f.robots.cached(urls.origin_of(page)).kind is VerdictKind.UNREACHABLE
    assert [r.status for r in results] == [Status.CONNECTION_ERROR] * 2
    assert all(r.error.startswith("robots.txt unreachable") for r in results)
    assert f.robots.fetches == 1


async def test_a_timeout_disallows_all(localweb):
    never = asyncio.Event()

    async def hang(request):
        await never.wait()
        return web.Response(text="late")
    site(localweb, "slow.test")
    localweb.route("slow.test", "/robots.txt", hang)
    async with Fetcher(settings(total_timeout=0.3), ownership=AllShards()) as f:
        result = await f.fetch(localweb.url("slow.test", "/open"))
    assert result.status is Status.TIMEOUT and result.error.startswith("robots.txt unreachable")
    assert localweb.hits_for("slow.test", "/open") == []


# --- redirect chains: five followed, even across domains; the sixth is "unavailable" -------------

CODES = (301, 302, 303, 307, 308)


def chain(localweb, redirects: int, across: bool) -> list[tuple[str, str]]:
    """s.test/robots.txt -> hop 1 -> ... -> hop `redirects`, which serves ROBOTS. Each hop on
    its own domain (h1.test, h2.test, ...) when `across`. Returns every (host, path) in order."""
    steps = [("s.test", "/robots.txt")] + [(f"h{i}.test" if across else "s.test", f"/r{i}")
                                           for i in range(1, redirects + 1)]
    for i, ((host, path), (next_host, next_path)) in enumerate(zip(steps, steps[1:])):
        localweb.redirect(host, path, localweb.url(next_host, next_path), status=CODES[i % len(CODES)])
    last_host, last_path = steps[-1]
    localweb.page(last_host, last_path, ROBOTS, content_type="text/plain")
    return steps


@pytest.mark.parametrize("across", [False, True], ids=["same-host", "across-domains"])
@pytest.mark.parametrize("redirects, expected", [(MAX_REDIRECTS, [OK, NO]), (MAX_REDIRECTS + 1, [OK, OK])],
                         ids=[f"{MAX_REDIRECTS}-redirects", f"{MAX_REDIRECTS + 1}-redirects"])
async def test_redirect_chains(localweb, redirects, expected, across):
    assert MAX_REDIRECTS >= 5                                   # RFC 9309 §2.3.1.2: at least five
    site(localweb, "s.test")
    steps = chain(localweb, redirects, across)
    async with Fetcher(settings(), ownership=AllShards()) as f:
        first = await fetch_both(f, localweb, "s.test")
        again = await fetch_both(f, localweb, "s.test")
        domains = set(f.politeness.slots())
        observed = f.politeness.slot("s.test").info("default").requests
    assert [r.status for r in first] == [r.status for r in again] == expected
    asked = min(len(steps), MAX_REDIRECTS + 1)                  # a seventh URL is never asked for
    assert [len(localweb.hits_for(h, p)) for h, p in steps] == [1] * asked + [0] * (len(steps) - asked)
    assert len(localweb.hits_for("s.test", "/private")) == (0 if expected[1] is NO else 2)
    assert len(localweb.hits_for("s.test", "/open")) == 2
    # Only the first hop's domain has a slot; other domains' answers are not observed by it.
    assert domains == {"s.test"}
    pages = sum(status is OK for status in expected) * 2
    assert observed == (1 if across else asked) + pages


# --- across domains: the target's rules apply to the original site, cached under that site -------

async def test_a_cross_domain_redirect_applies_the_targets_rules_to_the_original_site(localweb):
    site(localweb, "www.s.test")
    site(localweb, "cdn.other.test")
    localweb.redirect("www.s.test", "/robots.txt", localweb.url("cdn.other.test", "/rules/s.txt"),
                      status=302)
    localweb.page("cdn.other.test", "/rules/s.txt", ROBOTS, content_type="text/plain")
    async with Fetcher(settings(), ownership=AllShards()) as f:
        on_site = await fetch_both(f, localweb, "www.s.test") + await fetch_both(f, localweb, "www.s.test")
        assert kind_cached(f, localweb, "www.s.test") is VerdictKind.PARSED
        assert kind_cached(f, localweb, "cdn.other.test") is None  # nothing cached for the target
        assert set(f.politeness.slots()) == {"s.test"}
        on_target = await fetch_both(f, localweb, "cdn.other.test")
    assert [r.status for r in on_site] == [OK, NO, OK, NO]
    assert len(localweb.hits_for("www.s.test", "/robots.txt")) == 1
    assert len(localweb.hits_for("cdn.other.test", "/rules/s.txt")) == 1
    assert localweb.hits_for("www.s.test", "/private") == []
    # The target's own robots.txt (absent: 404, allow all) governs the target.
    assert [r.status for r in on_target] == [OK, OK]
    assert len(localweb.hits_for("cdn.other.test", "/robots.txt")) == 1


async def test_another_domains_failure_is_not_held_against_ours(localweb):
    site(localweb, "s.test")
    localweb.redirect("s.test", "/robots.txt", localweb.url("other.test", "/robots.txt"))
    localweb.page("other.test", "/robots.txt", "down", status=503)
    async with Fetcher(settings(backoff_base=30.0), ownership=AllShards()) as f:
        results = await fetch_both(f, localweb, "s.test")
        info = f.politeness.slot("s.test").info("default")
    assert [r.status for r in results] == [NO, NO]                 # 5xx at the target: disallow all
    assert localweb.hits_for("s.test", "/open") == []
    assert (info.requests, info.errors, info.hold) == (1, 0, 0.0)  # only our 301 was observed


async def test_a_refused_hop_to_another_domain_is_unreachable(localweb):
    site(localweb, "s.test")
    localweb.redirect("s.test", "/robots.txt", f"http://gone.test:{free_port()}/robots.txt")
    async with Fetcher(settings(), ownership=AllShards()) as f:
        results = await fetch_both(f, localweb, "s.test")
    assert [r.status for r in results] == [Status.CONNECTION_ERROR] * 2
    assert localweb.hits_for("s.test", "/open") == localweb.hits_for("s.test", "/private") == []
    assert len(localweb.hits_for("s.test", "/robots.txt")) == 1


# --- a redirect into private space: the guard refuses the hop; unreachable, so disallow all -------

@pytest.fixture
async def private_web():
    """A server on 127.0.0.2 that would allow everything, recording its hits."""
    hits: list[str] = []

    async def allow(request):
        hits.append(request.path)
        return web.Response(text="User-agent: *\nAllow: /\n", content_type="text/plain")
    app = web.Application()
    app.router.add_get("/{tail:.*}", allow)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    try:
        server = web.TCPSite(runner, PRIVATE_IP, 0)
        await server.start()
    except OSError as exc:
        await runner.cleanup()
        pytest.skip(f"cannot listen on {PRIVATE_IP}: {exc}")
    port = server._server.sockets[0].getsockname()[1]
    yield port, hits
    await runner.cleanup()


@pytest.mark.parametrize("target", [
    "http://secret.test:{port}/robots.txt",             # a name resolving to a refused address
    "http://" + PRIVATE_IP + ":{port}/robots.txt",      # an address literal
    "http://inside.test/robots.txt",                    # 10.9.8.7 (never connected to)
], ids=["name", "address", "rfc1918"])
async def test_a_hop_into_private_space_disallows_all(localweb, private_web, target):
    port, private_hits = private_web
    site(localweb, "s.test")
    localweb.redirect("s.test", "/robots.txt", target.format(port=port))
    async with Fetcher(settings(), ownership=AllShards()) as f:
        results = await fetch_both(f, localweb, "s.test") + await fetch_both(f, localweb, "s.test")
        assert kind_cached(f, localweb, "s.test") is VerdictKind.UNREACHABLE
    assert [r.status for r in results] == [Status.BLOCKED_ADDRESS] * 4
    assert all(r.error.startswith("robots.txt unreachable") and r.url.startswith("http://s.test")
               for r in results)
    assert private_hits == []
    assert localweb.hits_for("s.test", "/open") == localweb.hits_for("s.test", "/private") == []
    assert len(localweb.hits_for("s.test", "/robots.txt")) == 1


async def test_the_private_hop_is_followed_when_its_network_is_allowed(localweb, private_web):
    """The control for the test above: the same redirect reaches the server when allowed."""
    port, private_hits = private_web
    site(localweb, "s.test")
    localweb.redirect("s.test", "/robots.txt", f"http://secret.test:{port}/robots.txt")
    async with Fetcher(settings(allowed_networks=["127.0.0.0/8"]), ownership=AllShards()) as f:
        results = await fetch_both(f, localweb, "s.test")
    assert [r.status for r in results] == [OK, OK]
    assert private_hits == ["/robots.txt"]
