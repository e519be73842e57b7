"""The intake against a real nats-server: each message handed on as it arrives, never more than asked."""
from __future__ import annotations

import asyncio

import nats
from nats.js.api import AckPolicy, ConsumerConfig

from spiderduck.bus import streams as bus
from spiderduck.scheduler.intake import PullIntake


async def connected(nats_server):
    nc = await nats.connect(nats_server.url)
    js = nc.jetstream()
    await bus.ensure_streams(js)
    intake = PullIntake(nc, js, stream=bus.URLS_STREAM, durable="test-intake",
                        config=ConsumerConfig(durable_name="test-intake", ack_policy=AckPolicy.EXPLICIT,
                                              filter_subject=bus.SUBMIT_SUBJECT))
    await intake.start()
    return nc, js, intake


async def test_a_message_is_handed_on_while_its_pull_request_is_still_open(nats_server, monkeypatch):
    monkeypatch.setattr("spiderduck.scheduler.intake.PULL_EXPIRES", 30.0)   # one request for the whole test
    nc, js, intake = await connected(nats_server)
    got: list[bytes] = []
    arrived = asyncio.Event()

    async def consume():
        async for msg in intake.pull(64):          # room for 64: the request stays open
            got.append(msg.data)
            await msg.ack()
            arrived.set()

    task = asyncio.create_task(consume())
    try:
        for n, data in enumerate((b"http://one.test/", b"http://two.test/")):
            arrived.clear()
            await js.publish(bus.SUBMIT_SUBJECT, data)
            await asyncio.wait_for(arrived.wait(), 10)
            assert got == [b"http://one.test/", b"http://two.test/"][:n + 1]
            assert not task.done()                  # the same request, 62 messages still wanted
    finally:
        task.cancel()
        await intake.stop()
        await nc.close()


async def test_a_pull_takes_no_more_than_it_asks_for(nats_server):
    nc, js, intake = await connected(nats_server)
    try:
        for n in range(5):
            await js.publish(bus.SUBMIT_SUBJECT, f"http://{n}.test/".encode())
        first = [msg async for msg in intake.pull(3)]   # ends by itself once it has 3
        assert [m.data for m in first] == [f"http://{n}.test/".encode() for n in range(3)]
        rest = []
        async for msg in intake.pull(10):
            rest.append(msg)
            if len(rest) == 2:
                break
        assert [m.data for m in rest] == [b"http://3.test/", b"http://4.test/"]
        for msg in first + rest:
            await msg.ack()
    finally:
        await intake.stop()
        await nc.close()


async def test_at_shutdown_what_the_open_request_still_brings_is_handed_back(nats_server, monkeypatch):
    monkeypatch.setattr("spiderduck.scheduler.intake.PULL_EXPIRES", 3.0)
    nc, js, intake = await connected(nats_server)
    try:
        await js.publish(bus.SUBMIT_SUBJECT, b"http://first.test/")
        async for msg in intake.pull(10):         # the consumer stops after one: 9 still open
            await msg.ack()
            break
        await js.publish(bus.SUBMIT_SUBJECT, b"http://late.test/")
        late = await asyncio.wait_for(intake.leftovers(), 10)   # until the request ends
        assert [m.data for m in late] == [b"http://late.test/"]
        await late[0].nak()
        redelivered = [m async for m in intake.pull(1)]          # back at once, not after ack_wait
        assert [m.data for m in redelivered] == [b"http://late.test/"]
        assert redelivered[0].metadata.num_delivered == 2
        await redelivered[0].ack()
    finally:
        await intake.stop()
        await nc.close()


async def test_an_existing_consumer_takes_the_configured_max_ack_pending(nats_server):
    """The limit is shared by every scheduler: one created with a smaller one (an older default
    of 512) is raised when a scheduler starts with more, or added schedulers would get no work."""
    nc = await nats.connect(nats_server.url)
    js = nc.jetstream()
    await bus.ensure_streams(js)
    try:
        def config(limit):
            return ConsumerConfig(durable_name="test-limit", ack_policy=AckPolicy.EXPLICIT,
                                  filter_subject=bus.SUBMIT_SUBJECT, max_ack_pending=limit)
        await js.add_consumer(bus.URLS_STREAM, config=config(512))
        intake = PullIntake(nc, js, stream=bus.URLS_STREAM, durable="test-limit", config=config(10_000))
        await intake.start()
        await intake.stop()
        assert (await js.consumer_info(bus.URLS_STREAM, "test-limit")).config.max_ack_pending == 10_000
    finally:
        await nc.close()
