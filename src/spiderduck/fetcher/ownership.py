"""Which shards (and so which domains) this fetcher may serve: leases in NATS KV.

DESIGN "Ownership of domain queues". Domains hash onto `fetcher.shards` shards. A
fetcher serves a shard only while it holds the shard's lease, a key `shard.N` in the
KV bucket `spiderduck_fetcher_leases`, taken by atomic create, renewed by revision
(compare-and-set), and expiring through the bucket's TTL when not renewed. Members
announce themselves as `member.ID` keys in the same bucket; each keeper takes a fair
share (ceil(shards / live members)) and releases what it holds above it.

No domain has two owners at once: a lease is trusted locally only until
(time the renewal was sent + TTL - margin), so a fetcher that cannot renew stops
serving before its key can expire and be taken by another. A lease given up on
purpose is deleted only after the shard's domains are quiet (their last request
start is at least one interval in the past), so the next owner's first request
keeps the domain's spacing.

Keepers watch the bucket. A key whose revision has not changed for a whole TTL of
the watcher's own clock belongs to a fetcher that stopped renewing: its owner stopped
serving at least `margin` ago, so the keeper takes it over by compare-and-set on that
stale revision without waiting for the server to expire it, and counts the member as
gone. Keepers wake up exactly when the next lease goes stale, so a dead fetcher's
shards move within one TTL of its last renewal.
"""
from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Awaitable, Callable, Protocol

from nats.js.errors import KeyDeletedError, KeyNotFoundError, KeyWrongLastSequenceError

from spiderduck.bus.shards import SHARD_KEY, encode_lease, member_key, shard_number, shard_of

if TYPE_CHECKING:
    from spiderduck.fetcher.politeness import Politeness


log = logging.getLogger("spiderduck.fetcher")

# Seconds until each shard's domains are quiet, for the shards not quiet yet: see quiet_for.
QuietFor = Callable[[], dict[int, float]]


def quiet_for(politeness: "Politeness", shards: int,
              clock: Callable[[], float] = time.monotonic) -> QuietFor:
    """A keeper's `quiet_for` over a fetcher's politeness: for each shard with a domain that may
    not yet see its next request from a new owner (its last start + its interval), the seconds
    until all of them may; a shard missing is quiet. One pass over the domains (asked shard by
    shard, 5,000 domains over 1,024 shards took 3.9 s of CPU). Needs the Politeness only, so
    the keeper is built before the Fetcher."""
    def waits() -> dict[int, float]:
        now = clock()
        found: dict[int, float] = {}
        for domain, slot in politeness.slots().items():
            wait = slot.last_start + slot.interval - now
            if wait > 0:
                shard = shard_of(domain, shards)
                found[shard] = max(wait, found.get(shard, 0.0))
        return found
    return waits


class Ownership(Protocol):
    """What a Fetcher asks, given at its construction: AllShards or a LeaseKeeper."""

    def owns(self, domain: str) -> bool: ...


class AllShards:
    """`spiderduck up`: one process simply holds every shard."""

    def owns(self, domain: str) -> bool:
        return True

    def held(self) -> list[int]:
        return []


@dataclass
class _Lease:
    revision: int
    valid_until: float          # monotonic


