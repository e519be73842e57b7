"""robots.txt verdicts shared through a real memcached: one fetch for all fetchers, none needed to run."""
from __future__ import annotations

import asyncio
import logging
import socket
import ssl
import time

import pytest

from spiderduck.core import config

from spiderduck.cli.nats_server import free_port
from spiderduck.core import urls
from spiderduck.core.errors import ConfigError
from spiderduck.core.fetch import FetchResult
from spiderduck.core.status import Status
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.ownership import AllShards
from spiderduck.fetcher.robots.cache import RobotsCache
from spiderduck.fetcher.robots.store import (KEY_PREFIX, MemcachedRobotsStore, SharedRobotsStore, key_for,
                                  open_robots_store)
from spiderduck.fetcher.robots.verdict import MAGIC, RobotsVerdict, VerdictCodec, VerdictKind

AGENT = "SpiderDuck/1.0"
STORE_LOG = "spiderduck.fetcher.robots"


def settings(**kw):
    values = {"fetcher.allowed_networks": ["127.0.0.0/8"],
              "fetcher.dns_overrides": {"*.test": "127.0.0.1"},
              "fetcher.default_rate": 100.0}
    values.update({f"fetcher.{k}": v for k, v in kw.items()})
    return config.load(env={}, overrides=values).fetcher


def fetcher(store_url: str, **kw) -> Fetcher:
    """One "fetcher process": its own Fetcher, its own memcached client."""
    return Fetcher(settings(**kw), ownership=AllShards(),
                   robots_store=open_robots_store(store_url, timeout=0.5))


def memcached_ttl(server, url: str) -> int | None:
    """Seconds memcached itself will keep the verdict of `url`'s origin (meta get), None if absent."""
    key = key_for(urls.origin_of(urls.canonicalize(url))).encode()
    with socket.create_connection((server.host, server.port), timeout=2) as s:
        s.sendall(b"mg " + key + b" t\r\n")
        reply = b""
        while not reply.endswith(b"\r\n"):
            reply += s.recv(100)
    if reply.startswith(b"EN"):
        return None
    return int(reply.split()[1][1:])


# --- (a) two fetchers, one robots.txt request ----------------------------------------------------

async def test_two_fetchers_share_one_robots_fetch(localweb, memcached_server):
    localweb.robots("shared.test", "User-agent: *\nDisallow: /private\n")
    for path in ("/a", "/b", "/c", "/private"):
        localweb.page("shared.test", path, "<title>x</title>")
    async with fetcher(memcached_server.url) as one, fetcher(memcached_server.url) as two:
        first = await one.fetch(localweb.url("shared.test", "/a"))
        results = await asyncio.gather(*(f.fetch(localweb.url("shared.test", p))
                                         for f in (one, two) for p in ("/b", "/c", "/private")))
    assert first.status is Status.OK
    assert [r.status for r in results] == [Status.OK, Status.OK, Status.ROBOTS_DISALLOWED] * 2
    assert len(localweb.hits_for("shared.test", "/robots.txt")) == 1
    assert localweb.hits_for("shared.test", "/private") == []
    assert (one.robots.fetches, two.robots.fetches, two.robots.shared_hits) == (1, 0, 1)


# --- (b) memcached down: fetching goes on ----------------------------------------------------------

async def test_memcached_stopped_mid_run(localweb, memcached_server, caplog):
    for host in ("a.test", "b.test"):
        localweb.robots(host, "User-agent: *\nDisallow: /private\n")
        localweb.page(host, "/ok", "<title>x</title>")
    caplog.set_level(logging.WARNING, logger=STORE_LOG)
    async with fetcher(memcached_server.url) as one:
        assert (await one.fetch(localweb.url("a.test", "/ok"))).status is Status.OK
        memcached_server.stop()
        async with fetcher(memcached_server.url) as two:
            on_two = [await two.fetch(localweb.url("a.test", p)) for p in ("/ok", "/private", "/ok")]
        on_one = [await one.fetch(localweb.url("b.test", p)) for p in ("/ok", "/private", "/ok")]
    expected = [Status.OK, Status.ROBOTS_DISALLOWED, Status.OK]
    assert [r.status for r in on_two] == [r.status for r in on_one] == expected
    assert len(localweb.hits_for("a.test", "/robots.txt")) == 2     # two could not share: it fetched
    assert len(localweb.hits_for("b.test", "/robots.txt")) == 1
    assert localweb.hits_for("a.test", "/private") == localweb.hits_for("b.test", "/private") == []
    warnings = [r for r in caplog.records if r.name == STORE_LOG and r.levelno == logging.WARNING]
    assert len(warnings) == 2                                       # one per store, not per request


