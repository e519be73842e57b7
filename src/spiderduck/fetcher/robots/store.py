"""The shared level of the robots.txt cache: opaque verdict payloads by origin, in memcached.

    SharedRobotsStore            get(origin) -> bytes | None ; set(origin, payload, ttl) ; close()
     └── MemcachedRobotsStore    pymemcache (sync) on a small dedicated thread pool

The store is an optimisation, never a dependency: every memcached failure
(refused, timeout, server gone mid-run, an error reply) is a miss or a skipped
write, logged at most once per `log_every` seconds, and never raised. After a
network failure the store stays quiet for `retry_after` seconds (every call a
miss at once), so a dead or black-holed memcached costs the fetch path nothing.

Keys follow memcached's rules (at most 250 bytes, no spaces or control
characters): `spiderduck:robots:v1:` + sha1 of the origin.

`memcacheds://host:port[?ca=PATH]` is memcached over TLS (a memcached 1.6 started with
`-Z -o ssl_chain_cert=...,ssl_key=...`): the server's certificate must chain to `ca` (a PEM
bundle; without it, the system's trusted CAs) and name `host`. A server that fails the
handshake (another CA, no TLS at all) is handled as any other failure: a miss, logged.
"""
from __future__ import annotations

import abc
import asyncio
import hashlib
import logging
import math
import time
from concurrent.futures import ThreadPoolExecutor
from ssl import SSLContext, SSLError
from typing import Any, Callable
from urllib.parse import parse_qsl, urlsplit

from pymemcache.client.base import PooledClient
from pymemcache.exceptions import MemcacheError, MemcacheUnexpectedCloseError

from spiderduck.core.errors import ConfigError
from spiderduck.core.secrets import redact_url
from spiderduck.stores import tls

__all__ = ["SharedRobotsStore", "MemcachedRobotsStore", "open_robots_store", "key_for"]

log = logging.getLogger("spiderduck.fetcher.robots")

KEY_PREFIX = "spiderduck:robots:v1:"
DEFAULT_PORT = 11211
OPTIONS = {"memcached": set(), "memcacheds": {"ca"}}     # scheme -> its URL options
MAX_TTL = 30 * 86_400   # memcached reads a larger expiry as an absolute Unix time


def key_for(origin: str) -> str:
    """The memcached key of an origin: short, ASCII, no spaces, whatever the origin holds."""
    return KEY_PREFIX + hashlib.sha1(origin.encode("utf-8", "surrogatepass")).hexdigest()


class SharedRobotsStore(abc.ABC):
    """Verdict payloads shared by all fetchers. Implementations never raise from get or set."""

    @abc.abstractmethod
    async def get(self, origin: str) -> bytes | None:
        """The payload stored for `origin`, or None (absent, expired, or the store is down)."""

    @abc.abstractmethod
    async def set(self, origin: str, payload: bytes, ttl: float) -> None:
        """Store `payload` for `ttl` seconds; a failure is logged and the write skipped."""

    async def close(self) -> None:
        """Release connections and threads."""


class MemcachedRobotsStore(SharedRobotsStore):
    def __init__(self, host: str, port: int = DEFAULT_PORT, *, timeout: float,
                 workers: int = 4, retry_after: float = 5.0, log_every: float = 60.0,
                 clock: Callable[[], float] = time.monotonic,
                 tls_context: SSLContext | None = None):
        self.address = f"{host}:{port}"
        self._client = PooledClient((host, port), connect_timeout=timeout, timeout=timeout,
                                    no_delay=True, max_pool_size=workers, tls_context=tls_context)
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="robots-memcached")
        self._retry_after = retry_after
        self._log_every = log_every
        self._clock = clock
        self._down_until = 0.0       # no calls before this (monotonic) time
        self._failing = False        # the last call failed; the next success is logged
        self._last_report = -math.inf
        self._unreported = 0         # failures since the last log line
        self._closed = False
        self.errors = 0

    async def get(self, origin: str) -> bytes | None:
        value = await self._call(self._client.get, key_for(origin))
        return value if isinstance(value, bytes) else None

    async def set(self, origin: str, payload: bytes, ttl: float) -> None:
        expire = min(MAX_TTL, max(1, math.ceil(ttl)))
        await self._call(self._client.set, key_for(origin), payload, expire=expire, noreply=False)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await asyncio.get_running_loop().run_in_executor(self._executor, self._client.close)
        except Exception:   # closing is best effort
            pass
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if self._closed or self._clock() < self._down_until:
            return None
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(self._executor, lambda: fn(*args, **kwargs))
        except (OSError, MemcacheUnexpectedCloseError) as exc:   # refused, timeout, reset, closed
            self._down_until = self._clock() + self._retry_after
            what = "failed the TLS handshake" if isinstance(exc, SSLError) else "unreachable"
            self._failed(exc, f"{what}; retrying in {self._retry_after:g}s")
            return None
        except (MemcacheError, RuntimeError, ValueError) as exc:  # error reply, pool or executor closed
            self._failed(exc, "answered with an error")
            return None
        if self._failing:
            self._failing = False
            log.info("robots.txt memcached %s is back", self.address)
        return result

    def _failed(self, exc: BaseException, what: str) -> None:
        self.errors += 1
        self._unreported += 1
        self._failing = True
        now = self._clock()
        if now - self._last_report < self._log_every:
            return
        log.warning("robots.txt memcached %s %s (%s: %s; %d failure(s) since the last report); "
                    "going on with the in-process cache",
                    self.address, what, type(exc).__name__, exc, self._unreported)
        self._last_report = now
        self._unreported = 0


def open_robots_store(url: str, *, timeout: float) -> SharedRobotsStore | None:
    """The store for `Settings.robots_cache`: None for "" (in-process only),
    memcached://host:port, or memcacheds://host:port[?ca=PATH] (TLS). `timeout`:
    fetcher.robots_store_timeout, per memcached call."""
    if not url:
        return None
    shown = redact_url(url)
    parts = urlsplit(url)
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError as exc:
        raise ConfigError(f"robots_cache: bad port in {shown!r}") from exc
    if parts.scheme not in OPTIONS or not parts.hostname or parts.path not in ("", "/"):
        raise ConfigError("robots_cache: expected memcached://host:port, "
                          f"memcacheds://host:port?ca=PATH or empty, got {shown!r}")
    options = dict(parse_qsl(parts.query, keep_blank_values=True))
    unknown = set(options) - OPTIONS[parts.scheme]
    if unknown:
        raise ConfigError(f"robots_cache: {shown!r}: unknown option(s) "
                          f"{', '.join(sorted(unknown))}")
    context = None
    if parts.scheme == "memcacheds":
        context = tls.client_context("robots_cache", ca=options.get("ca", ""))
    log.info("robots.txt verdicts shared through memcached %s:%d%s", parts.hostname, port,
             " over TLS" if context else "")
    return MemcachedRobotsStore(parts.hostname, port, timeout=timeout, tls_context=context)

