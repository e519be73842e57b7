"""Shard leases in a real NATS KV bucket: fair shares, joins, deaths, and never two owners."""
from __future__ import annotations

import asyncio
import itertools
import time

import grpc
import nats
import pytest
from nats.js.errors import KeyNotFoundError

from common import bus, config
from common.shards import SHARD_KEY
from common.grpc_server import GrpcServer
from common.nats_server import free_port
from fetcher import server
from fetcher.fetcher import Fetcher
from fetcher.ownership import LeaseKeeper
from spiderduck.v1 import fetcher_pb2, fetcher_pb2_grpc

TTL, MARGIN, SHARDS = 2.0, 0.6, 64


class Member:
    def __init__(self, name: str):
        self.name = name
        self.stop = asyncio.Event()

    async def start(self, url: str) -> "Member":
        self.nc = await nats.connect(url)
        kv = await bus.lease_bucket(self.nc.jetstream(), TTL)
        self.keeper = LeaseKeeper(kv, member_id=self.name, address=self.name, shards=SHARDS,
                                  ttl=TTL, margin=MARGIN)
        self.task = asyncio.create_task(self.keeper.run(self.stop))
        return self

    async def crash(self) -> None:
        """Gone without a word: its connection drops and nothing is handed back."""
        await self.nc.close()
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)

    async def leave(self) -> None:
        self.stop.set()
        await self.task
        await self.nc.close()


async def watch(members, until, timeout: float) -> float:
    """Poll until `until()`; at every look no shard is held by two members. Returns seconds."""
    started = time.monotonic()
    while True:
        held = [set(m.keeper.held()) for m in members]
        for a, b in itertools.combinations(held, 2):
            assert not a & b, f"shards held twice: {sorted(a & b)}"
        if until(held):
            return time.monotonic() - started
        assert time.monotonic() - started < timeout, [len(h) for h in held]
        await asyncio.sleep(0.02)


def fair(held, n):
    return sum(map(len, held)) == SHARDS and all(len(h) <= -(-SHARDS // n) for h in held)


async def test_a_member_that_joins_takes_a_fair_share(nats_server):
    a, b = [await Member(n).start(nats_server.url) for n in ("a", "b")]
    await watch([a, b], lambda h: fair(h, 2), 15)
    c = await Member("c").start(nats_server.url)
    await watch([a, b, c], lambda h: fair(h, 3) and all(h), 15)
    for m in (a, b, c):
        await m.leave()


async def test_a_dead_members_shards_move_within_a_lease_ttl_of_its_last_renewal(nats_server):
    members = [await Member(n).start(nats_server.url) for n in ("a", "b", "c")]
    await watch(members, lambda h: fair(h, 3) and all(h), 15)
    dead, survivors = members[0], members[1:]
    await dead.crash()
    moved = await watch(survivors, lambda h: fair(h, 2), 15)
    assert moved <= TTL + 1.0, moved
    for m in survivors:
        await m.leave()


async def test_a_member_that_leaves_hands_its_shards_over_at_once(nats_server):
    a, b = [await Member(n).start(nats_server.url) for n in ("a", "b")]
    await watch([a, b], lambda h: fair(h, 2) and all(h), 15)
    await a.leave()
    handed = await watch([b], lambda h: len(h[0]) == SHARDS, 15)
    assert handed < TTL, handed            # no waiting for expiry
    await b.leave()


async def test_after_a_failover_a_lease_renewed_unseen_or_expired_is_kept_and_anothers_is_lost(
        nats_server, caplog):
    """A NATS failover of the bucket can store a renewal whose answer is lost, or let a key's
    TTL run out while there is no leader to renew on (no other member is told): the keeper
    keeps those shards. A key another member wrote is lost, as before."""
    a = await Member("a").start(nats_server.url)
    await watch([a], lambda h: len(h[0]) == SHARDS, 15)
    kv, js = a.keeper._kv, a.nc.jetstream()
    mine = (await kv.get(SHARD_KEY.format(0))).value
    renewed_unseen = await kv.update(SHARD_KEY.format(0), mine,
                                     last=(await kv.get(SHARD_KEY.format(0))).revision)
    await js.purge_stream(f"KV_{bus.LEASE_BUCKET}",
                          subject=f"$KV.{bus.LEASE_BUCKET}.{SHARD_KEY.format(1)}")   # expired
    await kv.put(SHARD_KEY.format(2), b'{"owner": "b", "address": "b"}')

    async def settled():
        try:
            entries = [await kv.get(SHARD_KEY.format(n)) for n in range(2)]
        except KeyNotFoundError:           # shard 1 not taken again yet
            return False
        return (entries[0].revision > renewed_unseen and entries[1].value == mine
                and 2 not in a.keeper.held())
    deadline = time.monotonic() + 5 * TTL
    while not await settled():
        assert {0, 1} <= set(a.keeper.held()), a.keeper.held()
        assert time.monotonic() < deadline, "the keeper did not renew shards 0 and 1"
        await asyncio.sleep(0.02)
    lost = [r.getMessage() for r in caplog.records if "lost the lease" in r.getMessage()]
    assert lost == ["lost the lease of shard 2"], lost
    await a.leave()


class Nobody:
    def owns(self, domain: str) -> bool:
        return False


async def test_a_fetcher_asked_for_a_shard_it_does_not_hold_answers_failed_precondition(localweb):
    localweb.page("x.test", "/", "<title>x</title>")
    s = config.load(env={}, overrides={"fetcher.listen": f"127.0.0.1:{free_port()}",
                                       "fetcher.allowed_networks": ["127.0.0.0/8"],
                                       "fetcher.dns_overrides": {"*.test": "127.0.0.1"}}).fetcher
    async with Fetcher(s) as f:
        f.ownership = Nobody()
        grpc_server = GrpcServer(s.listen)
        server.register(grpc_server, f)
        async with grpc_server, grpc.aio.insecure_channel(s.listen) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await fetcher_pb2_grpc.FetcherServiceStub(channel).Fetch(
                    fetcher_pb2.FetchRequest(url=localweb.url("x.test", "/")))
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert localweb.hits == []
