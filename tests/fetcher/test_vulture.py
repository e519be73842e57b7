"""The Vulture with a fake clock: idle queues and host entries go, busy or paused ones stay."""
from __future__ import annotations

import asyncio
import logging

from spiderduck.core import config
from spiderduck.core.config import FetcherSettings
from spiderduck.core.fetch import FetchResult
from spiderduck.core.status import Status
from spiderduck.fetcher.fetcher import Fetcher, politeness_for
from spiderduck.fetcher.ownership import AllShards
from spiderduck.fetcher.politeness import Politeness
from spiderduck.fetcher.vulture import Vulture
from support.clock import FakeClock


def polite(clock) -> Politeness:
    return politeness_for(FetcherSettings(default_rate=1.0, halt_after_failures=1), clock=clock, sleep=clock.sleep)


async def test_a_sweep_evicts_idle_queues_and_host_entries_and_logs_them(caplog):
    clock = FakeClock(1000.0)
    p = polite(clock)
    for domain in ("old.test", "paused.test", "halted.test", "busy.test", "kept.test"):
        await p.slot(domain).turn()
    p.slot("kept.test").tell_crawl_delay("stale.kept.test", 2)
    p.pause("paused.test", 3600)
    p.slot("halted.test").observe(FetchResult(url="http://halted.test/", status=Status.TIMEOUT))
    blocker = asyncio.Event()
    busy = p.slot("busy.test")

    async def stuck(seconds):
        await blocker.wait()
    busy._sleep = stuck
    waiter = asyncio.create_task(busy.turn())          # waits for its turn all along
    await asyncio.sleep(0)
    clock.now += 600
    p.slot("kept.test").tell_crawl_delay("fresh.kept.test", 1)
    await p.slot("kept.test").turn()
    vulture = Vulture(p, interval=60, idle_after=300, sleep=clock.sleep)
    with caplog.at_level(logging.INFO, logger="spiderduck.fetcher.vulture"):
        carrion = vulture.sweep()
    assert carrion.domains == ("old.test",)
    assert carrion.hosts == ("stale.kept.test",)
    assert sorted(p.slots()) == ["busy.test", "halted.test", "kept.test", "paused.test"]
    assert p.slot("kept.test").pacing.hosts() == ["fresh.kept.test"]
    assert "evicted 1 idle domain queue(s) [old.test] and 1 idle host entry [stale.kept.test]" \
        in caplog.text
    assert vulture.sweep() == type(carrion)()          # nothing left to take
    blocker.set()
    await waiter


async def test_the_task_sweeps_every_interval():
    clock = FakeClock(1000.0)
    p = polite(clock)
    await p.slot("a.test").turn()
    async with Vulture(p, interval=60, idle_after=300, sleep=clock.sleep) as vulture:
        for _ in range(1000):                          # each fake sleep moves the clock 60 s
            if vulture.sweeps >= 6:
                break
            await asyncio.sleep(0)
        assert len(p) == 0 and clock.now >= 1000 + 300
    sweeps = vulture.sweeps
    await asyncio.sleep(0)
    assert vulture.sweeps == sweeps                    # stopped with the block


async def test_the_fetcher_runs_its_vulture(localweb):
    localweb.page("idle.test", "/", "<title>x</title>")
    s = config.load(env={}, overrides={
        "fetcher.allowed_networks": ["127.0.0.0/8"], "fetcher.dns_overrides": {"*.test": "127.0.0.1"},
        "fetcher.default_rate": 50.0, "fetcher.vulture_interval": "50ms",
        "fetcher.domain_idle_after": "100ms"}).fetcher
    async with Fetcher(s, ownership=AllShards()) as f:
        await f.fetch(localweb.url("idle.test", "/"))
        assert "idle.test" in f.politeness.slots()
        async with asyncio.timeout(5):
            while "idle.test" in f.politeness.slots():
                await asyncio.sleep(0.02)
    assert f.vulture._task is None
