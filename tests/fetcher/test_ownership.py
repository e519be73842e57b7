"""Shard leases in a real NATS KV bucket: fair shares, joins, deaths, and never two owners.

The members share a ManualClock: lease validity, staleness and the keepers' wake-ups run on
it, and the tests move it a STEP at a time, each step only once every keeper is done with
the last (ticks and their NATS round trips take the real time they take). So "within a TTL"
is measured on the keepers' own clock, not on a loaded machine's, and no test waits a lease
out in real time. The bucket's own TTL is long: no lease expires on the server during a test,
so a dead member's shards move by the keepers' takeover of stale leases.
"""
from __future__ import annotations

import asyncio
import itertools

import grpc
import nats
import pytest
from nats.js.errors import KeyDeletedError, KeyNotFoundError

from spiderduck.bus import streams as bus

from spiderduck.bus.shards import SHARD_KEY, decode_lease, encode_lease, shard_of
from spiderduck.cli.nats_server import free_port
from spiderduck.core import config
from spiderduck.core.config import FetcherSettings
from spiderduck.core.errors import WrongFetcher
from spiderduck.core.status import Status
from spiderduck.fetcher import server
from spiderduck.fetcher.fetcher import Fetcher, politeness_for
from spiderduck.fetcher.main import run_fetcher
from spiderduck.fetcher.ownership import AllShards, LeaseKeeper, quiet_for
from spiderduck.rpc.server import GrpcServer
from spiderduck.v1 import fetcher_pb2, fetcher_pb2_grpc
from support.clock import FakeClock
from support.manual_clock import ManualClock

TTL, MARGIN, SHARDS = 2.0, 0.6, 64
STEP = TTL / 32          # how far the clock moves at a time (a binary fraction: sums stay exact)
BUCKET_TTL = 3600.0      # real seconds: nothing expires on the server while a test runs
SETTLE = 10.0            # real seconds the keepers get to finish what one step woke them for


class Member:
    def __init__(self, name: str, clock: ManualClock, **keeper):
        self.name = name
        self.clock = clock
        self.keeper_options = keeper          # quiet_for, release_wait
        self.stop = asyncio.Event()

    async def start(self, url: str) -> "Member":
        self.nc = await nats.connect(url)
        kv = await bus.lease_bucket(self.nc.jetstream(), BUCKET_TTL)
        self.keeper = LeaseKeeper(kv, member_id=self.name, address=self.name, shards=SHARDS,
                                  ttl=TTL, margin=MARGIN, clock=self.clock, sleep=self.clock.sleep,
                                  **self.keeper_options)
        self.task = asyncio.create_task(self.keeper.run(self.stop))
        return self

    def held(self) -> list[int]:
        return self.keeper.held()

    async def crash(self) -> "Ghost":
        """Gone without a word: its connection drops and nothing is handed back. Returns its
        leases as it last knew them. Called between steps, so the keeper is asleep, not
        cancelled halfway through a tick (which would leave its unstarted NATS calls
        never awaited)."""
        ghost = Ghost(self)
        await self.nc.close()
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)
        return ghost

    async def leave(self) -> None:
        self.stop.set()
        await self.task
        await self.nc.close()


class Ghost:
    """A crashed member's leases as it last knew them: a shard counts as held until the
    keeper itself would have stopped serving it (its renewal's send time + TTL - margin)."""

    def __init__(self, member: Member):
        self.clock = member.clock
        self.until = {s: lease.valid_until for s, lease in member.keeper._leases.items()}

    def held(self) -> list[int]:
        return sorted(s for s, until in self.until.items() if self.clock() < until)


def look(holders) -> list[set[int]]:
    held = [set(h.held()) for h in holders]
    for a, b in itertools.combinations(held, 2):
        assert not a & b, f"shards held twice: {sorted(a & b)}"
    return held


