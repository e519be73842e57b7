"""Politeness against a local web that records when each request arrives.

Rate, Crawl-delay (and its cap), Retry-After on 429 and 503, back-off after 5xx and
timeouts (growing, reset by a success), pause on an error ratio, halt after failures
in a row. Gaps are measured at the server; JITTER allows for scheduling noise.
"""
from __future__ import annotations

import asyncio
import email.utils
import time

import pytest
from aiohttp import web

from spiderduck.core import config
from spiderduck.core.status import Status
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.ownership import AllShards

JITTER = 0.02


def settings(**kw):
    values = {"fetcher.allowed_networks": ["127.0.0.0/8"],
              "fetcher.dns_overrides": {"*.test": "127.0.0.1"},
              "fetcher.default_rate": 50.0,
              "fetcher.backoff_base": 0.01, "fetcher.backoff_max": 0.01}   # out of the way unless tested
    values.update({f"fetcher.{k}": v for k, v in kw.items()})
    return config.load(env={}, overrides=values).fetcher


def gaps(hits) -> list[float]:
    return [b.at - a.at for a, b in zip(hits, hits[1:])]


def pages(localweb, domain: str):
    """Hits on any host of `domain` other than robots.txt, in arrival order."""
    return [h for h in localweb.hits if h.host.endswith(domain) and h.path != "/robots.txt"]


def scripted(codes: list[int], headers=None):
    """A handler answering the given codes in turn, then 200."""
    codes = list(codes)

    async def handler(request):
        code = codes.pop(0) if codes else 200
        return web.Response(status=code, text=str(code), headers=(headers or {}) if code != 200 else {})
    return handler


async def test_requests_to_one_domain_start_at_its_rate(localweb):
    for host in ("a.rate.test", "b.rate.test"):        # two hosts, one registrable domain
        for i in range(3):
            localweb.page(host, f"/{i}", "<title>x</title>")
    localweb.page("fast.test", "/", "<title>x</title>")
    async with Fetcher(settings(default_rate=10.0, rate_overrides={"fast.test": 100.0}),
                       ownership=AllShards()) as f:
        results = await asyncio.gather(
            *(f.fetch(localweb.url(h, f"/{i}")) for i in range(3) for h in ("a.rate.test", "b.rate.test")),
            *(f.fetch(localweb.url("fast.test", "/")) for _ in range(3)))
    assert all(r.status is Status.OK for r in results)
    hits = [h for h in localweb.hits if h.host.endswith("rate.test")]     # robots.txt included
    assert len(hits) == 8
    assert min(gaps(hits)) >= 0.1 - JITTER
    assert len(pages(localweb, "fast.test")) == 3


async def test_crawl_delay_for_our_agent_spaces_requests(localweb):
    localweb.robots("delay.test", "User-agent: *\nCrawl-delay: 5\n\n"
                                  "User-agent: SpiderDuck\nCrawl-delay: 0.3\nDisallow: /private\n")
    for i in range(4):
        localweb.page("delay.test", f"/{i}", "<title>x</title>")
    async with Fetcher(settings(), ownership=AllShards()) as f:
        await asyncio.gather(*(f.fetch(localweb.url("delay.test", f"/{i}")) for i in range(4)))
        assert f.politeness.infos(["delay.test"])[0].crawl_delay == 0.3
    hits = [h for h in localweb.hits if h.host == "delay.test"]
    assert len(hits) == 5
    assert min(gaps(hits)) >= 0.3 - JITTER
    assert max(gaps(hits)) < 1.0                       # ours (0.3), not the one for * (5)


async def test_crawl_delay_is_capped_by_config(localweb):
    localweb.robots("capped.test", "User-agent: *\nCrawl-delay: 30\n")
    for i in range(3):
        localweb.page("capped.test", f"/{i}", "<title>x</title>")
    async with Fetcher(settings(max_crawl_delay="200ms"), ownership=AllShards()) as f:
        await asyncio.gather(*(f.fetch(localweb.url("capped.test", f"/{i}")) for i in range(3)))
        assert f.politeness.infos(["capped.test"])[0].interval == 0.2
    hits = pages(localweb, "capped.test")
    assert len(hits) == 3
    assert min(gaps(hits)) >= 0.2 - JITTER and max(gaps(hits)) < 1.0


def _retry_after(form: str) -> dict:
    if form == "seconds":
        return {"Retry-After": "1"}
    now = int(time.time())                             # HTTP-dates have whole seconds
    return {"Date": email.utils.formatdate(now, usegmt=True),
            "Retry-After": email.utils.formatdate(now + 1, usegmt=True)}


@pytest.mark.parametrize("code,form", [(429, "seconds"), (503, "seconds"), (503, "http-date")])
async def test_retry_after_holds_the_next_request(localweb, code, form):
    localweb.route("busy.test", "/", scripted([code], _retry_after(form)))
    url = localweb.url("busy.test", "/")
    # rate 5/s: the second request is already waiting (0.2 s) when the answer says "1 s"
    async with Fetcher(settings(default_rate=5.0), ownership=AllShards()) as f:
        first, second = await asyncio.gather(f.fetch(url), f.fetch(url))
    assert (first.http_status, second.http_status) == (code, 200)
    hits = pages(localweb, "busy.test")
    assert len(hits) == 2
    assert gaps(hits)[0] >= 1.0 - JITTER


