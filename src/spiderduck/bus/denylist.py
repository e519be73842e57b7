"""The denylist: forgotten URLs and domains (MetadataService.Forget), kept in the NATS KV bucket
`spiderduck_forgotten`. It survives restarts, every scheduler and metadata API shares it, and each
holds a mirror of it kept current by a watch of the bucket, so a change takes effect everywhere
within DENYLIST_LAG seconds, and a check on the per-URL path is a set lookup, never a NATS call.

One key per entry (KV keys allow [-/_=.A-Za-z0-9] only): `u.<digest>` for a URL, the digest of
its lookup_key form (spiderduck.client.keys.claim_key's), `d.<digest>` for a registrable domain.
Its value is JSON: {"url" or "domain", "reason", "by", "at"}. The bucket keeps one revision of a
key and no TTL, on file storage; a removal purges the key, so no revision of the entry is kept
(only a purge marker, named by the digest). A value that is not such an entry (not JSON, larger
than MAX_ENTRY_BYTES, a wrong type, a key that is not its URL's or domain's) is logged and left
out of the mirror: whoever writes the bucket cannot crash a holder.

The watch is an ordered consumer of the bucket's last values (nats-py's KeyValue.watch). One that
breaks (stopped; its consumer lost: no update arrives while the bucket has moved past the mirror,
at two checks WATCH_CHECK apart; or a NATS error) is logged, made again, and the mirror reloaded
from it."""
from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import time
from typing import Iterable

from nats.errors import Error as NatsError
from nats.errors import TimeoutError as NatsTimeout
from nats.js.api import Header, KeyValueConfig, StorageType
from nats.js.kv import KV_DEL, KV_OP, KV_PURGE, MSG_ROLLUP_SUBJECT, KeyValue

from spiderduck.bus.streams import kv_bucket, watch_values
from spiderduck.client.keys import claim_key
from spiderduck.core import urls as urllib
from spiderduck.core.errors import BusError

log = logging.getLogger("spiderduck.bus.denylist")
KeyWatcher = KeyValue.KeyWatcher

BUCKET = "spiderduck_forgotten"
DENYLIST_LAG = 2.0          # seconds: a change is seen by every holder within this
MAX_ENTRY_BYTES = 16_384    # an entry's JSON value: larger is refused by the bucket, skipped if found
# Seconds without an update after which the watch is checked against the bucket (one stream-info
# request): found behind twice running, it is broken, so a change is seen within DENYLIST_LAG even
# when the watch's consumer is lost (a NATS server restarted), not after nats-py's own reset (~20 s).
WATCH_CHECK = DENYLIST_LAG / 4
LOAD_TIMEOUT = 5 * DENYLIST_LAG   # seconds the first reading of a watch may wait for an update
RETRY_MAX = 5 * DENYLIST_LAG      # seconds between attempts to watch again, at most (doubling)
_SCHEMES = ("https://", "http://")


@dataclasses.dataclass(frozen=True)
class Entry:
    url: str = ""           # a forgotten URL (spiderduck.core.urls.lookup_key form), or "" for a domain
    domain: str = ""        # a forgotten registrable domain, or "" for a URL
    reason: str = ""
    by: str = ""            # who forgot it, as the audit log names the caller
    at: float = 0.0         # epoch seconds


def domain_of(url: str) -> str:
    """The registrable domain of a URL in lookup form, "" when it has none (not an http(s) URL).
    Read off the canonical spelling (scheme://host[:port]/...) without parsing it again."""
    scheme = next((s for s in _SCHEMES if url.startswith(s)), None)
    if scheme is None:
        return ""
    authority = url[len(scheme):].partition("/")[0]
    host = authority[: authority.find("]") + 1] if authority.startswith("[") else authority.partition(":")[0]
    try:
        return urllib.registrable_domain(host) if host else ""
    except urllib.InvalidUrl:
        return ""


def key_of(entry: Entry) -> str:
    """The entry's key in the bucket."""
    return claim_key(entry.url) if entry.url else "d" + claim_key(entry.domain)[1:]


def encode(entry: Entry) -> bytes:
    body = {"url": entry.url} if entry.url else {"domain": entry.domain}
    return json.dumps({**body, "reason": entry.reason, "by": entry.by, "at": entry.at}).encode()


