"""NATS: subjects, streams, and the connection (DESIGN "Data flow")."""
from __future__ import annotations

import asyncio
import logging

from nats.errors import Error as NatsError
from nats.js.api import DiscardPolicy, KeyValueConfig, RetentionPolicy, StreamConfig
from nats.js.errors import BadRequestError, BucketNotFoundError

from spiderduck.bus.claims import CLAIM_BUCKET
from spiderduck.client.errors import NotConfigured
# Defined once, in the client: what a producer and a subscriber must agree on.
from spiderduck.client.names import (DISPUTED_SUBJECT, PROCESSED_SUBJECT, PROTOBUF_CONTENT_TYPE, QUEUE_SUBJECT,
                                     SUBMIT_SUBJECT)
from spiderduck.client.security import NatsOptions, PlaintextServer, abandon, nats_refusal
from spiderduck.core.config import Settings, StreamSettings
from spiderduck.core.errors import BusError, ConfigError, SpiderDuckError
from spiderduck.core.secrets import redact_url

log = logging.getLogger("spiderduck.bus")

URLS_STREAM = "SPIDERDUCK_URLS"
EVENTS_STREAM = "SPIDERDUCK_EVENTS"
EVENTS_SUBJECTS = "spiderduck.events.>"
DEAD_STREAM = "SPIDERDUCK_DEAD"
DEAD_SUBJECT = "spiderduck.urls.dead"
SCHEDULER_DURABLE = "scheduler"
# On the parts of a split submission: when the producer published the original (epoch seconds).
SUBMITTED_AT_HEADER = "SpiderDuck-Submitted-At"
REPLY_TO_HEADER = "SpiderDuck-Reply-To"   # a submission's outcome goes to this subject, not to events
# Where ResolveUrl calls wait for their outcome (<this>.<resolver>.<call>): only the metadata-api
# may read there and only the scheduler publish there (spiderduck.bus.permissions).
REPLIES_PREFIX = "_INBOX_SPIDERDUCK.replies"
LEASE_BUCKET = "spiderduck_fetcher_leases"


def nats_url(settings: Settings) -> str:
    """settings.nats_url; a ConfigError if it is not set.

    Never a default address: a NATS this service was not pointed at (another team's, on the
    usual port) must not get SpiderDuck's streams. (The command fills nats_url in, when it can,
    before the settings reach a role: see src/spiderduck/cli/up_nats.py.)"""
    if settings.nats_url:
        return settings.nats_url
    raise ConfigError("no NATS to use: nats_url is not set; set it "
                      "(--set nats_url=nats://host:4222 or SPIDERDUCK_NATS_URL)")


def servers(url: str) -> list[str]:
    """`nats_url` may list the servers of one cluster, comma-separated."""
    found = [part.strip() for part in url.split(",") if part.strip()]
    if not found:
        raise ConfigError(f"nats_url: bad value {url!r}: no server in it")
    return found


async def connect(url: str, name: str = "spiderduck", *, timeout: float,
                  auth: NatsOptions | None = None, inbox_prefix: str = "_INBOX"):
    """Connect to any of the servers in `url`, with the credentials and TLS of `auth`
    (spiderduck.bus.credentials.nats_options); once connected, reconnect for ever (NATS restarts and
    cluster failovers are ridden out). The first connection is bounded by `timeout` (config
    nats_connect_timeout), so a role pointed at a dead address fails at start with one line
    instead of hanging; a server that refuses the credentials or the TLS handshake fails it at
    once (ConfigError). No message shows a password or token, not even one in `url`.
    `inbox_prefix`: where its replies come (a role's own: spiderduck.bus.permissions.inbox_prefix)."""
    pool = servers(url)
    auth = auth or NatsOptions()
    try:
        options = auth.connect_kwargs()
    except NotConfigured as exc:
        raise ConfigError(str(exc)) from None
    failures: list[Exception] = []
    try:
        async with asyncio.timeout(timeout):
            while True:
                nc = auth.new_client()
                callbacks = _Callbacks(nc, name, failures)
                try:
                    await nc.connect(pool, name=name, connect_timeout=min(5.0, timeout),
                                     max_reconnect_attempts=-1, allow_reconnect=True,
                                     reconnect_time_wait=0.5, error_cb=callbacks.error,
                                     disconnected_cb=callbacks.disconnected,
                                     reconnected_cb=callbacks.reconnected, inbox_prefix=inbox_prefix,
                                     **options)
                    callbacks.connected = True
                    return nc
                except (_Refused, PlaintextServer) as refused:
                    abandon(nc)
                    raise ConfigError(auth.refused(url, str(refused))) from None
                except (NatsError, OSError) as exc:
                    failures.append(exc)
                    await asyncio.sleep(0.5)
    except TimeoutError:
        last = f"{type(failures[-1]).__name__}: {failures[-1]}" if failures else "no answer"
        raise BusError(redact_url(f"cannot connect to NATS at {url} within {timeout:g}s: {last}")) from None


async def unsubscribe(sub) -> None:
    """End a core subscription (None: there is none); a connection already closed ends it too."""
    if sub is not None:
        try:
            await sub.unsubscribe()
        except NatsError:
            pass