async def test_memcached_never_there(localweb):
    localweb.robots("c.test", "User-agent: *\nDisallow: /private\n")
    localweb.page("c.test", "/ok", "<title>x</title>")
    async with fetcher(f"memcached://127.0.0.1:{free_port()}") as f:
        results = [await f.fetch(localweb.url("c.test", p)) for p in ("/ok", "/private")]
    assert [r.status for r in results] == [Status.OK, Status.ROBOTS_DISALLOWED]
    assert len(localweb.hits_for("c.test", "/robots.txt")) == 1


async def test_a_silent_memcached_times_out_once_then_is_skipped(localweb):
    for host in ("d.test", "e.test"):
        localweb.robots(host, "User-agent: *\nAllow: /\n")
        localweb.page(host, "/ok", "<title>x</title>")
    with socket.socket() as silent:                 # accepts connections (backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        store = MemcachedRobotsStore("127.0.0.1", silent.getsockname()[1], timeout=0.2)
        async with Fetcher(settings(), robots_store=store, ownership=AllShards()) as f:
            results = [await f.fetch(localweb.url(h, "/ok")) for h in ("d.test", "e.test")]
    assert [r.status for r in results] == [Status.OK, Status.OK]
    assert store.errors == 1                        # the second origin did not wait on memcached


async def test_store_errors_are_logged_once_per_interval_and_recovery_once(memcached_server, caplog):
    caplog.set_level(logging.INFO, logger=STORE_LOG)
    store = MemcachedRobotsStore(memcached_server.host, memcached_server.port, timeout=0.5, retry_after=0)
    try:
        await store.set("http://x.test", b"payload", 60)
        assert await store.get("http://x.test") == b"payload"
        memcached_server.stop()
        for _ in range(10):
            assert await store.get("http://x.test") is None
            await store.set("http://x.test", b"other", 60)
        assert store.errors == 20
        memcached_server.start()                    # same port, empty again
        await store.set("http://x.test", b"again", 60)
        assert await store.get("http://x.test") == b"again"
    finally:
        await store.close()
    ours = [r for r in caplog.records if r.name == STORE_LOG]
    assert [r.levelno for r in ours] == [logging.WARNING, logging.INFO]
    assert "is back" in ours[1].getMessage()


# --- (c) failure verdicts keep their short TTL when shared ---------------------------------------

async def test_a_5xx_verdict_is_shared_with_its_short_ttl(localweb, memcached_server):
    localweb.page("down.test", "/robots.txt", "oops", status=503)
    localweb.page("down.test", "/page", "<title>x</title>")
    localweb.robots("up.test", "User-agent: *\nAllow: /\n")
    localweb.page("up.test", "/page", "<title>x</title>")
    page = localweb.url("down.test", "/page")
    kw = {"robots_error_ttl": 1, "robots_ttl": 3600}
    async with fetcher(memcached_server.url, **kw) as one, fetcher(memcached_server.url, **kw) as two:
        assert (await one.fetch(page)).status is Status.ROBOTS_DISALLOWED
        assert (await two.fetch(page)).status is Status.ROBOTS_DISALLOWED
        assert (two.robots.fetches, two.robots.shared_hits) == (0, 1)
        assert len(localweb.hits_for("down.test", "/robots.txt")) == 1
        ttl = memcached_ttl(memcached_server, page)
        assert ttl is None or ttl <= 1                      # short (or already gone), not 3600
        assert (await one.fetch(localweb.url("up.test", "/page"))).status is Status.OK
        assert memcached_ttl(memcached_server, localweb.url("up.test", "/")) > 3000
        # The site recovers; within a bounded wait both levels let the verdict go and two refetches.
        localweb.robots("down.test", "User-agent: *\nAllow: /\n")
        deadline = time.monotonic() + 10
        while (result := await two.fetch(page)).status is Status.ROBOTS_DISALLOWED:
            assert time.monotonic() < deadline, "the 1 s error verdict outlived its TTL"
            await asyncio.sleep(0.05)
    assert result.status is Status.OK
    assert len(localweb.hits_for("down.test", "/robots.txt")) == 2
    assert two.robots.fetches == 1