async def test_5xx_backs_off_more_each_time_and_a_success_resets_it(localweb):
    localweb.route("flaky.test", "/", scripted([500, 502, 503]))
    url = localweb.url("flaky.test", "/")
    async with Fetcher(settings(backoff_base=0.1, backoff_factor=2, backoff_jitter=0.5,
                                backoff_max=10), ownership=AllShards()) as f:
        codes = [(await f.fetch(url)).http_status for _ in range(5)]
    assert codes == [500, 502, 503, 200, 200]
    g = gaps(pages(localweb, "flaky.test"))
    assert g[0] >= 0.1 - JITTER and g[1] >= 0.2 - JITTER and g[2] >= 0.4 - JITTER
    assert g[0] < g[1] < g[2]                           # jitter only adds, never overtakes
    assert g[3] < 0.1                                   # after the success: back to 1/rate (0.02 s)


async def test_timeouts_back_off_too(localweb):
    release = asyncio.Event()
    calls = 0

    async def hangs_three_times(request):
        nonlocal calls
        calls += 1
        if calls <= 3:
            await release.wait()
        return web.Response(text="ok")
    localweb.route("hang.test", "/", hangs_three_times)
    url = localweb.url("hang.test", "/")
    try:
        async with Fetcher(settings(total_timeout=0.2, backoff_base=0.1, backoff_factor=2,
                                    backoff_jitter=0.5, backoff_max=10), ownership=AllShards()) as f:
            results = [await f.fetch(url) for _ in range(5)]
    finally:
        release.set()
    assert [r.status for r in results] == [Status.TIMEOUT] * 3 + [Status.OK] * 2
    g = gaps(pages(localweb, "hang.test"))
    # each gap: the 0.2 s timeout, then 0.1, 0.2, 0.4 s of back-off (+ up to half as jitter)
    assert g[0] >= 0.3 - JITTER and g[1] >= 0.4 - JITTER and g[2] >= 0.6 - JITTER
    assert g[0] < g[1] < g[2]
    assert g[3] < 0.1


async def test_an_error_ratio_over_the_window_pauses_the_domain(localweb):
    localweb.page("sick.test", "/err", "down", status=500)
    localweb.page("sick.test", "/ok", "<title>up</title>")
    async with Fetcher(settings(pause_min_requests=4, pause_error_ratio=0.10, pause_for="1s"),
                       ownership=AllShards()) as f:
        # robots.txt (404, not an error) and three 500s: 4 requests, 75% errors.
        for _ in range(3):
            assert (await f.fetch(localweb.url("sick.test", "/err"))).http_status == 500
        info = f.politeness.infos(["sick.test"])[0]
        assert info.state == "paused" and 0.9 < info.paused_for <= 1.0
        assert "3 errors in 4 requests" in info.reason
        paused_at = pages(localweb, "sick.test")[-1].at
        results = await asyncio.gather(*(f.fetch(localweb.url("sick.test", "/ok")) for _ in range(3)))
        assert f.politeness.infos(["sick.test"])[0].state == "active"
    assert [r.http_status for r in results] == [200, 200, 200]
    after = [h for h in pages(localweb, "sick.test") if h.path == "/ok"]
    assert len(after) == 3
    assert after[0].at - paused_at >= 1.0 - JITTER      # nothing during the pause
    assert min(gaps(after)) >= 0.02 - JITTER            # then the normal rate again


async def test_404s_do_not_pause_a_domain(localweb):
    async with Fetcher(settings(pause_min_requests=4), ownership=AllShards()) as f:
        results = [await f.fetch(localweb.url("gone.test", f"/{i}")) for i in range(6)]
        assert f.politeness.infos(["gone.test"])[0].state == "active"
    assert {r.http_status for r in results} == {404}


async def test_failures_in_a_row_halt_the_domain_which_then_fails_fast(localweb):
    localweb.page("dead.test", "/err", "down", status=503)
    localweb.page("dead.test", "/ok", "<title>up</title>")
    async with Fetcher(settings(halt_after_failures=3, pause_error_ratio=1.0), ownership=AllShards()) as f:
        for _ in range(3):
            await f.fetch(localweb.url("dead.test", "/err"))
        seen = len(localweb.hits)
        halted = await asyncio.wait_for(f.fetch(localweb.url("dead.test", "/ok")), 1.0)
        assert halted.status is Status.CONNECTION_ERROR
        assert "dead.test is halted (3 failures in a row (last: 503))" in halted.error
        assert len(localweb.hits) == seen                # nothing sent
        f.politeness.resume("dead.test")
        again = await f.fetch(localweb.url("dead.test", "/ok"))
    assert again.status is Status.OK and again.http_status == 200
