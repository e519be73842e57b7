"""Claims on URLs being crawled, shared by every scheduler: at most one crawl of a URL at a time.

    claim = await claims.take(url)        # a Claim this scheduler holds, or None
    if claim is None:
        claim = await claims.wait(url)    # until the holder lets go; a Claim if it died holding it
    ...
    await claim.release()                 # or claim.stop_renewing() now, await claim.delete() later

A claim is a key in the NATS KV bucket `spiderduck_url_claims` (`u.` + a digest of the canonical
URL), taken by atomic create, renewed by compare-and-set every third of `scheduler.claim_ttl`, and
deleted by compare-and-set when the crawl's record is stored. A scheduler that finds the key held
watches it until it is deleted. The bucket's TTL drops a key nobody renews, but the server tells
watchers nothing when it does, so a waiter counts the time itself, as the fetchers' leases do
(src/spiderduck/fetcher/ownership.py): a key whose revision has not changed for a whole claim_ttl of the waiter's
own clock belongs to a scheduler that stopped renewing, and the waiter takes it over by
compare-and-set on that revision (one waiter wins). So a scheduler that dies holding a claim loses
it within claim_ttl of its last renewal, plus the time its message takes to come back.
"""
from __future__ import annotations

import asyncio
import logging
import time

from nats.errors import Error as NatsError
from nats.js.errors import APIError, KeyWrongLastSequenceError

from spiderduck.client.keys import claim_key   # the key rule, defined once (the client's)
from spiderduck.core.errors import BusError

log = logging.getLogger("spiderduck.scheduler")

CLAIM_BUCKET = "spiderduck_url_claims"
WRONG_LAST_SEQUENCE = 10071     # JetStream's error code for a compare-and-set that lost
_DELETED = ("DEL", "PURGE")


class Claim:
    """One held claim, renewed in the background until released."""

    def __init__(self, claims: "Claims", key: str, revision: int, *, fresh: bool = False):
        self._claims = claims
        self.key = key
        self.revision = revision
        # Taken where the bucket held nothing for the key: no one held it or let it go within the
        # bucket's ttl, so no crawl elsewhere can have stored a record since a read made just
        # before (a crawl stores its record before it releases, and a release's marker stays ttl).
        self.fresh = fresh
        self.lost = False
        self._released = False
        self._renewing = asyncio.create_task(self._renew())

    async def _renew(self) -> None:
        every = self._claims.ttl / 3
        while not self._released:
            await asyncio.sleep(every)
            if self._released:
                return
            try:
                self.revision = await self._claims.kv.update(self.key, self._claims.owner, last=self.revision)
            except KeyWrongLastSequenceError:
                self.lost = True
                log.warning("claim %s was taken over: this scheduler stopped renewing it in time", self.key)
                return
            except (NatsError, asyncio.TimeoutError) as exc:
                log.warning("claim %s: renewal failed (%s); trying again", self.key, exc)

    async def release(self) -> None:
        self.stop_renewing()
        await self.delete()

    def stop_renewing(self) -> None:
        """No renewal starts after this returns (one already sent may still be answered)."""
        # The flag, not only the cancel, ends the renewals: a cancel landing as a renewal's reply
        # arrives is lost (Python 3.11's wait_for, inside nats-py's request, returns the reply),
        # and the loop went on renewing while this waited for it: the URL hung, its claim held,
        # its message kept in progress by heartbeats. With the flag, that renewal is the last.
        self._released = True
        self._renewing.cancel()

    async def delete(self) -> None:
        """The key deleted, after stop_renewing: once the last renewal has ended (its revision is
        the one the delete compares), unless the claim was taken over meanwhile."""
        await asyncio.gather(self._renewing, return_exceptions=True)
        if self.lost:
            return
        try:
            await self._claims.kv.delete(self.key, last=self.revision)
        except KeyWrongLastSequenceError:
            pass                # taken over meanwhile: the new holder's now
        except APIError as exc:
            if exc.err_code != WRONG_LAST_SEQUENCE:     # delete() does not map it as update() does
                log.warning("claim %s: release failed (%s); it lapses within claim_ttl", self.key, exc)
        except (NatsError, asyncio.TimeoutError) as exc:
            # Not released: waiters take it over once it goes stale (claim_ttl).
            log.warning("claim %s: release failed (%s); it lapses within claim_ttl", self.key, exc)


class Claims:
    def __init__(self, kv, *, owner: str, ttl: float, clock=time.monotonic):
        self.kv = kv
        self.owner = owner.encode("utf-8")
        self.ttl = ttl
        self._clock = clock

    async def take(self, url: str) -> Claim | None:
        """The URL's claim if nobody holds it (now ours), else None."""
        key = claim_key(url)
        fresh = True
        try:
            try:
                revision = await self.kv.update(key, self.owner, last=0)    # nothing there at all
            except KeyWrongLastSequenceError:
                fresh = False
                revision = await self.kv.create(key, self.owner)   # over a release's marker
        except KeyWrongLastSequenceError:
            return None
        except (NatsError, asyncio.TimeoutError) as exc:
            raise BusError(f"cannot claim {url} in {CLAIM_BUCKET}: {exc}") from exc
        return Claim(self, key, revision, fresh=fresh)

    async def wait(self, url: str) -> Claim | None:
        """Until the URL's holder lets go: None when it released (or its key is gone), a Claim
        when it stopped renewing for claim_ttl and this scheduler took the claim over."""
        key = claim_key(url)
        try:
            watcher = await self.kv.watch(key)
        except (NatsError, asyncio.TimeoutError) as exc:
            raise BusError(f"cannot watch the claim of {url}: {exc}") from exc
        updates: asyncio.Queue = asyncio.Queue()

        async def pump() -> None:
            async for entry in watcher:      # `async for`: see src/spiderduck/fetcher/ownership.py on updates()
                updates.put_nowait(entry)
        pumping = asyncio.create_task(pump())
        try:
            taken = await self._until_released(key, updates)
        except (NatsError, asyncio.TimeoutError) as exc:
            raise BusError(f"cannot wait for the claim of {url}: {exc}") from exc
        finally:
            pumping.cancel()
            await asyncio.gather(pumping, return_exceptions=True)
            try:
                await watcher.stop()
            except (NatsError, asyncio.TimeoutError):
                pass
        # Made after the clean-up: a cancellation there must not leave a claim renewing for ever.
        return None if taken is None else Claim(self, key, taken)

    async def _until_released(self, key: str, updates: asyncio.Queue) -> int | None:
        """None once the key is deleted (or was never there); the revision this scheduler wrote
        when it took over a claim left unrenewed for claim_ttl."""
        revision, seen_at = 0, self._clock()
        while True:
            try:
                async with asyncio.timeout(max(0.0, seen_at + self.ttl - self._clock())):
                    entry = await updates.get()
            except TimeoutError:
                # Unchanged for a whole claim_ttl: its holder stopped renewing. Take it over by
                # compare-and-set; or, when the server has dropped the key already, anew.
                try:
                    return await self.kv.update(key, self.owner, last=revision)
                except KeyWrongLastSequenceError:
                    try:
                        return await self.kv.create(key, self.owner)
                    except KeyWrongLastSequenceError:
                        seen_at = self._clock()      # someone else took it: wait for them
                        continue
            if entry is None:                        # the watch's "no (more) history" marker
                if not revision:
                    return None                      # released before the watch began
                continue
            if entry.operation in _DELETED:
                return None
            revision, seen_at = entry.revision, self._clock()