async def settle(clock: ManualClock, members, holders) -> list[set[int]]:
    """Wait until every running keeper is asleep again, looking all the while (no shard held
    twice); returns what each holder holds then."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE
    while True:
        held = look(holders)
        if clock.asleep() == len(members):
            return held
        assert loop.time() < deadline, f"{len(members) - clock.asleep()} keeper(s) still busy"
        await asyncio.sleep(0.005)


async def step(clock: ManualClock, members, ghosts=()) -> list[set[int]]:
    clock.advance(STEP)
    return (await settle(clock, members, [*members, *ghosts]))[:len(members)]


async def watch(clock: ManualClock, members, until, timeout: float, ghosts=()) -> float:
    """Step the clock until `until(held)`; at every look no shard is held by two members, or by
    a member and a ghost. Returns the seconds of the clock it took. `members`: every running
    keeper on the clock."""
    started = clock()
    held = (await settle(clock, members, [*members, *ghosts]))[:len(members)]
    while not until(held):
        assert clock() - started < timeout, [len(h) for h in held]
        held = await step(clock, members, ghosts)
    return clock() - started


def fair(held, n):
    return sum(map(len, held)) == SHARDS and all(len(h) <= -(-SHARDS // n) for h in held)


async def test_a_member_that_joins_takes_a_fair_share(nats_server):
    clock = ManualClock()
    a, b = [await Member(n, clock).start(nats_server.url) for n in ("a", "b")]
    await watch(clock, [a, b], lambda h: fair(h, 2), 15)
    c = await Member("c", clock).start(nats_server.url)
    await watch(clock, [a, b, c], lambda h: fair(h, 3) and all(h), 15)
    for m in (a, b, c):
        await m.leave()


async def test_a_dead_members_shards_move_within_a_lease_ttl_of_its_last_renewal(nats_server):
    clock = ManualClock()
    members = [await Member(n, clock).start(nats_server.url) for n in ("a", "b", "c")]
    await watch(clock, members, lambda h: fair(h, 3) and all(h), 15)
    dead, survivors = members[0], members[1:]
    ghost = await dead.crash()
    assert ghost.held(), "the dead member held nothing to move"
    # The ghost is watched too: no survivor takes a shard the dead member still served.
    moved = await watch(clock, survivors, lambda h: fair(h, 2), 15, ghosts=[ghost])
    # A lease (or member key) is taken as stale once its revision has stood still for a TTL of
    # a survivor's clock from when it saw it: the dead member's last writes came before the
    # crash, seen at most a step later; the takeover comes at the step after the TTL.
    assert moved <= TTL + 2 * STEP, moved
    for m in survivors:
        await m.leave()


async def test_a_member_that_leaves_hands_its_shards_over_at_once(nats_server):
    clock = ManualClock()
    a, b = [await Member(n, clock).start(nats_server.url) for n in ("a", "b")]
    await watch(clock, [a, b], lambda h: fair(h, 2) and all(h), 15)
    await a.leave()
    handed = await watch(clock, [b], lambda h: len(h[0]) == SHARDS, 15)
    assert handed < TTL, handed            # no waiting for the leases to go stale
    await b.leave()


async def test_a_leaving_member_waits_for_its_shards_to_go_quiet_at_most_release_wait(nats_server):
    """The hand-back waits until a shard's domains may see a request from a new owner, but not
    past release_wait (a stop has a grace): a shard quiet within it is handed over, one that is
    not keeps its key, to lapse by the bucket's TTL, and the member is gone on time."""
    clock = ManualClock()
    quiet_at: dict[int, float] = {}
    a = await Member("a", clock, release_wait=1.0,
                     quiet_for=lambda: {s: at - clock() for s, at in quiet_at.items() if at > clock()}
                     ).start(nats_server.url)
    await watch(clock, [a], lambda h: len(h[0]) == SHARDS, 15)
    quiet_at.update({0: clock() + 0.5, 1: clock() + 60.0})     # shard 1's domains: a minute away
    a.stop.set()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE
    while clock.dues() != [clock() + 1.0]:                        # asleep in the hand-back
        assert loop.time() < deadline, clock.dues()
        await asyncio.sleep(0.005)
    clock.advance(1.0)
    await asyncio.wait_for(a.task, SETTLE)
    kv = a.keeper._kv
    assert [k for k in await kv.keys() if k.startswith("shard.")] == [SHARD_KEY.format(1)]
    await a.nc.close()


