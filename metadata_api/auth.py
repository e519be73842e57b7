"""Who may call MetadataService, and how often ResolveUrl: the metadata API's guard.

With `metadata_api.tokens_file` set (lines of `name:token`; blank lines and #comments
skipped), every call needs gRPC metadata `authorization: Bearer <token>`: none, or a token not
in the file, is UNAUTHENTICATED. The file is read again when it changes (a rotated Kubernetes
Secret), looked at most every RELOAD_EVERY seconds; a file that turns unreadable or empty keeps
the tokens last read, and says so in the log. Tokens are compared in constant time, and never
logged or echoed: a refusal names only the caller's token *name* once known.

ResolveUrl starts crawls, so each caller (the token's name; without tokens, the identity of a
verified client certificate) may call it at most `metadata_api.resolve_rate` times a second,
with a burst of as many: past that, RESOURCE_EXHAUSTED (0: no bound). A caller known by neither (plaintext
`up` on loopback) is not bounded here; max_concurrent_resolves still is.
"""
from __future__ import annotations

import hmac
import logging
import os
import time
from typing import Callable

import grpc
import grpc.aio

from common.config import MetadataApiSettings, TlsSettings
from common.errors import ConfigError
from common.grpc_guard import Guard
from common.grpc_tls import caller

log = logging.getLogger("spiderduck.metadata_api")

RELOAD_EVERY = 5.0        # seconds between looks at the tokens file's modification time
MAX_CALLERS = 10_000      # rate buckets kept; past that, the idlest are forgotten
BEARER = "bearer "


def parse_tokens(text: str, path: str) -> dict[str, str]:
    """name -> token from the file's text; ConfigError (with the line number, never a token)."""
    tokens: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, token = line.partition(":")
        name, token = name.strip(), token.strip()
        if not sep or not name or not token:
            raise ConfigError(f"metadata_api.tokens_file: {path} line {number}: expected name:token")
        if name in tokens:
            raise ConfigError(f"metadata_api.tokens_file: {path} line {number}: name {name!r} again")
        tokens[name] = token
    if not tokens:
        raise ConfigError(f"metadata_api.tokens_file: {path} holds no name:token line")
    return tokens


class TokenFile:
    """The tokens of a file, re-read when its modification time changes."""

    def __init__(self, path: str, clock: Callable[[], float] = time.monotonic):
        self.path = path
        self._clock = clock
        self._stamp = self._stat()
        self._tokens = self._read()
        self._looked = clock()

    def _stat(self) -> tuple[float, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_mtime, st.st_size

    def _read(self) -> dict[str, str]:
        try:
            with open(self.path, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise ConfigError(f"metadata_api.tokens_file: cannot read {self.path}: {reason}") from None
        return parse_tokens(text, self.path)

    def _refresh(self) -> None:
        now = self._clock()
        if now - self._looked < RELOAD_EVERY:
            return
        self._looked = now
        stamp = self._stat()
        if stamp == self._stamp:
            return
        self._stamp = stamp
        try:
            self._tokens = self._read()
            log.info("metadata_api.tokens_file %s read again: %d tokens", self.path, len(self._tokens))
        except ConfigError as exc:
            log.warning("%s; keeping the %d tokens read before", exc, len(self._tokens))

    def name_of(self, token: str) -> str | None:
        """The name whose token this is, else None; every token is compared, in constant time."""
        self._refresh()
        found = None
        given = token.encode("utf-8", "surrogatepass")
        for name, known in self._tokens.items():
            if hmac.compare_digest(given, known.encode("utf-8")):
                found = name
        return found


class RateLimit:
    """A token bucket per caller: `rate` calls a second, bursts of max(1, rate)."""

    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic):
        self.rate = rate
        self.burst = max(1.0, rate)
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}    # caller -> (level, at)

    def allow(self, who: str) -> bool:
        now = self._clock()
        level, at = self._buckets.get(who, (self.burst, now))
        level = min(self.burst, level + (now - at) * self.rate)
        if level < 1.0:
            self._buckets[who] = (level, now)
            return False
        self._buckets[who] = (level - 1.0, now)
        if len(self._buckets) > MAX_CALLERS:
            self._forget_idlest()
        return True

    def _forget_idlest(self) -> None:
        for who, _ in sorted(self._buckets.items(), key=lambda item: item[1][1])[:MAX_CALLERS // 10]:
            del self._buckets[who]


def _bearer(context: grpc.aio.ServicerContext) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            return value[len(BEARER):].strip() if value[:len(BEARER)].lower() == BEARER else ""
    return None


def metadata_guard(settings: MetadataApiSettings, tls: TlsSettings) -> Guard | None:
    """The guard of MetadataService for these settings; None when there is nothing to check
    (no tokens file, and no verified client certificates to tell callers apart by)."""
    tokens = TokenFile(settings.tokens_file) if settings.tokens_file else None
    by_certificate = tls.require_client_cert
    if tokens is None and not by_certificate:
        return None
    limit = RateLimit(settings.resolve_rate) if settings.resolve_rate > 0 else None

    async def guard(method: str, context: grpc.aio.ServicerContext) -> None:
        who = caller(context) if by_certificate else None
        if tokens is not None:
            token = _bearer(context)
            if token is None:
                await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                                    "MetadataService needs gRPC metadata authorization: Bearer <token>")
            who = tokens.name_of(token) if token else None
            if who is None:
                await context.abort(grpc.StatusCode.UNAUTHENTICATED, "the bearer token is not known")
        if method == "ResolveUrl" and who is not None and limit is not None and not limit.allow(who):
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                f"caller {who!r} is over metadata_api.resolve_rate "
                                f"({settings.resolve_rate:g} ResolveUrl calls a second)")
    return guard
