"""Operators' domain controls, kept in NATS KV: they outlive restarts and follow ownership.

    DomainControl    one domain's pause (until a wall-clock time, with its reason), halt (until
                     an operator resumes it) and operator rate: the value of one KV entry (JSON)
    ControlStore     the KV bucket `spiderduck_domain_controls`, one key per domain, watched
    DomainControls   what FetcherAdmin calls: a change is written to the bucket first, then
                     applied to Politeness, so an answer means the change outlives a restart

Every fetcher loads the whole bucket at start and then watches it, so Politeness knows the kept
control of every domain: the control is in force as soon as the domain's slot is created (its
first request after a restart, or on a fetcher that has just taken over the domain's shard).
Only the owner of a domain changes its entry (elsewhere FetcherAdmin answers FAILED_PRECONDITION);
a halt after failures is written by the fetcher that saw them. A resume writes the control
without its pause and halt, and deletes the entry when no operator rate is left. A pause is kept
as a wall-clock time, so after a restart it ends when it would have; entries holding nothing any
more (a pause that is over) are deleted at start. Automatic pauses (too many errors over the
window) last `pause_for` and are not kept.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from nats.errors import Error as NatsError
from nats.js.api import KeyValueConfig
from nats.js.errors import BadRequestError, KeyWrongLastSequenceError

from spiderduck.bus import streams as bus

from spiderduck.core import urls
from spiderduck.core.errors import BusError
from spiderduck.core.frozen import evolve

if TYPE_CHECKING:
    from spiderduck.fetcher.politeness import Politeness

log = logging.getLogger("spiderduck.fetcher.controls")

BUCKET = "spiderduck_domain_controls"
OPERATOR_PAUSE = "paused by an operator"
WRONG_LAST_SEQUENCE = 10071      # JetStream's error code when a compare-and-set delete loses
CLOSE_WAIT = 5.0                 # seconds halts being written get at shutdown
LOAD_TIMEOUT = 30.0              # seconds the start may wait for each of the bucket's values (bus.watch_values)


@dataclass(frozen=True)
class DomainControl:
    domain: str
    paused_until: float = 0.0      # epoch seconds; 0 when not paused
    halted: bool = False           # halted until an operator resumes the domain
    reason: str = ""               # why paused or halted
    rate: float | None = None      # requests per second set by an operator
    by: str = ""                   # the fetcher that wrote it
    at: float = 0.0                # when, epoch seconds

    def holds(self, now: float) -> bool:
        """Paused beyond `now`, or halted."""
        return self.halted or self.paused_until > now

    def is_empty(self, now: float) -> bool:
        return not self.holds(now) and self.rate is None

    # --- changes (each validates its argument: ValueError) --------------------------------
    def paused(self, now: float, seconds: float, reason: str = OPERATOR_PAUSE) -> "DomainControl":
        """Paused for `seconds` from `now` (a longer pause already in force is kept)."""
        if not (seconds > 0 and math.isfinite(seconds)):
            raise ValueError(f"a pause must last a positive number of seconds, got {seconds}")
        return evolve(self, paused_until=max(self.paused_until, now + seconds),
                                   reason=reason)

    def resumed(self) -> "DomainControl":
        return evolve(self, paused_until=0.0, halted=False, reason="")

    def rated(self, rate: float) -> "DomainControl":
        if not (rate > 0 and math.isfinite(rate)):
            raise ValueError(f"rate must be a positive number of requests per second, got {rate}")
        return evolve(self, rate=rate)

    def halted_for(self, reason: str) -> "DomainControl":
        return evolve(self, halted=True, reason=reason)

    # --- the KV value ---------------------------------------------------------------------
    def to_json(self) -> bytes:
        return json.dumps(dataclasses.asdict(self), sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes) -> "DomainControl":
        """ValueError when `data` is not a control (unknown fields are ignored)."""
        try:
            d = json.loads(data)
            rate = d.get("rate")
            control = cls(domain=str(d["domain"]), paused_until=float(d.get("paused_until", 0.0)),
                          halted=d.get("halted", False) is True, reason=str(d.get("reason", "")),
                          rate=None if rate is None else float(rate), by=str(d.get("by", "")),
                          at=float(d.get("at", 0.0)))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ValueError(f"not a domain control: {exc!r}") from None
        if control.rate is not None and not (control.rate > 0 and math.isfinite(control.rate)):
            raise ValueError(f"not a domain control: rate {control.rate}")
        return control


def key_of(domain: str) -> str:
    """A domain's KV key: the domain itself; an IPv6 address without brackets, ':' as '_' (a
    registrable domain has no '_', see urls.domain_named)."""
    return domain.strip("[]").replace(":", "_")


def domain_of_key(key: str) -> str:
    return f"[{key.replace('_', ':')}]" if "_" in key else key


def _nameable(domain: str) -> bool:
    """A domain an operator can name (so resume): only those are kept."""
    try:
        return urls.domain_named(domain) == domain
    except urls.InvalidDomain:
        return False


async def open_bucket(js, *, replicas: int = 1):
    """The KV bucket of domain controls. No TTL: a control lasts until an operator lifts it
    (or its pause is over); history 1: only the current control matters."""
    return await bus.kv_bucket(js, KeyValueConfig(
        bucket=BUCKET, history=1, replicas=replicas,
        description="SpiderDuck: operators' pauses, halts and rates by domain"))


OnChange = Callable[[str, "DomainControl | None"], None]   # (domain, control; None when deleted)


class ControlStore:
    """The bucket's entries as DomainControls: load, watch, write.

    The watch skips an entry older than one this store wrote or saw for the same key, so an
    echo of an earlier write never undoes a later one. A rate read above `max_rate`
    (fetcher.max_rate) is held to it, with a warning: anyone who can write the bucket could
    otherwise set what FetcherAdmin refuses."""

    def __init__(self, kv, *, max_rate: float = math.inf):
        self._kv = kv
        self._max_rate = max_rate
        self._revisions: dict[str, int] = {}
        self._watcher = None
        self._task: asyncio.Task | None = None

    async def start(self, on_change: OnChange) -> list[tuple[DomainControl, int]]:
        """What the bucket holds now, as (control, revision); every later change is passed to
        `on_change` as the watch sees it (this store's own writes included)."""
        self._watcher, entries = await bus.watch_values(self._kv, timeout=LOAD_TIMEOUT)
        found = []
        for entry in entries:
            control = self._take(entry)
            if control is not None:
                found.append((control, entry.revision))
        self._task = asyncio.create_task(self._watch(on_change))
        return found

    async def _watch(self, on_change: OnChange) -> None:
        # `async for` (not updates(timeout=...)): see ownership.LeaseKeeper._watch.
        async for entry in self._watcher:
            if entry is None or entry.revision <= self._revisions.get(entry.key, 0):
                continue
            control = self._take(entry)
            deleted = entry.operation in ("DEL", "PURGE") or not entry.value
            if control is not None or deleted:
                try:
                    on_change(domain_of_key(entry.key), control)
                except Exception:
                    log.exception("applying the control of %s failed", entry.key)

    def _take(self, entry) -> DomainControl | None:
        """Note the entry's revision; its control (None when deleted or unreadable)."""
        self._revisions[entry.key] = max(entry.revision, self._revisions.get(entry.key, 0))
        if entry.operation in ("DEL", "PURGE") or not entry.value:
            return None
        try:
            control = DomainControl.from_json(entry.value)
        except ValueError as exc:
            log.warning("KV bucket %s: entry %s skipped: %s", BUCKET, entry.key, exc)
            return None
        if key_of(control.domain) != entry.key:
            log.warning("KV bucket %s: entry %s names %s; skipped", BUCKET, entry.key, control.domain)
            return None
        if control.rate is not None and control.rate > self._max_rate:
            log.warning("KV bucket %s: entry %s sets a rate of %g/s, above fetcher.max_rate; held to %g/s",
                        BUCKET, entry.key, control.rate, self._max_rate)
            control = evolve(control, rate=self._max_rate)
        return control

    async def put(self, control: DomainControl) -> None:
        key = key_of(control.domain)
        try:
            revision = await self._kv.put(key, control.to_json())
        except NatsError as exc:
            raise BusError(f"cannot write {key} in KV bucket {BUCKET}: {exc}") from exc
        self._revisions[key] = max(revision, self._revisions.get(key, 0))

    async def delete(self, domain: str, *, revision: int | None = None) -> bool:
        """Delete the domain's entry; with `revision`, only if nobody wrote it since (False then)."""
        key = key_of(domain)
        try:
            await self._kv.delete(key, last=revision)
        except (KeyWrongLastSequenceError, BadRequestError) as exc:
            if revision is not None and getattr(exc, "err_code", WRONG_LAST_SEQUENCE) == WRONG_LAST_SEQUENCE:
                return False
            raise BusError(f"cannot delete {key} in KV bucket {BUCKET}: {exc}") from exc
        except NatsError as exc:
            raise BusError(f"cannot delete {key} in KV bucket {BUCKET}: {exc}") from exc
        return True

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._watcher is not None:
            try:
                await self._watcher.stop()
            except Exception:
                pass


class DomainControls:
    """One fetcher's operator controls: pause, resume, set-rate; each kept in the store, then
    applied to Politeness. Halts after failures are kept too (written in the background).
    Without a store (tests, debugging) changes are applied and nothing is kept.

    `async with` loads the bucket into Politeness (deleting entries that hold nothing any more)
    and watches it until exit. The methods raise ValueError for a bad duration or rate and
    BusError when NATS could not keep the change; then nothing was applied."""

    def __init__(self, politeness: "Politeness", store: ControlStore | None = None, *,
                 writer: str = "", wall: Callable[[], float] = time.time):
        self._politeness = politeness
        self._store = store
        self._writer = writer
        self._wall = wall
        self._lock = asyncio.Lock()          # one change at a time, so the last write is the state
        self._writes: set[asyncio.Task] = set()

    async def __aenter__(self) -> "DomainControls":
        if self._store is None:
            return self
        now = self._wall()
        kept = 0
        for control, revision in await self._store.start(self._changed):
            if not control.is_empty(now):
                self._politeness.restore(control)
                kept += 1
                continue
            try:
                await self._store.delete(control.domain, revision=revision)
            except BusError as exc:
                log.warning("could not delete the control of %s (its pause is over): %s",
                            control.domain, exc)
        self._politeness.on_halt = self._halted
        log.info("%d domain controls in force from KV bucket %s", kept, BUCKET)
        return self

    async def __aexit__(self, *exc) -> None:
        self._politeness.on_halt = None
        if self._writes:
            await asyncio.wait(self._writes, timeout=CLOSE_WAIT)
        if self._store is not None:
            await self._store.close()

    # --- operators ----------------------------------------------------------------------------
    async def pause(self, domain: str, seconds: float, reason: str = OPERATOR_PAUSE) -> None:
        async with self._lock:
            control = self._politeness.control(domain).paused(self._wall(), seconds, reason)
            self._politeness.restore(await self._keep(control))

    async def resume(self, domain: str) -> None:
        """Lift a pause or a halt (the slot forgets its back-off too); an operator rate stays."""
        async with self._lock:
            await self._keep(self._politeness.control(domain).resumed())
            self._politeness.resume(domain)

    async def set_rate(self, domain: str, rate: float) -> None:
        async with self._lock:
            control = self._politeness.control(domain).rated(rate)
            self._politeness.restore(await self._keep(control))
        log.warning("domain %s rate set to %g/s by an operator", domain, rate)

    # --- keeping ------------------------------------------------------------------------------
    async def _keep(self, control: DomainControl) -> DomainControl:
        """Write `control` (delete the entry when it holds nothing); the control as written."""
        now = self._wall()
        control = evolve(control, by=self._writer, at=now)
        if self._store is not None:
            if control.is_empty(now):
                await self._store.delete(control.domain)
            else:
                await self._store.put(control)
        return control

    def _changed(self, domain: str, control: DomainControl | None) -> None:
        """A write seen on the watch: this fetcher's own, or the domain's owner elsewhere."""
        self._politeness.restore(control or DomainControl(domain))

    def _halted(self, domain: str) -> None:
        """Politeness halted `domain` after failures: keep the halt, in the background."""
        if self._store is None or not _nameable(domain):
            return
        task = asyncio.create_task(self._keep_halt(domain))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _keep_halt(self, domain: str) -> None:
        async with self._lock:
            control = self._politeness.control(domain)
            if not control.halted:            # resumed before its turn came
                return
            try:
                await self._keep(control)
            except BusError as exc:
                log.warning("the halt of %s is not kept (a restart will lift it): %s", domain, exc)