async def test_after_a_failover_a_lease_renewed_unseen_or_expired_is_kept_and_anothers_is_lost(
        nats_server, caplog):
    """A NATS failover of the bucket can store a renewal whose answer is lost, or let a key's
    TTL run out while there is no leader to renew on (no other member is told): the keeper
    keeps those shards. A key another member wrote is lost, as before."""
    clock = ManualClock()
    a = await Member("a", clock).start(nats_server.url)
    await watch(clock, [a], lambda h: len(h[0]) == SHARDS, 15)
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
    deadline = clock() + 5 * TTL
    while not await settled():
        assert {0, 1} <= set(a.keeper.held()), a.keeper.held()
        assert clock() < deadline, "the keeper did not renew shards 0 and 1"
        await step(clock, [a])
    lost = [r.getMessage() for r in caplog.records if "lost the lease" in r.getMessage()]
    assert lost == ["lost the lease of shard 2"], lost
    await a.leave()


def fetcher_settings():
    return config.load(env={}, overrides={"fetcher.listen": f"127.0.0.1:{free_port()}",
                                          "fetcher.allowed_networks": ["127.0.0.0/8"],
                                          "fetcher.dns_overrides": {"*.test": "127.0.0.1"},
                                          "fetcher.shards": SHARDS}).fetcher


class Nobody:
    def owns(self, domain: str) -> bool:
        return False


async def test_a_fetcher_asked_for_a_shard_it_does_not_hold_answers_failed_precondition(localweb):
    localweb.page("x.test", "/", "<title>x</title>")
    s = fetcher_settings()
    async with Fetcher(s, ownership=Nobody()) as f:
        grpc_server = GrpcServer(s.listen)
        server.register(grpc_server, f)
        async with grpc_server, grpc.aio.insecure_channel(s.listen) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await fetcher_pb2_grpc.FetcherServiceStub(channel).Fetch(
                    fetcher_pb2.FetchRequest(url=localweb.url("x.test", "/")))
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert localweb.hits == []


async def test_a_fetcher_built_with_a_lease_keeper_serves_the_shards_it_holds_and_no_other(
        nats_server, localweb):
    """The keeper is the Fetcher's ownership from construction (as the fetcher role builds it):
    nothing is served before the keeper holds a lease, then only the shards it holds, and the
    ownership cannot be swapped afterwards."""
    taken = shard_of("x.test", SHARDS)
    mine = next(d for d in (f"d{n}.test" for n in range(1000)) if shard_of(d, SHARDS) != taken)
    for host in ("x.test", mine):
        localweb.page(host, "/", "<title>x</title>")
    nc = await nats.connect(nats_server.url)
    kv = await bus.lease_bucket(nc.jetstream(), BUCKET_TTL)
    await kv.put(SHARD_KEY.format(taken), encode_lease("b", "b"))      # another member's, live
    clock, stop = ManualClock(), asyncio.Event()
    keeper = LeaseKeeper(kv, member_id="a", address="a", shards=SHARDS, ttl=TTL, margin=MARGIN,
                         clock=clock, sleep=clock.sleep)
    try:
        async with Fetcher(fetcher_settings(), ownership=keeper) as f:
            with pytest.raises(WrongFetcher):                     # no lease held yet
                await f.fetch(localweb.url(mine, "/"))
            task = asyncio.create_task(keeper.run(stop))
            await watch(clock, [keeper], lambda h: len(h[0]) == SHARDS - 1, 15)
            assert (await f.fetch(localweb.url(mine, "/"))).status is Status.OK
            with pytest.raises(WrongFetcher):
                await f.fetch(localweb.url("x.test", "/"))
            assert f.ownership is keeper
            with pytest.raises(AttributeError):
                f.ownership = AllShards()
            stop.set()
            await task
    finally:
        await nc.close()
    assert [h.host for h in localweb.hits if h.path == "/"] == [mine]


