"""Operators' domain controls: the value, Politeness putting kept controls in force (fake clocks),
and the KV store and DomainControls against a real nats-server."""
from __future__ import annotations

import asyncio

import nats
import pytest
from nats.js.api import KeyValueConfig

from spiderduck.core.config import FetcherSettings
from spiderduck.core.errors import BusError
from spiderduck.core.fetch import FetchResult
from spiderduck.core.status import Status
from spiderduck.fetcher import domain_controls
from spiderduck.fetcher.domain_controls import ControlStore, DomainControl, DomainControls
from spiderduck.fetcher.fetcher import politeness_for
from spiderduck.fetcher.politeness import DomainHalted, Politeness
from support.clock import FakeClock
from support.controls_kv import bucket, eventually

WALL = 1_700_000_000.0


def polite(clock: FakeClock, wall: FakeClock, **kw) -> Politeness:
    """The slots of a fetcher with these fetcher.* settings."""
    return politeness_for(FetcherSettings(**{"default_rate": 1.0, **kw}), clock=clock, sleep=clock.sleep, wall=wall)


# --- the value ---------------------------------------------------------------------------------

def test_a_control_is_its_json_and_an_ipv6_domain_has_a_key_of_its_own():
    control = DomainControl("example.com", paused_until=WALL + 60, reason="r", rate=0.5,
                            by="fetcher-1", at=WALL)
    assert DomainControl.from_json(control.to_json()) == control
    assert DomainControl.from_json(b'{"domain": "x.test", "later": 1}') == DomainControl("x.test")
    for garbage in (b"", b"[]", b'{"rate": 1}', b'{"domain": "x.test", "rate": -1}',
                    b'{"domain": "x.test", "paused_until": "soon"}'):
        with pytest.raises(ValueError):
            DomainControl.from_json(garbage)
    assert domain_controls.key_of("example.com") == "example.com"
    assert domain_controls.key_of("[2001:db8::1]") == "2001_db8__1"
    assert domain_controls.domain_of_key("2001_db8__1") == "[2001:db8::1]"


def test_changes_validate_and_a_longer_pause_is_kept():
    control = DomainControl("d.test").paused(WALL, 100)
    assert control.paused(WALL, 10).paused_until == WALL + 100
    assert control.paused(WALL, 200, "maintenance") == DomainControl("d.test", WALL + 200, reason="maintenance")
    assert control.holds(WALL + 99) and control.is_empty(WALL + 100)
    assert control.rated(2).resumed() == DomainControl("d.test", rate=2)
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            control.paused(WALL, bad)
        with pytest.raises(ValueError):
            control.rated(bad)


# --- Politeness: kept controls in force --------------------------------------------------------

async def test_a_kept_pause_holds_the_slot_created_later_for_the_time_left_on_the_wall_clock():
    clock, wall = FakeClock(100.0), FakeClock(WALL)
    p = polite(clock, wall)
    p.restore(DomainControl("d.test", paused_until=WALL + 30, reason="paused by an operator", rate=4))
    p.restore(DomainControl("gone.test", paused_until=WALL - 1, reason="over"))
    assert p.controlled() == ["d.test"] and len(p) == 0        # no slot until one is needed
    wall.now += 10
    info = p.slot("d.test").info(p.rate_source("d.test"))
    assert (info.state, info.paused_for, info.rate, info.rate_source) == ("paused", 20, 4, "operator")
    assert p.slot("gone.test").info("default").state == "active"
    waited = await p.slot("d.test").turn()
    assert waited == pytest.approx(20)


async def test_a_kept_halt_fails_the_slot_fast_and_a_kept_resume_lifts_it():
    clock, wall = FakeClock(), FakeClock(WALL)
    p = polite(clock, wall)
    slot = p.slot("d.test")
    p.restore(DomainControl("d.test", halted=True, reason="50 failures in a row"))
    with pytest.raises(DomainHalted, match="50 failures in a row"):
        await slot.turn()
    p.restore(DomainControl("d.test"))                           # the owner resumed it
    assert slot.info("default").state == "active" and p.controlled() == []
    await slot.turn()


async def test_a_halt_after_failures_is_recorded_as_a_control_and_told():
    clock, wall = FakeClock(), FakeClock(WALL)
    p = polite(clock, wall, halt_after_failures=2, pause_error_ratio=1.0)
    told = []
    p.on_halt = told.append
    slot = p.slot("d.test")
    for _ in range(2):
        slot.observe(FetchResult(url="http://d.test/", status=Status.TIMEOUT))
    assert told == ["d.test"]
    control = p.control("d.test")
    assert control.halted and control.reason == "2 failures in a row (last: TIMEOUT)"
    p.resume("d.test")
    assert p.control("d.test") == DomainControl("d.test") and not slot.halted


# --- the KV store, with a real nats-server -----------------------------------------------------

async def test_the_bucket_is_opened_again_as_it_is(nats_server):
    nc = await nats.connect(nats_server.url)
    try:
        js = nc.jetstream()
        made = await js.create_key_value(KeyValueConfig(bucket=domain_controls.BUCKET, history=5))
        await made.put("x.test", b"{}")
        kv = await domain_controls.open_bucket(js)         # made otherwise: used as it is
        assert (await kv.get("x.test")).value == b"{}"
        with pytest.raises(BusError, match="replicas > 1 not supported"):
            await domain_controls.open_bucket(js, replicas=3)
    finally:
        await nc.close()
    async with bucket(nats_server.url) as kv:
        assert (await kv.get("x.test")).value == b"{}"


