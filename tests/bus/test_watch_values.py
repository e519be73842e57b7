"""bus.watch_values: a KV bucket's values at the start, whole even when nats-py puts its
end-of-values marker ahead of values already on their way (a race in KeyValue.watch seen under
load: a fetcher then started without its domain controls, a scheduler without its denylist).
The race cannot be made to happen on demand against a real server, so the watcher is a stand-in
with nats-py's interface (updates(timeout), stop()); the real bucket's path is tested too."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

import nats
import pytest
from nats.js.api import KeyValueConfig

from spiderduck.bus.streams import watch_values


class Watcher:
    def __init__(self, updates):
        self._updates = list(updates)
        self.stopped = False

    async def updates(self, timeout):
        if not self._updates:
            raise asyncio.TimeoutError()
        return self._updates.pop(0)

    async def stop(self):
        self.stopped = True


class Bucket:
    def __init__(self, values, updates, history=1):
        self.watcher = Watcher(updates)
        self._status = SimpleNamespace(values=values, history=history)

    async def status(self):
        return self._status

    async def watchall(self):
        return self.watcher


def entry(key):
    return SimpleNamespace(key=key, revision=1)


async def test_values_after_an_early_marker_are_waited_for():
    a, b = entry("a"), entry("b")
    watcher, found = await watch_values(Bucket(2, [None, a, b]), timeout=0.01)
    assert found == [a, b]


async def test_the_usual_order_ends_at_the_marker():
    a, b, later = entry("a"), entry("b"), entry("later")
    bucket = Bucket(2, [a, b, None, later])
    watcher, found = await watch_values(bucket, timeout=0.01)
    assert found == [a, b] and bucket.watcher._updates == [later]     # a later change is the watch's


async def test_a_value_gone_meanwhile_costs_one_wait_and_no_marker_is_an_error():
    watcher, found = await watch_values(Bucket(1, [None]), timeout=0.01)
    assert found == []
    bucket = Bucket(0, [])
    with pytest.raises(asyncio.TimeoutError):
        await watch_values(bucket, timeout=0.01)
    assert bucket.watcher.stopped


async def test_a_bucket_that_keeps_history_ends_at_the_marker():
    a = entry("a")
    watcher, found = await watch_values(Bucket(5, [a, None], history=3), timeout=0.01)
    assert found == [a]


async def test_a_real_buckets_values(nats_server):
    nc = await nats.connect(nats_server.url)
    try:
        kv = await nc.jetstream().create_key_value(KeyValueConfig(bucket="watched", history=1))
        for n in range(20):
            await kv.put(f"k{n}", b"v")
        await kv.delete("k3")
        watcher, found = await watch_values(kv, timeout=5)
        await watcher.stop()
    finally:
        await nc.close()
    assert sorted(e.key for e in found) == sorted(f"k{n}" for n in range(20))
    assert [e.operation for e in found if e.key == "k3"] == ["DEL"]