async def test_the_fetcher_role_advertises_the_port_it_bound_and_hands_leases_back_on_stop(nats_server):
    """The role binds its port before it builds the keeper (a `:0` listen included), so the
    leases name where the started server answers; stopped, it deletes them."""
    settings = config.load(env={}, overrides={
        "nats_url": nats_server.url, "fetcher.listen": "127.0.0.1:0", "fetcher.id": "f-bound",
        "fetcher.shards": 4})
    stop = asyncio.Event()
    task = asyncio.create_task(run_fetcher(settings, stop))
    nc = await nats.connect(nats_server.url)
    try:
        kv = await bus.lease_bucket(nc.jetstream(), settings.fetcher.lease_ttl)
        deadline = asyncio.get_running_loop().time() + 30
        while True:
            try:
                leases = [decode_lease((await kv.get(SHARD_KEY.format(n))).value) for n in range(4)]
                break
            except KeyNotFoundError:
                assert not task.done() and asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.05)
        [address] = {(lease.owner, lease.address) for lease in leases}
        assert address[0] == "f-bound" and not address[1].endswith(":0"), address
        async with grpc.aio.insecure_channel(address[1]) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as refused:     # served, and it says why
                await fetcher_pb2_grpc.FetcherServiceStub(channel).Fetch(fetcher_pb2.FetchRequest())
        assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        stop.set()
        await asyncio.wait_for(task, 30)
        for n in range(4):
            with pytest.raises((KeyNotFoundError, KeyDeletedError)):
                await kv.get(SHARD_KEY.format(n))
    finally:
        stop.set()
        await asyncio.gather(task, return_exceptions=True)
        await nc.close()


async def test_quiet_for_is_the_longest_wait_of_the_shards_domains_for_their_next_start():
    """Read from the Politeness alone: for each domain of the shard, its last start plus its
    interval, less now; 0 when every one may start now, or the shard has no domain."""
    clock = FakeClock()
    domains = [f"d{n}.test" for n in range(1000)]
    slow = domains[0]
    fast = next(d for d in domains[1:] if shard_of(d, SHARDS) == shard_of(slow, SHARDS))
    other = next(d for d in domains if shard_of(d, SHARDS) != shard_of(slow, SHARDS))
    idle = next(d for d in domains
                if shard_of(d, SHARDS) not in {shard_of(slow, SHARDS), shard_of(other, SHARDS)})
    politeness = politeness_for(FetcherSettings(default_rate=4.0, rate_overrides={slow: 0.5, fast: 1.0}),
                                clock=clock, sleep=clock.sleep)
    for domain in (slow, fast, other):
        await politeness.slot(domain).turn()                   # each starts now (at 100)
    politeness.slot(idle)                                      # a slot, but no request yet
    waits = quiet_for(politeness, SHARDS, clock)

    def quiet(shard: int) -> float:
        return waits().get(shard, 0.0)
    clock.now += 0.5
    assert quiet(shard_of(slow, SHARDS)) == 1.5               # slow's interval is 2s
    assert quiet(shard_of(other, SHARDS)) == 0.0              # 0.25s, already past
    assert quiet(shard_of(idle, SHARDS)) == 0.0
    clock.now += 1.5
    assert quiet(shard_of(slow, SHARDS)) == 0.0


async def test_a_tick_cancelled_midway_leaves_no_coroutine_unawaited():
    """Cancelling a keeper mid-tick (a stop) closes the renewals still waiting for the gate."""
    import gc
    import warnings

    from spiderduck.fetcher.ownership import _bounded_gather
    started = []

    async def renew(n):
        started.append(n)
        await asyncio.sleep(3600)

    task = asyncio.create_task(_bounded_gather([renew(n) for n in range(10)], limit=2))
    while len(started) < 2:
        await asyncio.sleep(0)
    task.cancel()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            await task
        except asyncio.CancelledError:
            pass                                   # (no traceback kept: it holds the list)
        del task                                   # the unstarted ones are freed with it,
        for _ in range(10):                        # once their cancelled tasks have run
            await asyncio.sleep(0)
        gc.collect()
    assert started == [0, 1]
    assert not [w for w in caught if "never awaited" in str(w.message)]