class _Refused(SpiderDuckError):
    """Raised by the error callback out of nats-py's first connect(), which would otherwise
    try again for ever: the server refused our credentials or TLS."""


class _Callbacks:
    """nats-py's connection events as one log line each (its default logs a traceback at ERROR
    for every server it fails to reach, so a cluster node down filled the log at each
    reconnect). Before the first connection a failure is only noted (and logged at DEBUG):
    connect() reports the last one if no server answers in time, and a refusal ends it."""

    def __init__(self, nc, name: str, failures: list[Exception]):
        self._nc = nc
        self._name = name
        self._failures = failures
        self.connected = False

    async def error(self, exc: Exception) -> None:
        if not self.connected:
            self._failures.append(exc)
            refused = nats_refusal(exc)
            if refused:
                raise _Refused(refused)
        log.log(logging.WARNING if self.connected else logging.DEBUG, "NATS (%s): %s: %s",
                self._name, type(exc).__name__, redact_url(str(exc)))

    async def disconnected(self) -> None:
        if self.connected and not self._nc.is_closed:
            log.warning("NATS (%s): disconnected; reconnecting", self._name)

    async def reconnected(self) -> None:
        server = self._nc.connected_url
        log.info("NATS (%s): reconnected to %s", self._name,
                 server and f"{server.hostname}:{server.port}")


async def ensure_streams(js, streams: StreamSettings | None = None, *, replicas: int = 1) -> None:
    """Create (or update) the streams SpiderDuck publishes to, with the configured limits."""
    s = streams or StreamSettings()
    wanted = [
        # Work queue: full means new submits are refused (the producer sees it), never that
        # queued URLs are dropped.
        StreamConfig(name=URLS_STREAM, subjects=[SUBMIT_SUBJECT], retention=RetentionPolicy.WORK_QUEUE,
                     max_age=s.urls_max_age or None, max_bytes=s.urls_max_bytes or None,
                     discard=DiscardPolicy.NEW, num_replicas=replicas),
        StreamConfig(name=EVENTS_STREAM, subjects=[EVENTS_SUBJECTS], retention=RetentionPolicy.LIMITS,
                     max_age=s.events_max_age or None, max_bytes=s.events_max_bytes or None,
                     num_replicas=replicas),
        StreamConfig(name=DEAD_STREAM, subjects=[DEAD_SUBJECT], retention=RetentionPolicy.LIMITS,
                     max_age=s.dead_max_age or None, max_bytes=s.dead_max_bytes or None,
                     num_replicas=replicas),
    ]
    for config in wanted:
        try:
            try:
                await js.add_stream(config)
            except BadRequestError:          # it exists: bring it to this config
                await js.update_stream(config)
        except NatsError as exc:
            raise BusError(f"cannot create stream {config.name} (replicas {replicas}): {exc}") from exc


async def lease_bucket(js, ttl: float, *, replicas: int = 1):
    """The KV bucket of shard leases; entries expire `ttl` seconds after their last write."""
    return await kv_bucket(js, KeyValueConfig(bucket=LEASE_BUCKET, ttl=ttl, history=1,
                                              replicas=replicas))


async def claim_bucket(js, ttl: float, *, replicas: int = 1):
    """The KV bucket of URL claims (spiderduck.bus.claims); entries expire `ttl` seconds after their last write."""
    return await kv_bucket(js, KeyValueConfig(bucket=CLAIM_BUCKET, ttl=ttl, history=1, replicas=replicas))


async def kv_bucket(js, config: KeyValueConfig):
    """Open the KV bucket `config` names, creating it as configured. Creating it again with the
    same configuration is a no-op; one made with another configuration (by an older version,
    or by hand) is used as it is."""
    try:
        try:
            return await js.create_key_value(config)
        except BadRequestError as exc:      # there already, configured otherwise: use it
            try:
                return await js.key_value(config.bucket)
            except BucketNotFoundError:
                raise BusError(f"cannot create KV bucket {config.bucket} "
                               f"(replicas {config.replicas}): {exc}") from exc
    except NatsError as exc:
        raise BusError(f"cannot open KV bucket {config.bucket}: {exc}") from exc


async def watch_values(kv, *, timeout: float):
    """(kv.watchall()'s watcher, the bucket's values at the start: each key's last entry, deletes
    included). nats-py can put its end-of-values marker ahead of values already on their way (in
    KeyValue.watch the consumer's pending count is 0 while its callback has not taken them yet:
    seen under load), which would read a bucket as emptier than it is. Where the bucket keeps one
    message a key (history 1) its message count at the start says how many values to wait for
    past the marker, each within `timeout` (a value that expires meanwhile costs that wait once).
    Raises what watcher.updates raises (a TimeoutError when no marker comes within `timeout`)."""
    status = await kv.status()
    expected = status.values if status.history == 1 else 0
    watcher = await kv.watchall()
    found, marked = [], False
    try:
        while not (marked and len(found) >= expected):
            try:
                entry = await watcher.updates(timeout=timeout)
            except asyncio.TimeoutError:
                if not marked:
                    raise
                break               # a value counted at the start is gone (expired): no more come
            if entry is None:
                marked = True
            else:
                found.append(entry)
    except BaseException:
        await watcher.stop()
        raise
    return watcher, found