def decode(key: str, value: bytes) -> Entry:
    """The entry stored under `key`; ValueError saying why when `value` is not one."""
    if len(value) > MAX_ENTRY_BYTES:
        raise ValueError(f"{len(value)} bytes, more than {MAX_ENTRY_BYTES}")
    try:
        body = json.loads(value)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(body, dict):
        raise ValueError("not a JSON object")
    texts = {name: body.get(name, "") for name in ("url", "domain", "reason", "by")}
    at = body.get("at", 0.0)
    if not all(isinstance(text, str) for text in texts.values()):
        raise ValueError("url, domain, reason and by must be strings")
    if isinstance(at, bool) or not isinstance(at, (int, float)) or not math.isfinite(at):
        raise ValueError("at must be a number")
    if bool(texts["url"]) == bool(texts["domain"]):
        raise ValueError("an entry names one URL or one domain")
    entry = Entry(**texts, at=float(at))
    if key_of(entry) != key:
        raise ValueError("the key is not its URL's or domain's")
    return entry


async def bucket(js, *, replicas: int = 1):
    """The denylist's KV bucket, made if missing: one revision a key, no TTL, on file."""
    return await kv_bucket(js, KeyValueConfig(bucket=BUCKET, history=1, replicas=replicas,
                                              storage=StorageType.FILE, max_value_size=MAX_ENTRY_BYTES))