class LeaseKeeper:
    def __init__(self, kv, *, member_id: str, address: str, shards: int, ttl: float,
                 margin: float, quiet_for: QuietFor | None = None, release_wait: float = math.inf,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        if margin >= ttl:
            raise ValueError("fetcher.lease_margin must be shorter than fetcher.lease_ttl")
        self._kv = kv
        self.member_id = member_id
        self._value = encode_lease(member_id, address)
        self._shards = shards
        self._ttl = ttl
        self._margin = margin
        self._quiet_for = quiet_for or dict
        self._release_wait = release_wait
        self._clock = clock
        self._sleep = sleep
        self._leases: dict[int, _Lease] = {}
        self._seen: dict[str, tuple[int, float]] = {}   # key -> (revision, when first seen)
        self._watcher = None
        self._watch_task: asyncio.Task | None = None
        self._order = list(range(shards))
        random.Random(member_id).shuffle(self._order)   # members try free shards in different orders

    # --- the question the fetcher asks ---------------------------------------------
    def owns_shard(self, shard: int) -> bool:
        lease = self._leases.get(shard)
        return lease is not None and self._clock() < lease.valid_until

    def owns(self, domain: str) -> bool:
        return self.owns_shard(shard_of(domain, self._shards))

    def held(self) -> list[int]:
        return sorted(s for s in self._leases if self.owns_shard(s))

    # --- the loop --------------------------------------------------------------------
    @property
    def interval(self) -> float:
        return self._ttl / 4

    async def run(self, stop: asyncio.Event) -> None:
        """Keep a fair share of leases until `stop`; then hand them back."""
        self._watcher = await self._kv.watchall()
        self._watch_task = asyncio.create_task(self._watch())
        try:
            while not stop.is_set():
                try:
                    await self.tick()
                except Exception as exc:     # NATS trouble: leases lapse on their own; keep trying
                    log.warning("lease renewal failed: %r", exc)
                await self._pause(stop, self._next_wakeup())
        finally:
            self._watch_task.cancel()
            await asyncio.gather(self._watch_task, return_exceptions=True)
            await self.release_all()
            try:
                await self._watcher.stop()
            except Exception:
                pass

    async def _pause(self, stop: asyncio.Event, seconds: float) -> None:
        """Until `stop` is set or `seconds` have passed, slept on the keeper's own `sleep` (so a
        test's clock decides when the next tick comes)."""
        sleeping = asyncio.ensure_future(self._sleep(seconds))
        stopping = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait((sleeping, stopping), return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeping.cancel()
            stopping.cancel()

    async def _watch(self) -> None:
        # `async for` (not updates(timeout=...)): asyncio.wait_for in Python 3.11 can swallow
        # a cancellation, which would leave this task running after close.
        async for entry in self._watcher:
            if entry is None:
                continue
            if entry.operation in ("DEL", "PURGE") or not entry.value:
                self._seen.pop(entry.key, None)
            elif self._seen.get(entry.key, (None,))[0] != entry.revision:
                self._seen[entry.key] = (entry.revision, self._clock())

    def _stale(self, key: str) -> bool:
        _, since = self._seen[key]
        return self._clock() - since >= self._ttl

    def _next_wakeup(self) -> float:
        """The renewal interval, or sooner when another member's lease goes stale."""
        now = self._clock()
        deadlines = [since + self._ttl - now for key, (_, since) in self._seen.items()
                     if shard_number(key) not in self._leases and key != member_key(self.member_id)]
        upcoming = [d for d in deadlines if d > 0]
        return max(0.05, min([self.interval, *upcoming]) + 0.01)

    async def tick(self) -> None:
        await self._kv.put(member_key(self.member_id), self._value)
        members, others = self._survey()
        fair = math.ceil(self._shards / max(1, members))
        if len(self._leases) < fair:          # takeovers first: a dead member's domains wait
            await self._acquire(fair - len(self._leases), others)
        await self._renew()
        if len(self._leases) > fair:
            await self._release(sorted(self._leases)[fair:])

    def _survey(self) -> tuple[int, dict[int, int | None]]:
        """Live members, and the shards held by others: shard -> its stale revision, or None.

        Read from what the watch has seen (run() starts it before the first tick)."""
        members = 1 + sum(1 for k in list(self._seen) if k.startswith("member.")
                          and k != member_key(self.member_id) and not self._stale(k))
        others: dict[int, int | None] = {}
        for key, (revision, _) in list(self._seen.items()):
            shard = shard_number(key)
            if shard is not None and shard not in self._leases:
                others[shard] = revision if self._stale(key) else None
        return members, others

    async def _renew(self) -> None:
        """Renew the leases not renewed within half an interval (extra wake-ups stay cheap)."""
        due_before = self._clock() + (self._ttl - self._margin) - self.interval / 2

        async def renew(shard: int, lease: _Lease) -> None:
            key = SHARD_KEY.format(shard)
            sent = self._clock()
            try:
                revision = await self._kv.update(key, self._value, last=lease.revision)
            except KeyWrongLastSequenceError:
                sent = self._clock()
                revision = await self._retake(key) if shard in self._leases else None
                if revision is None:
                    log.warning("lost the lease of shard %d", shard)
                    self._leases.pop(shard, None)
                    return
            self._leases[shard] = _Lease(revision, sent + self._ttl - self._margin)
        await _bounded_gather([renew(s, l) for s, l in list(self._leases.items())
                               if l.valid_until <= due_before])

    async def _retake(self, key: str) -> int | None:
        """A renewal met another revision than ours, typically after a NATS failover of the
        bucket. Nobody took the shard when that revision holds this member's own lease (a
        renewal NATS stored but whose answer the failover lost, or one sent again by a tick
        that overlapped a failed one): renew on it. Nobody holds it when the key is gone (its
        TTL ran out while the bucket had no leader; no other member is told of that): take it
        again by atomic create. Else another member holds it: None, the lease is lost."""
        try:
            entry = await self._kv.get(key)
        except (KeyNotFoundError, KeyDeletedError):
            entry = None
        try:
            if entry is None:
                return await self._kv.create(key, self._value)
            if entry.value == self._value:
                return await self._kv.update(key, self._value, last=entry.revision)
        except KeyWrongLastSequenceError:
            pass
        return None

    async def _acquire(self, wanted: int, others: dict[int, int | None]) -> None:
        """Take free shards (atomic create) and stale ones (compare-and-set on the stale revision)."""
        free = [s for s in self._order
                if s not in self._leases and (s not in others or others[s] is not None)]
        got = 0
        next_index = 0
        while got < wanted and next_index < len(free):
            batch = free[next_index:next_index + min(64, wanted - got)]
            next_index += len(batch)

            async def create(shard: int) -> bool:
                sent = self._clock()
                stale = others.get(shard)
                key = SHARD_KEY.format(shard)
                try:
                    if stale is None:
                        revision = await self._kv.create(key, self._value)
                    else:
                        try:
                            revision = await self._kv.update(key, self._value, last=stale)
                        except KeyWrongLastSequenceError:
                            # Renewed after all, or already expired by the server: then it is free.
                            revision = await self._kv.create(key, self._value)
                except KeyWrongLastSequenceError:
                    return False
                self._leases[shard] = _Lease(revision, sent + self._ttl - self._margin)
                return True
            got += sum(await _bounded_gather([create(s) for s in batch]))
        if got:
            log.info("%s took %d shard leases (holds %d)", self.member_id, got, len(self._leases))

    async def _release(self, shards: list[int]) -> None:
        """Stop serving, wait until the shards' domains are quiet (at most `release_wait`), then
        delete the keys of the quiet ones. A shard whose domains are still not quiet is left to
        lapse (lease_ttl): deleting it would let a new owner start on them at once."""
        leases = {s: self._leases.pop(s) for s in shards if s in self._leases}
        if not leases:
            return
        waits = self._quiet_for()
        wait = min(max([0.0, *(waits.get(s, 0.0) for s in leases)]), self._release_wait)
        if wait > 0:
            await self._sleep(wait)
            waits = self._quiet_for()
        quiet = {s: lease for s, lease in leases.items() if s not in waits}
        if len(quiet) < len(leases):
            log.info("%s leaves %d shard leases to lapse: their domains are not quiet yet",
                     self.member_id, len(leases) - len(quiet))

        async def delete(shard: int, lease: _Lease) -> None:
            try:
                await self._kv.delete(SHARD_KEY.format(shard), last=lease.revision)
            except KeyWrongLastSequenceError:
                pass
        await _bounded_gather([delete(s, l) for s, l in quiet.items()])
        log.info("%s released %d shard leases (holds %d)", self.member_id, len(quiet), len(self._leases))

    async def release_all(self) -> None:
        try:
            await self._release(list(self._leases))
            await self._kv.delete(member_key(self.member_id))
        except Exception as exc:       # the leases expire by themselves
            log.warning("could not hand back leases: %r", exc)


async def _bounded_gather(coros: list, limit: int = 64) -> list:
    """The coroutines' results, at most `limit` running at a time. Cancelled (a keeper stopped
    mid-tick), those still waiting for the gate are closed, never left un-awaited."""
    gate = asyncio.Semaphore(limit)

    async def one(coro):
        try:
            async with gate:
                return await coro
        finally:
            coro.close()            # a no-op once it ran; else it never started
    return await asyncio.gather(*(one(c) for c in coros))
