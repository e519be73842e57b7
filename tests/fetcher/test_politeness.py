"""Per-domain slots: request starts spaced by 1/rate, bounded queues, idle eviction (fake clock)."""
from __future__ import annotations

import asyncio

import pytest

from spiderduck.core.config import FetcherSettings
from spiderduck.core.errors import FetcherBusy
from spiderduck.fetcher.fetcher import politeness_for
from spiderduck.fetcher.politeness import Politeness
from support.clock import FakeClock


def polite(clock, **kw) -> Politeness:
    """The slots of a fetcher with these fetcher.* settings."""
    return politeness_for(FetcherSettings(**{"default_rate": 2.0, **kw}), clock=clock, sleep=clock.sleep)


async def test_starts_on_one_domain_are_spaced_by_its_rate():
    clock = FakeClock()
    p = polite(clock, rate_overrides={"slow.test": 0.5})
    starts = {"a.test": [], "slow.test": []}

    async def one(domain):
        await p.slot(domain).turn()
        starts[domain].append(clock.now)

    await asyncio.gather(*(one(d) for d in ["a.test"] * 4 + ["slow.test"] * 3))
    gaps = lambda xs: [b - a for a, b in zip(xs, xs[1:])]
    assert all(g >= 0.5 for g in gaps(starts["a.test"]))
    assert all(g >= 2.0 for g in gaps(starts["slow.test"]))
    assert len(starts["a.test"]) == 4 and len(starts["slow.test"]) == 3


async def test_a_full_queue_refuses_more():
    clock = FakeClock()
    p = polite(clock, queue_size=2, default_rate=1.0)
    slot = p.slot("busy.test")
    await slot.turn()                     # sets the next start one second ahead
    blocker = asyncio.Event()

    async def slow_sleep(seconds):
        await blocker.wait()
    slot._sleep = slow_sleep
    waiting = [asyncio.create_task(slot.turn()) for _ in range(2)]
    await asyncio.sleep(0)
    with pytest.raises(FetcherBusy):
        await slot.turn()
    blocker.set()
    await asyncio.gather(*waiting)


async def test_idle_slots_are_evicted():
    clock = FakeClock()
    p = polite(clock)
    await p.slot("old.test").turn()
    clock.now += 600
    await p.slot("new.test").turn()
    assert p.evict_idle(300) == ["old.test"]
    assert len(p) == 1


def test_rate_must_be_positive():
    with pytest.raises(ValueError):
        polite(FakeClock(), default_rate=0)


def test_busy_and_not_the_owner_have_one_name_each_from_the_fetcher_to_the_scheduler():
    """The fetcher raises spiderduck.core.errors' FetcherBusy and WrongFetcher itself: no other class
    of its own for either, which the adapters would have to translate (issue 28)."""
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[2]
    for path in [*(root / "src/spiderduck/fetcher").rglob("*.py"), *(root / "src/spiderduck/scheduler").rglob("*.py")]:
        text = path.read_text("utf-8")
        for old in ("class QueueFull", "class NotOwner", "QueueFull(", "NotOwner("):
            assert old not in text, f"{path.relative_to(root)}: {old}"