class Denylist:
    """The mirror. Built from entries it is an offline list (tests, `spiderduck extract`);
    Denylist.open(js) binds it to the bucket and keeps it current until close()."""

    def __init__(self, entries: Iterable[Entry] = ()):
        self._held: dict[str, tuple[int, Entry]] = {}     # key -> (revision, entry)
        self._urls: set[str] = set()
        self._domains: set[str] = set()
        self._floor: dict[str, int] = {}     # key -> revision of this holder's own last change of it
        self._js = self._kv = None
        self._task: asyncio.Task | None = None
        self._watcher = None                 # the watch of the bucket in use
        self._closing = False
        self._revision = 0                   # the newest revision of the bucket the mirror has seen
        for entry in entries:
            self._hold(key_of(entry), 0, entry)

    @classmethod
    async def open(cls, js, *, replicas: int = 1) -> "Denylist":
        """The bucket's list (the bucket made if missing), watched until close(). Raises
        BusError when the bucket cannot be opened or read."""
        denylist = cls()
        denylist._js, denylist._kv = js, await bucket(js, replicas=replicas)
        await denylist._watch()
        denylist._task = asyncio.create_task(denylist._follow(), name="denylist-watch")
        return denylist

    def forgotten(self, url: str, *, canonical: bool = False) -> bool:
        """Whether `url`, or its host's registrable domain, is on the list. `canonical`: the URL
        is already in lookup_key form (the scheduler's), so it is not canonicalized again.
        An empty list answers at once; otherwise a set lookup or two (the domain's is cached)."""
        if not self._held:
            return False
        key = url if canonical else urllib.lookup_key(url)
        return key in self._urls or (bool(self._domains) and domain_of(key) in self._domains)

    def entries(self) -> list[Entry]:
        """Every entry, oldest first."""
        return [entry for _, entry in sorted(self._held.values(), key=lambda held: (held[1].at, held[0]))]

    async def add(self, urls: Iterable[str], domain: str = "", *, reason: str = "", by: str = "") -> list[Entry]:
        """Put the URLs (lookup_key forms) and the domain on the list; returns the entries written.
        The local mirror has them when this returns. A domain is named as
        spiderduck.core.urls.domain_named takes it (InvalidDomain otherwise) and listed as its
        registrable domain. Raises BusError when the bucket cannot be written."""
        at = time.time()
        wanted = [Entry(url=urllib.lookup_key(u), reason=reason, by=by, at=at) for u in dict.fromkeys(urls) if u.strip()]
        if domain:
            wanted.append(Entry(domain=urllib.domain_named(domain), reason=reason, by=by, at=at))
        kv = self._bound()
        written = []
        for entry in wanted:
            key = key_of(entry)
            try:
                revision = await kv.put(key, encode(entry))
            except (NatsError, asyncio.TimeoutError) as exc:
                raise BusError(f"cannot write {key} to {BUCKET}: {exc}") from exc
            self._floor[key] = revision
            self._hold(key, revision, entry)
            written.append(entry)
        return written

    async def remove(self, urls: Iterable[str] = (), domain: str = "") -> int:
        """Take the URLs and the domain off the list; returns how many entries went (those the
        mirror held). Each key is purged, so the bucket keeps no revision of it."""
        keys = [key_of(Entry(url=urllib.lookup_key(u))) for u in dict.fromkeys(urls) if u.strip()]
        if domain:
            keys.append(key_of(Entry(domain=urllib.domain_named(domain))))
        self._bound()
        gone = 0
        for key in keys:
            try:      # KeyValue.purge, keeping the revision of its marker
                ack = await self._js.publish(f"$KV.{BUCKET}.{key}", headers={
                    KV_OP: KV_PURGE, Header.ROLLUP: MSG_ROLLUP_SUBJECT})
            except (NatsError, asyncio.TimeoutError) as exc:
                raise BusError(f"cannot purge {key} from {BUCKET}: {exc}") from exc
            self._floor[key] = ack.seq
            self._revision = max(self._revision, ack.seq)
            gone += self._drop(key)
        return gone

    async def close(self) -> None:
        """Stop watching. The watch is stopped before its task is cancelled: a cancellation that
        asyncio.wait_for swallows (Python < 3.12, an update arriving at that moment) still ends it."""
        self._closing = True
        if self._task is not None:
            await _stop(self._watcher)
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def _bound(self):
        if self._kv is None:
            raise BusError("an offline denylist: open it on NATS (Denylist.open) to change it")
        return self._kv

    def _hold(self, key: str, revision: int, entry: Entry) -> None:
        self._drop(key)
        self._held[key] = (revision, entry)
        (self._urls if entry.url else self._domains).add(entry.url or entry.domain)
        self._revision = max(self._revision, revision)

    def _drop(self, key: str) -> int:
        held = self._held.pop(key, None)
        if held is None:
            return 0
        _, entry = held
        (self._urls if entry.url else self._domains).discard(entry.url or entry.domain)
        return 1

    def _apply(self, update) -> None:
        """One update of the watch: a value held (or skipped, logged, when it is not an entry),
        a delete or a purge dropped. One older than this holder's own last change of its key
        (a watch lagging behind add or remove) changes nothing."""
        self._revision = max(self._revision, update.revision)
        if update.revision < self._floor.get(update.key, 0):
            return
        if update.operation in (KV_DEL, KV_PURGE):
            self._drop(update.key)
            return
        try:
            entry = decode(update.key, update.value or b"")
        except ValueError as exc:
            self._drop(update.key)
            log.warning("denylist: skipped %s (revision %d) of %s: %s", update.key, update.revision, BUCKET, exc)
            return
        self._hold(update.key, update.revision, entry)

    async def _watch(self):
        """A new watch of the bucket, the mirror reloaded from its first updates (the bucket's
        last values). Raises BusError."""
        watcher = None
        try:
            watcher, updates = await watch_values(self._kv, timeout=LOAD_TIMEOUT)
            current = Denylist()
            current._floor = self._floor
            for update in updates:
                current._apply(update)
        except (NatsError, asyncio.TimeoutError) as exc:
            if watcher is not None:
                await _stop(watcher)
            raise BusError(f"cannot read the denylist {BUCKET}: {type(exc).__name__}: {exc}") from exc
        self._held, self._urls, self._domains = current._held, current._urls, current._domains
        self._revision = max(self._revision, current._revision)
        self._watcher = watcher

    async def _follow(self) -> None:
        """Apply the watch's updates until cancelled; a watch that breaks is made again."""
        retry = DENYLIST_LAG / 4
        while not self._closing:
            try:
                await self._updates(self._watcher)
            except (NatsError, asyncio.TimeoutError, BusError) as exc:
                if self._closing:
                    return
                log.warning("denylist: the watch of %s broke (%s: %s); watching it again",
                            BUCKET, type(exc).__name__, exc)
            finally:
                await _stop(self._watcher)
            while True:
                try:
                    await self._watch()
                    log.info("denylist: watching %s again, %d entries", BUCKET, len(self._held))
                    break
                except BusError as exc:
                    log.warning("denylist: %s; trying again in %gs", exc, retry)
                    await asyncio.sleep(retry)
                    retry = min(retry * 2, RETRY_MAX)
            retry = DENYLIST_LAG / 4

    async def _updates(self, watcher) -> None:
        """Apply updates until the watch is found broken: quiet for two checks while the
        bucket has moved past the mirror."""
        behind = False
        while True:
            try:
                update = await watcher.updates(timeout=WATCH_CHECK)
            except NatsTimeout:
                last = (await self._kv.status()).stream_info.state.last_seq
                if last > self._revision and behind:
                    raise BusError(f"no update for {2 * WATCH_CHECK:g}s while the bucket is at "
                                   f"revision {last} and the mirror at {self._revision}")
                behind = last > self._revision
                continue
            behind = False
            if update is KeyWatcher.STOP_ITER:
                raise BusError("the watch stopped")
            if update is not None:
                self._apply(update)


async def _stop(watcher) -> None:
    try:
        await watcher.stop()
    except (NatsError, asyncio.TimeoutError):
        pass