async def test_an_unreachable_origin_is_shared_with_its_failure(memcached_server):
    page = f"http://dead.test:{free_port()}/page"       # nothing listens there
    kw = {"robots_error_ttl": 30}
    async with fetcher(memcached_server.url, **kw) as one, fetcher(memcached_server.url, **kw) as two:
        first = await one.fetch(page)
        second = await two.fetch(page)
    assert first.status is second.status is Status.CONNECTION_ERROR
    assert second.error.startswith("robots.txt unreachable") and second.url == first.url
    assert (two.robots.fetches, two.robots.shared_hits) == (0, 1)
    assert 0 < memcached_ttl(memcached_server, page) <= 30


# --- (d) the wire form and the pieces, without a server -------------------------------------------

class Clock:
    def __init__(self, now: float = 1_700_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


ROBOTS = b"User-agent: *\nDisallow: /private\n\nUser-agent: SpiderDuck\nDisallow: /mine\n"
FAILURE = FetchResult(url="http://x.test/robots.txt", status=Status.DNS_ERROR, error="no such host",
                      remote_address="")


@pytest.mark.parametrize("verdict", [
    RobotsVerdict.parsed(ROBOTS), RobotsVerdict.parsed(b"\xef\xbb\xbfUser-agent: *\r\nDisallow: /\xff\n"),
    RobotsVerdict.allow_all(), RobotsVerdict.disallow_all(), RobotsVerdict.unreachable(FAILURE),
], ids=["parsed", "parsed-odd-bytes", "allow_all", "disallow_all", "unreachable"])
def test_codec_round_trip(verdict):
    clock = Clock()
    codec = VerdictCodec(clock)
    payload = codec.encode(verdict, 600)
    assert payload.startswith(MAGIC)
    clock.now += 100
    back, remaining = codec.decode(payload)
    assert remaining == pytest.approx(500)
    assert (back.kind, back.body, back.failure) == (verdict.kind, verdict.body, verdict.failure)
    for path in ("/", "/private", "/mine", "/robots.txt", "/other"):
        url = "http://x.test" + path
        for agent in (AGENT, "OtherBot/2"):
            assert back.rules.allowed(url, agent) == verdict.rules.allowed(url, agent)


def test_codec_misses_on_expired_foreign_or_broken_payloads():
    clock = Clock()
    codec = VerdictCodec(clock)
    payload = codec.encode(RobotsVerdict.parsed(ROBOTS), 10)
    clock.now += 10
    assert codec.decode(payload) is None                                   # expired
    clock.now -= 5
    assert codec.decode(payload) is not None
    assert codec.decode(payload.replace(b"SDRV/1", b"SDRV/2")) is None    # another version
    assert codec.decode(MAGIC + b"{not json\n") is None
    assert codec.decode(MAGIC + b'{"kind":"parsed"}') is None             # no header end
    assert codec.decode(MAGIC + b'{"kind":"maybe","expires":1e12}\n') is None
    assert codec.decode(MAGIC + b'{"kind":"unreachable","expires":1e12,"failure":null}\n') is None
    assert codec.decode(b"") is None
    kindless = RobotsVerdict(RobotsVerdict.allow_all().rules)
    assert codec.encode(kindless, 10) is None                              # in-process only


def test_keys_follow_memcached_rules():
    for origin in ("http://a.test", "https://" + "x" * 5000 + ".test",
                   "http://bad host\r\n.test", "http://xn--bcher-kva.example:8080", "http://ü.test"):
        key = key_for(origin)
        assert key.startswith(KEY_PREFIX) and len(key.encode()) <= 250
        assert all(33 <= ord(c) < 127 for c in key)
    assert key_for("http://a.test") != key_for("http://a.test:81")


async def test_open_robots_store():
    assert open_robots_store("", timeout=0.5) is None
    store = open_robots_store("memcached://cache.internal:11311", timeout=0.5)
    assert isinstance(store, MemcachedRobotsStore) and store.address == "cache.internal:11311"
    await store.close()
    store = open_robots_store("memcached://cache.internal", timeout=0.5)
    assert store.address == "cache.internal:11211"
    await store.close()
    for bad in ("redis://h:1", "memcached://", "memcached://h:port", "memcached://h:1/x",
                "memcached://h:1?ca=/etc/ca.pem", "memcacheds://h:1?colour=red"):
        with pytest.raises(ConfigError):
            open_robots_store(bad, timeout=0.5)


async def test_open_robots_store_over_tls(tmp_path):
    from support.certs import TestCA
    ca = TestCA(tmp_path).ca
    store = open_robots_store(f"memcacheds://cache.internal?ca={ca}", timeout=0.5)
    assert store.address == "cache.internal:11211"
    context = store._client.tls_context
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname
    assert len(context.get_ca_certs()) == 1
    await store.close()
    with pytest.raises(ConfigError, match=f"robots_cache: ca={tmp_path}/none.pem: no such file"):
        open_robots_store(f"memcacheds://cache.internal?ca={tmp_path}/none.pem", timeout=0.5)
    with pytest.raises(ConfigError) as raised:
        open_robots_store("memcacheds://user:hunter2@cache.internal:port", timeout=0.5)
    assert "hunter2" not in str(raised.value) and "user:<set>@" in str(raised.value)


class DictStore(SharedRobotsStore):
    def __init__(self, fail: bool = False):
        self.data: dict[str, tuple[bytes, float]] = {}
        self.gets = 0
        self.fail = fail

    async def get(self, origin):
        self.gets += 1
        if self.fail:
            raise RuntimeError("a store that breaks its contract")
        return self.data.get(origin, (None,))[0]

    async def set(self, origin, payload, ttl):
        self.data[origin] = (payload, ttl)


async def test_cache_consults_the_store_once_per_origin_in_flight():
    store = DictStore()
    gate = asyncio.Event()
    fetched = []

    async def fetch():
        fetched.append(1)
        await gate.wait()
        return RobotsVerdict.parsed(ROBOTS), 200_000.0
    cache = RobotsCache(max_entries=100, store=store, codec=VerdictCodec())
    waiting = [asyncio.ensure_future(cache.rules_for("http://x.test", fetch)) for _ in range(5)]
    while not fetched:
        await asyncio.sleep(0)
    gate.set()
    verdicts = await asyncio.gather(*waiting)
    assert len({id(v) for v in verdicts}) == 1 and store.gets == 1 and len(fetched) == 1
    assert store.data["http://x.test"][1] == 86_400.0                 # capped at 24 h (RFC 9309)
    other = RobotsCache(max_entries=100, store=store, codec=VerdictCodec())
    verdict = await other.rules_for("http://x.test", fetch)
    assert verdict.kind is VerdictKind.PARSED and other.shared_hits == 1 and len(fetched) == 1


async def test_a_store_that_raises_is_a_miss():
    cache = RobotsCache(max_entries=100, store=DictStore(fail=True), codec=VerdictCodec())

    async def fetch():
        return RobotsVerdict.allow_all(), 60.0
    assert (await cache.rules_for("http://x.test", fetch)).kind is VerdictKind.ALLOW_ALL
    assert cache.fetches == 1
