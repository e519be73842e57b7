"""URL claims in a real NATS KV bucket, two schedulers' connections: one holder at a time,
waiters woken by the release, renewals keeping a claim, a dead holder's claim taken over."""
from __future__ import annotations

import asyncio
import time

import nats
import pytest

from spiderduck.bus import streams as bus
from spiderduck.bus.claims import Claims, claim_key
from support.claim_schedulers import claim_schedulers

TTL = 1.0


@pytest.fixture
async def schedulers(nats_server):
    """Two schedulers' Claims, each on its own NATS connection, one bucket."""
    async with claim_schedulers(nats_server.url, TTL) as claims:
        yield claims


async def test_one_holder_at_a_time(schedulers):
    a, b = schedulers
    claim = await a.take("http://a.test/")
    assert claim is not None and await b.take("http://a.test/") is None
    assert await a.take("http://a.test/") is None           # not even its own holder twice
    await claim.release()
    again = await b.take("http://a.test/")
    assert again is not None
    await again.release()


async def test_a_waiter_is_woken_by_the_release(schedulers):
    a, b = schedulers
    claim = await a.take("http://a.test/")
    waiting = asyncio.create_task(b.wait("http://a.test/"))
    released_at = time.monotonic()
    await claim.release()
    assert await asyncio.wait_for(waiting, 5) is None
    assert time.monotonic() - released_at < TTL / 2            # woken by the release, not by staleness


async def test_waiting_for_a_claim_nobody_holds_returns_at_once(schedulers):
    a, b = schedulers
    assert await asyncio.wait_for(b.wait("http://free.test/"), 5) is None
    claim = await a.take("http://free.test/")
    await claim.release()
    assert await asyncio.wait_for(b.wait("http://free.test/"), 5) is None   # released: a DEL marker


async def test_a_renewed_claim_is_never_taken_over(schedulers):
    a, b = schedulers
    claim = await a.take("http://long.test/")
    first = claim.revision
    waiting = asyncio.create_task(b.wait("http://long.test/"))
    deadline = time.monotonic() + 10
    while claim.revision < first + 4 and time.monotonic() < deadline:      # 4 renewals: > 1 TTL
        await asyncio.sleep(0.05)
    assert claim.revision >= first + 4 and not waiting.done() and not claim.lost
    await claim.release()
    assert await asyncio.wait_for(waiting, 5) is None


async def test_a_dead_holders_claim_is_taken_over_within_its_ttl(schedulers):
    a, b = schedulers
    # A holder that died: its key written once, never renewed nor released.
    dead_revision = await a.kv.create(claim_key("http://orphan.test/"), b"dead-scheduler")
    started = time.monotonic()
    claim = await asyncio.wait_for(b.wait("http://orphan.test/"), 10)
    assert claim is not None and claim.revision > dead_revision
    assert time.monotonic() - started < TTL * 2.5
    assert (await b.kv.get(claim.key)).value == b"scheduler-1"
    await claim.release()


async def test_a_dead_holders_claim_the_server_dropped_is_taken_anew(nats_server):
    from nats.js.api import KeyValueConfig
    nc = await nats.connect(nats_server.url)
    # The server drops keys after 1 s, before a waiter (claim_ttl 2.5 s) would take over; and
    # after the waiter has seen the key even on a loaded machine (a key gone before the wait
    # began is simply free: None).
    try:
        kv = await bus.kv_bucket(nc.jetstream(), KeyValueConfig(bucket="spiderduck_url_claims", ttl=1.0, history=1))
        await kv.create(claim_key("http://gone.test/"), b"dead-scheduler")
        claim = await asyncio.wait_for(Claims(kv, owner="me", ttl=2.5).wait("http://gone.test/"), 10)
        assert claim is not None and (await kv.get(claim.key)).value == b"me"
        await claim.release()
    finally:
        await nc.close()


async def test_a_release_ends_even_when_the_cancel_of_a_renewal_is_lost(nats_server):
    """Python 3.11's wait_for (inside nats-py's request) drops a cancel that lands as the reply
    arrives: the renewal in flight completes instead. The release must still end at once and
    delete the claim (it used to wait for a renewal loop that never stopped: the URL hung)."""
    nc = await nats.connect(nats_server.url)
    try:
        kv = await bus.claim_bucket(nc.jetstream(), TTL)
        renewing = asyncio.Event()

        class LosesCancels:
            """The real bucket, whose update completes even when cancelled, as 3.11's does."""
            def __getattr__(self, name):
                return getattr(kv, name)

            async def update(self, *args, **kwargs):
                call = asyncio.ensure_future(kv.update(*args, **kwargs))
                renewing.set()
                try:
                    return await asyncio.shield(call)
                except asyncio.CancelledError:
                    return await call

        claims = Claims(LosesCancels(), owner="scheduler-0", ttl=0.3)
        claim = await claims.take("http://a.test/")
        await asyncio.wait_for(renewing.wait(), 5)
        await asyncio.wait_for(claim.release(), 5)
        with pytest.raises(Exception):
            await kv.get(claim_key("http://a.test/"))         # deleted: free for the next crawl
    finally:
        await nc.close()


async def test_a_claim_is_fresh_only_where_the_bucket_held_nothing_for_its_key(schedulers):
    """Fresh: nobody held or released the URL within the bucket's ttl, so no crawl elsewhere can
    have stored a record since the decider's read (it skips the second read for that)."""
    a, b = schedulers
    first = await a.take("http://a.test/")
    assert first.fresh
    await first.release()
    after_a_release = await b.take("http://a.test/")          # over the release's marker
    assert after_a_release is not None and not after_a_release.fresh
    await after_a_release.release()