async def test_at_start_what_holds_nothing_any_more_is_deleted_and_the_rest_put_in_force(nats_server):
    wall = FakeClock(WALL)
    async with bucket(nats_server.url) as kv:
        store = ControlStore(kv)
        for control in (DomainControl("over.test", paused_until=WALL - 5, reason="old"),
                        DomainControl("rated.test", paused_until=WALL - 5, reason="old", rate=2),
                        DomainControl("paused.test", paused_until=WALL + 50, reason="kept")):
            await store.put(control)
        await kv.put("bad.test", b"not json")
        p = polite(FakeClock(), wall)
        async with DomainControls(p, ControlStore(kv), writer="f1", wall=wall):
            assert p.controlled() == ["paused.test", "rated.test"]
            assert p.rate_for("rated.test") == 2
        assert sorted(await kv.keys()) == ["bad.test", "paused.test", "rated.test"]


async def test_a_new_owner_honours_what_another_fetcher_kept_and_sees_its_resume(nats_server):
    """Two fetchers on one bucket: what A keeps, B (already running) puts in force when the
    domain comes to it, as when a shard's lease moves."""
    async with bucket(nats_server.url) as kv:
        a, b = politeness_for(FetcherSettings(default_rate=1.0)), politeness_for(FetcherSettings(default_rate=1.0))
        async with DomainControls(a, ControlStore(kv), writer="a") as ca, \
                DomainControls(b, ControlStore(kv), writer="b"):
            await ca.pause("moved.test", 600, "maintenance")
            await ca.set_rate("moved.test", 0.25)
            await eventually(lambda: b.control("moved.test").rate == 0.25)
            info = b.slot("moved.test").info(b.rate_source("moved.test"))
            assert (info.state, info.reason, info.rate) == ("paused", "maintenance", 0.25)
            assert info.paused_for == pytest.approx(600, abs=5)
            assert b.control("moved.test").by == "a"
            await ca.resume("moved.test")
            await eventually(lambda: not b.control("moved.test").holds(0))
            assert b.slot("moved.test").info("operator").state == "active"
            assert b.rate_for("moved.test") == 0.25                    # a resume keeps the rate


async def test_a_resume_is_not_undone_by_the_echo_of_the_pause_before_it(nats_server):
    async with bucket(nats_server.url) as kv:
        p = politeness_for(FetcherSettings(default_rate=1.0))
        controls = DomainControls(p, ControlStore(kv), writer="a")
        seen = []
        deleted = asyncio.Event()
        changed = controls._changed

        def spy(domain, control):                      # the watch's view, in stream order
            seen.append(control)
            changed(domain, control)
            if control is None:
                deleted.set()
        controls._changed = spy
        async with controls:
            await controls.pause("e.test", 600)
            await controls.resume("e.test")
            await asyncio.wait_for(deleted.wait(), 10)
            assert p.slot("e.test").info("default").state == "active"
            assert p.control("e.test") == DomainControl("e.test")


async def test_when_nats_cannot_keep_a_change_it_is_not_applied(nats_server):
    p = politeness_for(FetcherSettings(default_rate=1.0))
    nc = await nats.connect(nats_server.url)
    kv = await domain_controls.open_bucket(nc.jetstream())
    async with DomainControls(p, ControlStore(kv), writer="a") as controls:
        await nc.close()
        with pytest.raises(BusError, match="cannot write x.test in KV bucket spiderduck_domain_controls"):
            await controls.pause("x.test", 60)
        with pytest.raises(BusError):
            await controls.set_rate("x.test", 3)
    assert p.controlled() == [] and len(p) == 0


async def test_a_forged_rate_in_the_bucket_is_held_to_max_rate(nats_server, caplog):
    """Whoever can write the bucket (not through FetcherAdmin, which refuses a rate above
    fetcher.max_rate) sets 100000/s: the domain gets fetcher.max_rate, at start and on the watch."""
    forged = DomainControl("forged.test", rate=100_000.0, by="mallory").to_json()
    async with bucket(nats_server.url) as kv:
        await kv.put("forged.test", forged)
        p = politeness_for(FetcherSettings(default_rate=1.0, max_rate=5.0))
        async with DomainControls(p, ControlStore(kv, max_rate=5.0), writer="a"):
            assert p.rate_for("forged.test") == 5.0
            assert p.slot("forged.test").info(p.rate_source("forged.test")).rate == 5.0
            await kv.put("later.test", DomainControl("later.test", rate=3.0).to_json())      # under: as written
            await eventually(lambda: p.rate_for("later.test") == 3.0)
            await kv.put("later.test", DomainControl("later.test", rate=1e300).to_json())
            await eventually(lambda: p.rate_for("later.test") != 3.0)
            assert p.rate_for("later.test") == 5.0
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING" and "max_rate" in r.getMessage()]
    assert [w.split(" sets ")[0] for w in warnings] == [
        f"KV bucket {domain_controls.BUCKET}: entry forged.test", f"KV bucket {domain_controls.BUCKET}: entry later.test"]
