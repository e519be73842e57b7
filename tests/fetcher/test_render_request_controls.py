"""A rendered page's requests obey every domain's controls (issue 38), owned or not: no request
to a halted or paused domain (its control kept in a real nats-server's KV bucket by the owner),
none to a path robots.txt disallows for our user agent, and a per-domain pace: the owner's slot
turn here, else a local bucket at render.subresource_rate (a fake clock shows the spacing)."""
from __future__ import annotations

import pytest

from spiderduck.core.config import FetcherSettings
from spiderduck.core.errors import ConfigError
from spiderduck.core.settings import RenderSettings
from spiderduck.core.status import Status
from spiderduck.fetcher.domain_controls import ControlStore, DomainControl, DomainControls
from spiderduck.fetcher.fetcher import Fetcher, politeness_for
from spiderduck.fetcher.subresource_pace import LocalBuckets
from support.clock import FakeClock
from support.controls_kv import bucket, eventually

HOSTS = ("own.test", "cdn.test", "other.test", "far.test", "halted.test", "paused.test")


class OwnsOne:
    def owns(self, domain: str) -> bool:
        return domain == "own.test"


@pytest.fixture
async def fetcher(localweb):
    for host in HOSTS:
        localweb.page(host, "/a.js", "1", content_type="application/javascript")
        localweb.page(host, "/private/b.js", "2", content_type="application/javascript")
    clock = FakeClock()
    settings = FetcherSettings(allowed_networks=["127.0.0.1/32"], dns_overrides={"*.test": "127.0.0.1"})
    async with Fetcher(settings, ownership=OwnsOne(),
                       politeness=politeness_for(FetcherSettings(default_rate=0.5), clock=clock, sleep=clock.sleep),
                       buckets=LocalBuckets(2.0, clock=clock, sleep=clock.sleep)) as f:
        yield f, clock, localweb


async def start_times(f: Fetcher, clock: FakeClock, url: str, n: int) -> list[float]:
    """The clock's time as each of `n` requests for `url` is answered (each must be a 200)."""
    starts = []
    for _ in range(n):
        assert (await f.subresource(url)).http_status == 200
        starts.append(clock.now)
    return starts


async def test_a_halted_or_paused_domain_another_fetcher_owns_gets_no_request(fetcher, nats_server):
    f, clock, web = fetcher
    owner = politeness_for(FetcherSettings(default_rate=1.0))           # the domains' owner, elsewhere
    async with bucket(nats_server.url) as kv, \
            DomainControls(owner, ControlStore(kv), writer="owner") as theirs, \
            DomainControls(f.politeness, ControlStore(kv), writer="renderer"):
        await ControlStore(kv).put(DomainControl("halted.test", halted=True, reason="5 failures", by="owner"))
        await theirs.pause("paused.test", 600, "maintenance")
        await eventually(lambda: f.politeness.held("halted.test") and f.politeness.held("paused.test"))
        before = clock.now
        for host in ("halted.test", "paused.test"):
            for _ in range(20):
                result = await f.subresource(web.url(host, "/a.js"))
                assert result.status is Status.CONNECTION_ERROR and host in result.error
            assert web.hits_for(host) == []                                  # robots.txt neither
        assert "maintenance" in result.error and clock.now == before          # failed at once
        assert "halted.test" not in f.politeness.slots()                     # no slot made for it
        await theirs.resume("paused.test")
        await eventually(lambda: not f.politeness.held("paused.test"))
        assert (await f.subresource(web.url("paused.test", "/a.js"))).http_status == 200


async def test_a_paused_owned_domain_fails_at_once_instead_of_waiting(fetcher):
    f, clock, web = fetcher
    f.politeness.pause("own.test", 60, "an operator's pause")
    before = clock.now
    result = await f.subresource(web.url("own.test", "/a.js"))
    assert result.status is Status.CONNECTION_ERROR and "an operator's pause" in result.error
    assert clock.now == before and web.hits_for("own.test") == []


async def test_robots_disallow_for_our_agent_holds_on_every_domain(fetcher):
    f, clock, web = fetcher
    for host in ("cdn.test", "own.test"):
        web.robots(host, "User-agent: OtherBot\nDisallow: /\n\nUser-agent: SpiderDuck\nDisallow: /private/\n")
        refused = await f.subresource(web.url(host, "/private/b.js"))
        assert refused.status is Status.ROBOTS_DISALLOWED
        assert web.hits_for(host, "/private/b.js") == []
        assert (await f.subresource(web.url(host, "/a.js"))).http_status == 200
        assert len(web.hits_for(host, "/robots.txt")) == 1                    # read once, then cached


async def test_a_non_owned_domain_is_paced_at_the_subresource_rate_and_domains_apart(fetcher):
    f, clock, web = fetcher
    starts = await start_times(f, clock, web.url("cdn.test", "/a.js"), 20)
    assert starts[-1] - starts[0] == pytest.approx(9.5, abs=0.01)           # 20 requests at 2 a second
    assert min(b - a for a, b in zip(starts, starts[1:])) >= 0.5
    assert len(web.hits_for("cdn.test", "/a.js")) == 20
    begun = clock.now
    for _ in range(10):                                  # two domains in turn: neither waits on the other
        for host in ("other.test", "far.test"):
            assert (await f.subresource(web.url(host, "/a.js"))).http_status == 200
    assert clock.now - begun <= 10 * 0.5 + 0.5          # not the 20 * 0.5 one shared pace would take


async def test_an_owned_domain_takes_its_slot_turn_not_the_local_bucket(fetcher):
    f, clock, web = fetcher
    starts = await start_times(f, clock, web.url("own.test", "/a.js"), 3)
    assert starts[1] - starts[0] >= 2.0 and starts[2] - starts[1] >= 2.0    # the slot's 0.5 a second
    assert "own.test" in f.politeness.slots() and len(f.buckets) == 0


def test_render_subresource_rate_is_validated():
    assert RenderSettings().subresource_rate == 2.0
    for bad in (0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ConfigError, match="render.subresource_rate"):
            RenderSettings(subresource_rate=bad)
